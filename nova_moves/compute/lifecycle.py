"""The compute side of a server's life on its own host: boot, delete,
os-start/os-stop (1.2), and the lifecycle actions (RPC 1.4): pause,
unpause, suspend, resume, reboot and rebuild.

The API claimed the server (task_state set by compare-and-swap) and
recorded the action; each handler drives the fake hypervisor and
finishes that claim with one more compare-and-swap through the conductor
(computes never open the database). A message whose claim is gone (a
hard reboot took over, os-resetState cleared it, the server was
deleted) finds its expected task_state missing: nothing is written and
the guest is left to whoever took over. A hypervisor failure gives the
task_state back and leaves vm_state as it was (Nova's
reverts_task_state), with a fault and the event's Error.
"""
from oslo_log import log as logging
import oslo_messaging as messaging

from nova_moves.compute import base
from nova_moves.compute import rpcapi as compute_rpcapi

from nova_moves import exception
from nova_moves import instance_actions
from nova_moves import notifications
from nova_moves import states
from nova_moves import timeutil

LOG = logging.getLogger(__name__)
wrap_instance_event = instance_actions.wrap_instance_event
notify_action = notifications.notify_action

# handler -> (task_state the API set, guest powers it may start from,
#             guest power after, hypervisor operation, vm_state after,
#             power_state after)
_SIMPLE = {
    'pause': (states.PAUSING, ('running',), 'paused', 'pause',
              states.PAUSED, states.POWER_PAUSED),
    'unpause': (states.UNPAUSING, ('paused',), 'running', 'unpause',
                states.ACTIVE, states.POWER_RUNNING),
    'suspend': (states.SUSPENDING, ('running',), 'suspended', 'suspend',
                states.SUSPENDED, states.POWER_SUSPENDED),
    'resume': (states.RESUMING, ('suspended',), 'running', 'resume',
               states.ACTIVE, states.POWER_RUNNING),
}


class LifecycleEndpoint(base.Steps):
    """Boot, delete, start/stop and the lifecycle actions of 1.4."""
    target = messaging.Target(version=compute_rpcapi.ComputeAPI.VERSION)

    # -- boot and delete ------------------------------------------------------
    @wrap_instance_event('compute')
    @notify_action('create')
    def build_and_run_instance(self, ctxt, instance_uuid, request_spec,
                               alternates):
        try:
            instance = self._instance(ctxt, instance_uuid)
        except exception.InstanceNotFound:
            instance = None
        if instance is None or instance['task_state'] != states.SPAWNING:
            LOG.info('Not building %s: deleted meanwhile', instance_uuid)
            return
        try:
            self.driver.spawn(instance_uuid, instance['flavor'],
                              image_ref=instance.get('image_ref'))
        except Exception as exc:
            LOG.warning('Spawn of %s failed on %s: %s', instance_uuid,
                        self.host, exc)
            self._reschedule_build(ctxt, instance_uuid, request_spec,
                                   alternates, exc)
            raise
        try:
            self._update(ctxt, instance_uuid,
                         {'vm_state': states.ACTIVE, 'task_state': None,
                          'power_state': states.POWER_RUNNING,
                          'launched_at': timeutil.utcnow_iso()},
                         expected_task_state=[states.SPAWNING])
        except (exception.InstanceNotFound, exception.UnexpectedTaskState):
            # Deleted while spawning: its terminate may have run before
            # the guest existed, so the copy is removed here.
            LOG.info('%s was deleted while spawning; removing it',
                     instance_uuid)
            self.driver.destroy(instance_uuid)

    def _reschedule_build(self, ctxt, instance_uuid, request_spec,
                          alternates, exc):
        self.conductor.allocations_delete(ctxt, instance_uuid)
        if alternates:
            self._update(ctxt, instance_uuid,
                         {'task_state': states.SCHEDULING, 'host': None,
                          'node': None})
            spec = dict(request_spec, alternates=alternates)
            self.compute_task_api.build_instances(ctxt, [instance_uuid], spec)
            return
        # The fault first: whoever sees ERROR must also see why.
        self._fault(ctxt, instance_uuid, exc)
        self._update(ctxt, instance_uuid,
                     {'vm_state': states.ERROR, 'task_state': None})

    @wrap_instance_event('compute')
    def terminate_instance(self, ctxt, instance_uuid):
        self.driver.destroy(instance_uuid)

    # -- os-start / os-stop (1.2) --------------------------------------------
    @wrap_instance_event('compute')
    @notify_action('power_on')
    def start_instance(self, ctxt, instance_uuid):
        self._set_power(ctxt, instance_uuid, states.POWERING_ON, 'running',
                        'power_on', states.ACTIVE, states.POWER_RUNNING)

    @wrap_instance_event('compute')
    @notify_action('power_off')
    def stop_instance(self, ctxt, instance_uuid):
        self._set_power(ctxt, instance_uuid, states.POWERING_OFF, 'shutdown',
                        'power_off', states.STOPPED, states.POWER_SHUTDOWN)

    def _set_power(self, ctxt, instance_uuid, task_state, power, operation,
                   vm_state, power_state):
        """The API set ``task_state``; only that claim is finished here.
        A failure gives the task_state back (the server stays as it was,
        as Nova's reverts_task_state does) and re-raises for the event."""
        try:
            self.driver.set_power(instance_uuid, power, operation)
        except Exception:
            self._update(ctxt, instance_uuid, {'task_state': None},
                         expected_task_state=[task_state])
            raise
        self._update(ctxt, instance_uuid,
                     {'vm_state': vm_state, 'task_state': None,
                      'power_state': power_state},
                     expected_task_state=[task_state])

    # -- pause, unpause, suspend, resume, reboot, rebuild (1.4) ------------
    def _simple(self, ctxt, instance_uuid, name):
        task_state, require, power, operation, vm_state, power_state = \
            _SIMPLE[name]
        if not self._still_claimed(ctxt, instance_uuid, task_state):
            return
        try:
            self.driver.set_power(instance_uuid, power, operation,
                                  require=require)
        except Exception as exc:
            self._give_back(ctxt, instance_uuid, [task_state], exc)
            raise
        # None: someone took the server over meanwhile (a hard reboot, a
        # reset): the guest follows them, not this message.
        self._claim_cas(ctxt, instance_uuid, {
            'vm_state': vm_state, 'task_state': None,
            'power_state': power_state}, [task_state])

    @wrap_instance_event('compute')
    @notify_action('pause')
    def pause_instance(self, ctxt, instance_uuid):
        self._simple(ctxt, instance_uuid, 'pause')

    @wrap_instance_event('compute')
    @notify_action('unpause')
    def unpause_instance(self, ctxt, instance_uuid):
        self._simple(ctxt, instance_uuid, 'unpause')

    @wrap_instance_event('compute')
    @notify_action('suspend')
    def suspend_instance(self, ctxt, instance_uuid):
        self._simple(ctxt, instance_uuid, 'suspend')

    @wrap_instance_event('compute')
    @notify_action('resume')
    def resume_instance(self, ctxt, instance_uuid):
        self._simple(ctxt, instance_uuid, 'resume')

    @wrap_instance_event('compute')
    @notify_action('reboot')
    def reboot_instance(self, ctxt, instance_uuid, reboot_type):
        """SOFT: rebooting -> reboot_started -> ACTIVE; HARD:
        rebooting_hard -> reboot_started_hard -> ACTIVE (from any vm_state
        the API let through: a hard reboot powers the guest on)."""
        hard = reboot_type == 'HARD'
        claimed = states.REBOOTING_HARD if hard else states.REBOOTING
        started = (states.REBOOT_STARTED_HARD if hard
                   else states.REBOOT_STARTED)
        instance = self._claim_cas(ctxt, instance_uuid,
                                       {'task_state': started}, [claimed])
        if instance is None:
            return
        try:
            if hard and not self.driver.has_guest(instance_uuid):
                # Nova's hard reboot re-creates a guest that is gone
                # (after a failed rebuild, say) from what the server is.
                self.driver.spawn(instance_uuid, instance['flavor'],
                                  operation='reboot_hard',
                                  image_ref=instance.get('image_ref'))
            else:
                # A soft reboot needs a running guest; a hard one starts
                # whatever is there.
                self.driver.reboot(instance_uuid, hard)
        except Exception as exc:
            self._give_back(ctxt, instance_uuid, [started], exc)
            raise
        self._claim_cas(ctxt, instance_uuid, {
            'vm_state': states.ACTIVE, 'task_state': None,
            'power_state': states.POWER_RUNNING}, [started])

    @wrap_instance_event('compute')
    @notify_action('rebuild')
    def rebuild_instance_same_host(self, ctxt, instance_uuid, image_ref):
        """rebuilding -> rebuild_spawning -> ACTIVE, or SHUTOFF when the
        server was stopped (Nova powers it off again)."""
        instance = self._claim_cas(
            ctxt, instance_uuid, {'task_state': states.REBUILD_SPAWNING},
            [states.REBUILDING])
        if instance is None:
            return
        # The .start of instance.rebuild goes with this first guarded
        # write (notifications.STARTS_WITH_A_GUARD).
        self.notifier.saw(ctxt, {'instance': instance})
        stopped = instance['vm_state'] == states.STOPPED
        try:
            self.driver.destroy(instance_uuid, operation='rebuild_destroy')
            self.driver.spawn(instance_uuid, instance['flavor'],
                              operation='rebuild_spawn',
                              image_ref=image_ref or instance.get('image_ref'),
                              power='shutdown' if stopped else 'running')
        except Exception as exc:
            # The guest may be gone: the server goes to ERROR, as Nova's
            # failed rebuild does, with the fault saying why.
            self._fault(ctxt, instance_uuid, exc)
            self._claim_cas(ctxt, instance_uuid, {
                'vm_state': states.ERROR, 'task_state': None,
                'power_state': self.driver.power_state(instance_uuid)},
                [states.REBUILD_SPAWNING])
            raise
        self._claim_cas(ctxt, instance_uuid, {
            'vm_state': states.STOPPED if stopped else states.ACTIVE,
            'task_state': None,
            'power_state': (states.POWER_SHUTDOWN if stopped
                            else states.POWER_RUNNING)},
            [states.REBUILD_SPAWNING])
