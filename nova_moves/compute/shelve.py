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
API (or the conductor's UnshelveTask) set: the rows of the lifecycle
table (nova_moves/moves/lifecycle.py), checked before the guest is
touched.
"""
import oslo_messaging as messaging

from nova_moves.compute import lifecycle
from nova_moves.compute import rpcapi as compute_rpcapi
from nova_moves import instance_actions
from nova_moves.moves import lifecycle as lc_table
from nova_moves import notifications
from nova_moves import states

wrap_instance_event = instance_actions.wrap_instance_event
notify_action = notifications.notify_action


class ShelveEndpoint(lifecycle.Guarded):
    """Shelve's rows of the lifecycle table, run as lifecycle.py runs
    its own (the guard before the guest)."""
    target = messaging.Target(version=compute_rpcapi.ComputeAPI.VERSION)

    @wrap_instance_event('compute')
    @notify_action('shelve')
    def shelve_instance(self, ctxt, instance_uuid):
        self._shelve(ctxt, instance_uuid)

    def _shelve(self, ctxt, instance_uuid):
        instance = self._guarded(ctxt, instance_uuid, 'shelve',
                                 self._set_power('shelve'))
        if instance is not None and instance['task_state'] == \
                lc_table.row('shelveOffload').task:
            # [compute] shelved_offload_time = 0: straight on (Nova's).
            return self._offload(ctxt, instance_uuid)
        return instance

    @wrap_instance_event('compute')
    @notify_action('shelve_offload')
    def shelve_offload_instance(self, ctxt, instance_uuid):
        self._offload(ctxt, instance_uuid)

    def _offload(self, ctxt, instance_uuid):
        def act(instance):
            self.driver.destroy(instance_uuid, operation='shelve_offload')
            # Before the host is given up, while the task_state still
            # bars an unshelve: no new claim can be dropped by mistake.
            self.conductor.allocations_delete(ctxt, instance_uuid,
                                              root_host=self.host)
        return self._guarded(ctxt, instance_uuid, 'shelveOffload', act)

    @wrap_instance_event('compute')
    @notify_action('unshelve')
    def unshelve_instance(self, ctxt, instance_uuid):
        self._unshelve(ctxt, instance_uuid)

    def _unshelve(self, ctxt, instance_uuid):
        def act(instance):
            if instance['vm_state'] == states.SHELVED_OFFLOADED or \
                    not self.driver.has_guest(instance_uuid):
                self.driver.spawn(instance_uuid, instance['flavor'],
                                  operation='unshelve',
                                  image_ref=instance.get('image_ref'))
            else:
                self.driver.set_power(instance_uuid, 'running', 'unshelve')
            return 'running'

        def failed(instance, task, exc):
            self._fault(ctxt, instance_uuid, exc)
            if instance['vm_state'] != states.SHELVED_OFFLOADED:
                self._claim_cas(ctxt, instance_uuid, lc_table.failed_values(
                    'unshelve'), [task])
                return
            # Placed here by the conductor: the claim goes, the server is
            # offloaded again with no host.
            self.driver.destroy(instance_uuid, operation='unshelve_undo')
            self.conductor.allocations_delete(ctxt, instance_uuid,
                                              root_host=self.host)
            self._claim_cas(ctxt, instance_uuid, lc_table.UNSHELVE_UNDO,
                            [task])
        return self._guarded(ctxt, instance_uuid, 'unshelve', act, failed)
