"""The compute side of shelve, shelveOffload and unshelve (RPC 1.4).

shelve_instance: power the guest off -> SHELVED; with [compute]
shelved_offload_time = 0 go straight on to the offload (task_state
shelving_offloading, as Nova).
shelve_offload_instance: remove the guest, drop the allocation in this
host's provider tree (only there: a claim elsewhere is not ours), then
one compare-and-swap gives the host up -> SHELVED_OFFLOADED. The
allocation goes first, while the task_state still bars an unshelve, so
no new claim can be dropped by mistake.
unshelve_instance: spawn (or power on, when still SHELVED here) ->
ACTIVE. A failed spawn of an offloaded server drops its new claim and
puts it back to SHELVED_OFFLOADED with no host, with a fault.
Every write goes through the conductor, guarded by the task_state the
API (or the conductor's UnshelveTask) set.
"""
import oslo_messaging as messaging

from nova_moves.compute import base
from nova_moves.compute import rpcapi as compute_rpcapi
from nova_moves import conf
from nova_moves import instance_actions
from nova_moves import notifications
from nova_moves import states

CONF = conf.CONF
wrap_instance_event = instance_actions.wrap_instance_event
notify_action = notifications.notify_action


class ShelveEndpoint(base.Steps):
    target = messaging.Target(version=compute_rpcapi.ComputeAPI.VERSION)

    @wrap_instance_event('compute')
    @notify_action('shelve')
    def shelve_instance(self, ctxt, instance_uuid):
        if not self._still_claimed(ctxt, instance_uuid, states.SHELVING):
            return
        try:
            self.driver.set_power(instance_uuid, 'shutdown', 'shelve')
        except Exception as exc:
            self._give_back(ctxt, instance_uuid, [states.SHELVING], exc)
            raise
        offload = CONF.compute.shelved_offload_time == 0
        if self._claim_cas(ctxt, instance_uuid, {
                'vm_state': states.SHELVED,
                'task_state': states.SHELVING_OFFLOADING if offload
                else None,
                'power_state': states.POWER_SHUTDOWN},
                [states.SHELVING]) is None or not offload:
            return
        self._offload(ctxt, instance_uuid)

    @wrap_instance_event('compute')
    @notify_action('shelve_offload')
    def shelve_offload_instance(self, ctxt, instance_uuid):
        if self._still_claimed(ctxt, instance_uuid,
                               states.SHELVING_OFFLOADING):
            self._offload(ctxt, instance_uuid)

    def _offload(self, ctxt, instance_uuid):
        try:
            self.driver.destroy(instance_uuid, operation='shelve_offload')
        except Exception as exc:
            self._give_back(ctxt, instance_uuid,
                            [states.SHELVING_OFFLOADING], exc)
            raise
        self.conductor.allocations_delete(ctxt, instance_uuid,
                                          root_host=self.host)
        self._claim_cas(ctxt, instance_uuid, {
            'vm_state': states.SHELVED_OFFLOADED, 'task_state': None,
            'host': None, 'node': None,
            'power_state': states.POWER_SHUTDOWN},
            [states.SHELVING_OFFLOADING])

    @wrap_instance_event('compute')
    @notify_action('unshelve')
    def unshelve_instance(self, ctxt, instance_uuid):
        instance = self._instance(ctxt, instance_uuid)
        if instance['task_state'] != states.UNSHELVING or \
                instance['host'] != self.host:
            return  # stale: reset, deleted, or placed elsewhere since
        offloaded = instance['vm_state'] == states.SHELVED_OFFLOADED
        try:
            if offloaded or not self.driver.has_guest(instance_uuid):
                self.driver.spawn(instance_uuid, instance['flavor'],
                                  operation='unshelve',
                                  image_ref=instance.get('image_ref'))
            else:
                self.driver.set_power(instance_uuid, 'running', 'unshelve')
        except Exception as exc:
            if offloaded:
                self._fault(ctxt, instance_uuid, exc)
                self.conductor.allocations_delete(ctxt, instance_uuid,
                                                  root_host=self.host)
                self._claim_cas(ctxt, instance_uuid, {
                    'task_state': None, 'host': None, 'node': None},
                    [states.UNSHELVING])
            else:
                self._give_back(ctxt, instance_uuid, [states.UNSHELVING],
                                exc)
            raise
        self._claim_cas(ctxt, instance_uuid, {
            'vm_state': states.ACTIVE, 'task_state': None,
            'power_state': states.POWER_RUNNING}, [states.UNSHELVING])
