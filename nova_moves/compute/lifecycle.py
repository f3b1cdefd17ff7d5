"""The compute side of the lifecycle actions (RPC 1.4): pause, unpause,
suspend, resume, reboot and rebuild on the server's own host.

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

from nova_moves import exception
from nova_moves import instance_actions
from nova_moves import notifications
from nova_moves import states

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


class LifecycleMixin:

    def _lifecycle_cas(self, ctxt, instance_uuid, values, expected):
        """One compare-and-swap on the server; None when the claim is no
        longer this message's (logged, nothing written)."""
        try:
            return self._update(ctxt, instance_uuid, values,
                                expected_task_state=list(expected))
        except (exception.UnexpectedTaskState, exception.InstanceNotFound,
                exception.InstanceInvalidState) as exc:
            LOG.warning('Dropping a lifecycle step of %s on %s: %s',
                        instance_uuid, self.host, exc)
            return None

    def _give_back(self, ctxt, instance_uuid, task_states, exc):
        """The hypervisor failed: the fault first (whoever sees the
        server settle must see why), then the task_state goes."""
        self._fault(ctxt, instance_uuid, exc)
        self._lifecycle_cas(ctxt, instance_uuid, {'task_state': None},
                            task_states)

    def _still_claimed(self, ctxt, instance_uuid, task_state):
        """A late or duplicate message finds the claim gone: the guest
        is not touched. (A takeover after this read is still safe: the
        final compare-and-swap fails and the taker drives the guest.)"""
        try:
            instance = self._instance(ctxt, instance_uuid)
        except exception.InstanceNotFound:
            return False
        if instance['task_state'] != task_state or \
                instance['host'] != self.host:
            LOG.warning('Dropping a stale %s of %s on %s: task_state %s, '
                        'host %s', task_state, instance_uuid, self.host,
                        instance['task_state'], instance['host'])
            return False
        return True

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
        self._lifecycle_cas(ctxt, instance_uuid, {
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
        instance = self._lifecycle_cas(ctxt, instance_uuid,
                                       {'task_state': started}, [claimed])
        if instance is None:
            return
        try:
            if hard and not self.driver.has_guest(instance_uuid):
                # Nova's hard reboot re-creates a guest that is gone
                # (after a failed rebuild, say) from what the server is.
                self.driver.spawn(instance_uuid, instance['flavor'],
                                  operation='reboot_hard')
            else:
                # A soft reboot needs a running guest; a hard one starts
                # whatever is there.
                self.driver.set_power(
                    instance_uuid, 'running',
                    'reboot_hard' if hard else 'reboot',
                    require=None if hard else ('running',))
        except Exception as exc:
            self._give_back(ctxt, instance_uuid, [started], exc)
            raise
        self._lifecycle_cas(ctxt, instance_uuid, {
            'vm_state': states.ACTIVE, 'task_state': None,
            'power_state': states.POWER_RUNNING}, [started])

    @wrap_instance_event('compute')
    @notify_action('rebuild')
    def rebuild_instance_same_host(self, ctxt, instance_uuid, image_ref):
        """rebuilding -> rebuild_spawning -> ACTIVE, or SHUTOFF when the
        server was stopped (Nova powers it off again)."""
        instance = self._lifecycle_cas(
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
                              power='shutdown' if stopped else 'running')
        except Exception as exc:
            # The guest may be gone: the server goes to ERROR, as Nova's
            # failed rebuild does, with the fault saying why.
            self._fault(ctxt, instance_uuid, exc)
            self._lifecycle_cas(ctxt, instance_uuid, {
                'vm_state': states.ERROR, 'task_state': None,
                'power_state': self.driver.power_state(instance_uuid)},
                [states.REBUILD_SPAWNING])
            raise
        self._lifecycle_cas(ctxt, instance_uuid, {
            'vm_state': states.STOPPED if stopped else states.ACTIVE,
            'task_state': None,
            'power_state': (states.POWER_SHUTDOWN if stopped
                            else states.POWER_RUNNING)},
            [states.REBUILD_SPAWNING])
