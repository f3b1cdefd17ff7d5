"""The compute side of a server's life on its own host: boot, delete,
os-start/os-stop (1.2), and the lifecycle actions (RPC 1.4): pause,
unpause, suspend, resume, reboot and rebuild; rescue and unrescue
(1.10).

The API claimed the server (task_state set by compare-and-swap) and
recorded the action; each handler is a row of the lifecycle table
(nova_moves/moves/lifecycle.py): it checks that claim before it touches
the guest, drives the hypervisor and finishes the claim with one more
compare-and-swap through the conductor (computes never open the
database). A message whose claim is gone (a duplicate, one sent out of
turn, a hard reboot took over, os-resetState cleared it, the server was
deleted) changes nothing: not the guest, not the server. A hypervisor
failure gives the task_state back and leaves vm_state as it was (Nova's
reverts_task_state; a rebuild's is ERROR), with a fault and the event's
Error.
"""
import threading

from oslo_log import log as logging
import oslo_messaging as messaging

from nova_moves.compute import base
from nova_moves.compute import rpcapi as compute_rpcapi

from nova_moves import conf
from nova_moves import exception
from nova_moves import instance_actions
from nova_moves.moves import lifecycle as lc_table
from nova_moves import notifications
from nova_moves import states
from nova_moves import timeutil

CONF = conf.CONF
LOG = logging.getLogger(__name__)
wrap_instance_event = instance_actions.wrap_instance_event
notify_action = notifications.notify_action

class Guarded(base.Steps):
    """The lifecycle table's rows run here: the claim checked before the
    guest is touched (the base of LifecycleEndpoint and ShelveEndpoint,
    and what the start-up recovery redoes with)."""

    def __init__(self, deps):
        super().__init__(deps)
        self._running = set()  # (server, action) handled here right now
        self._running_lock = threading.Lock()

    # -- the guard first, then the guest -------------------------------------
    def _guarded(self, ctxt, instance_uuid, name, act, on_error=None):
        """Run ``name``'s row of the lifecycle table (moves/lifecycle.py):
        its claim is checked before the guest is touched, so a stale,
        duplicate or out-of-turn message changes nothing; one copy of a
        message runs at a time here (a second copy arriving while the
        first runs is dropped). ``act(instance)`` drives the guest and
        returns its power after (for the row's FROM_GUEST fields).
        Returns the server as the last write left it, or None."""
        key = (instance_uuid, name)
        with self._running_lock:
            if key in self._running:
                LOG.warning('Dropping a duplicate %s of %s on %s: one is '
                            'running', name, instance_uuid, self.host)
                return None
            self._running.add(key)
        # What move_step_status answers for the sweep (a server's uuid
        # is its lifecycle action's key).
        self.in_flight.enter(instance_uuid)
        try:
            return self._run(ctxt, instance_uuid, name, act, on_error)
        finally:
            self.in_flight.leave(instance_uuid)
            with self._running_lock:
                self._running.discard(key)

    def _claimed(self, ctxt, instance_uuid, task_states):
        """The server while its task_state is one of ``task_states`` on
        this host; None (logged) when the claim is not this message's."""
        try:
            instance = self._instance(ctxt, instance_uuid)
        except exception.InstanceNotFound:
            return None
        if instance['task_state'] not in task_states or \
                instance['host'] != self.host:
            LOG.warning('Dropping a stale %s of %s on %s: task_state %s, '
                        'host %s', '/'.join(task_states), instance_uuid,
                        self.host, instance['task_state'], instance['host'])
            return None
        return instance

    def _run(self, ctxt, instance_uuid, name, act, on_error=None):
        row = lc_table.row(name)
        instance = self._claimed(ctxt, instance_uuid, lc_table.accepts(name))
        if instance is None:
            return None
        task = instance['task_state']
        start = lc_table.start_values(name)
        if start is not None and task != row.started:
            instance = self._claim_cas(ctxt, instance_uuid, start, [task])
            if instance is None:
                return None
            task = row.started
        try:
            power = act(instance)
        except Exception as exc:
            if on_error is not None:
                on_error(instance, task, exc)
            else:
                self._fault(ctxt, instance_uuid, exc)
                self._claim_cas(ctxt, instance_uuid, lc_table.failed_values(
                    name, self.driver.power_state(instance_uuid)), [task])
            raise
        # None: someone took the server over meanwhile (a hard reboot, a
        # reset): the guest follows them, not this message.
        return self._claim_cas(ctxt, instance_uuid, lc_table.end_values(
            name, power, offload=CONF.compute.shelved_offload_time == 0),
            [task])

    def _set_power(self, name):
        row = lc_table.row(name)

        def act(instance):
            self.driver.set_power(instance['uuid'], row.power_after,
                                  row.operation, require=row.power_from)
            return row.power_after
        return act


class LifecycleEndpoint(Guarded):
    """Boot, delete, start/stop and the lifecycle actions of 1.4."""
    target = messaging.Target(version=compute_rpcapi.ComputeAPI.VERSION)

    # -- boot and delete ------------------------------------------------------
    @wrap_instance_event('compute')
    @notify_action('create')
    def build_and_run_instance(self, ctxt, instance_uuid, request_spec,
                               alternates):
        row = lc_table.row('create')
        instance = self._claimed(ctxt, instance_uuid, [row.task])
        if instance is None:
            LOG.info('Not building %s: deleted meanwhile', instance_uuid)
            return
        # Counted as running for the sweep's question: a slow spawn is
        # not a stuck one.
        self.in_flight.enter(instance_uuid)
        try:
            self._spawn_and_finish(ctxt, instance, row, request_spec,
                                   alternates)
        finally:
            self.in_flight.leave(instance_uuid)

    def _spawn_and_finish(self, ctxt, instance, row, request_spec,
                          alternates):
        instance_uuid = instance['uuid']
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
                         dict(lc_table.end_values(row),
                              launched_at=timeutil.utcnow_iso()),
                         expected_task_state=[row.task])
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
                         dict(lc_table.BUILD_RESCHEDULE))
            spec = dict(request_spec, alternates=alternates)
            self.compute_task_api.build_instances(ctxt, [instance_uuid], spec)
            return
        # The fault first: whoever sees ERROR must also see why.
        self._fault(ctxt, instance_uuid, exc)
        self._update(ctxt, instance_uuid, lc_table.failed_values('create'))

    @wrap_instance_event('compute')
    def terminate_instance(self, ctxt, instance_uuid):
        self.driver.destroy(instance_uuid)

    # -- os-start / os-stop (1.2) --------------------------------------------
    # A failure gives the task_state back (the server stays as it was, as
    # Nova's reverts_task_state does) and re-raises for the event.
    @wrap_instance_event('compute')
    @notify_action('power_on')
    def start_instance(self, ctxt, instance_uuid):
        self._guarded(ctxt, instance_uuid, 'os-start',
                      self._set_power('os-start'))

    @wrap_instance_event('compute')
    @notify_action('power_off')
    def stop_instance(self, ctxt, instance_uuid):
        self._guarded(ctxt, instance_uuid, 'os-stop',
                      self._set_power('os-stop'))

    # -- pause, unpause, suspend, resume, reboot, rebuild (1.4) ------------
    @wrap_instance_event('compute')
    @notify_action('pause')
    def pause_instance(self, ctxt, instance_uuid):
        self._guarded(ctxt, instance_uuid, 'pause', self._set_power('pause'))

    @wrap_instance_event('compute')
    @notify_action('unpause')
    def unpause_instance(self, ctxt, instance_uuid):
        self._guarded(ctxt, instance_uuid, 'unpause',
                      self._set_power('unpause'))

    @wrap_instance_event('compute')
    @notify_action('suspend')
    def suspend_instance(self, ctxt, instance_uuid):
        self._guarded(ctxt, instance_uuid, 'suspend',
                      self._set_power('suspend'))

    @wrap_instance_event('compute')
    @notify_action('resume')
    def resume_instance(self, ctxt, instance_uuid):
        self._guarded(ctxt, instance_uuid, 'resume',
                      self._set_power('resume'))

    @wrap_instance_event('compute')
    @notify_action('reboot')
    def reboot_instance(self, ctxt, instance_uuid, reboot_type):
        """SOFT: rebooting -> reboot_started -> ACTIVE; HARD:
        rebooting_hard -> reboot_started_hard -> ACTIVE (from any vm_state
        the API let through: a hard reboot powers the guest on)."""
        self._reboot(ctxt, instance_uuid, 'reboot:' + reboot_type,
                     reboot_type == 'HARD')

    def _reboot(self, ctxt, instance_uuid, name, hard):
        def act(instance):
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
            return lc_table.row(name).power_after
        return self._guarded(ctxt, instance_uuid, name, act)

    @wrap_instance_event('compute')
    @notify_action('rebuild')
    def rebuild_instance_same_host(self, ctxt, instance_uuid, image_ref):
        """rebuilding -> rebuild_spawning -> ACTIVE, or SHUTOFF when the
        server was stopped (Nova powers it off again). A failure is ERROR
        (the guest may be gone), with the fault saying why."""
        self._rebuild(ctxt, instance_uuid, image_ref)

    def _rebuild(self, ctxt, instance_uuid, image_ref=None):
        def act(instance):
            # The .start of instance.rebuild goes with the first guarded
            # write (notifications.STARTS_WITH_A_GUARD).
            self.notifier.saw(ctxt, {'instance': instance})
            power = ('shutdown' if instance['vm_state'] == states.STOPPED
                     else 'running')
            self.driver.destroy(instance_uuid, operation='rebuild_destroy')
            self.driver.spawn(instance_uuid, instance['flavor'],
                              operation='rebuild_spawn',
                              image_ref=image_ref or instance.get('image_ref'),
                              power=power)
            return power
        return self._guarded(ctxt, instance_uuid, 'rebuild', act)

    # -- rescue, unrescue (1.10) --------------------------------------------
    @wrap_instance_event('compute')
    @notify_action('rescue')
    def rescue_instance(self, ctxt, instance_uuid, rescue_image_ref=None):
        """rescuing -> RESCUED: the guest boots the rescue image with its
        own disk attached second. A failure is ERROR, with its fault."""
        self._rescue(ctxt, instance_uuid, rescue_image_ref)

    def _rescue(self, ctxt, instance_uuid, rescue_image_ref=None):
        def act(instance):
            # No image (a redo, a re-sent cast): the one this rescue
            # recorded on the guest, else the server's own (Nova's).
            self.driver.rescue(instance_uuid, instance['flavor'],
                               image_ref=rescue_image_ref,
                               server_image_ref=instance.get('image_ref'))
            return lc_table.row('rescue').power_after
        return self._guarded(ctxt, instance_uuid, 'rescue', act)

    @wrap_instance_event('compute')
    @notify_action('unrescue')
    def unrescue_instance(self, ctxt, instance_uuid):
        """unrescuing -> ACTIVE: the guest boots its own disk again."""
        self._unrescue(ctxt, instance_uuid)

    def _unrescue(self, ctxt, instance_uuid):
        def act(instance):
            self.driver.unrescue(instance_uuid)
            return lc_table.row('unrescue').power_after
        return self._guarded(ctxt, instance_uuid, 'unrescue', act)
