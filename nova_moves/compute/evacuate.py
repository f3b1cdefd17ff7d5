"""Compute side of evacuate.

Destination: rebuild_instance(recreate=True) spawns the server here from
the conductor's claim, takes it over (host, node) and parks the
migration in 'done': the source half of the allocation stays with the
migration until the dead source returns.

Source, on its return (init_host): every evacuation away from this host
that is 'done' (or still in flight but already landed elsewhere) has its
local copy destroyed, its source half dropped, and becomes 'completed'.
A server whose host is still this host is never touched. Evacuations
still running when this host comes back are watched in the background
and cleaned up once they land.
"""
import threading
import time

from oslo_log import log as logging
import oslo_messaging as messaging

from nova_moves.compute import base
from nova_moves.compute import inflight
from nova_moves.compute import rpcapi as compute_rpcapi
from nova_moves import exception
from nova_moves import moves
from nova_moves.moves import evacuate as table
from nova_moves import notifications
from nova_moves import states

LOG = logging.getLogger(__name__)
notify_action = notifications.notify_action

EVENT = 'compute_rebuild_instance'

# How long a returning host watches evacuations still in flight.
WATCH_SECONDS = 600
WATCH_INTERVAL = 1.0


class EvacuateEndpoint(base.Steps):
    """The destination's rebuild, and the source's clean-up hook."""
    target = messaging.Target(version=compute_rpcapi.ComputeAPI.VERSION)

    def __init__(self, deps, cleanup):
        super().__init__(deps)
        self.cleanup = cleanup  # the EvacuationCleanup of this host

    # -- source, back from a partition (no restart) ------------------------
    def before_reporting_up(self, ctxt, evacuations=None):
        """The heartbeat's hook (a control of moves/evacuate.py; served
        as before the endpoints were split): the source's clean-up
        (EvacuationCleanup.run) before this host reports up, of the
        ``evacuations`` the conductor's answer listed (else asked for)."""
        self.cleanup.run(ctxt, evacuations)

    # -- destination ------------------------------------------------------
    # Its event (compute_rebuild_instance) is a value of its two guarded
    # steps (started with the first, ended with the second or with the
    # undo), not two more calls; a stale message records nothing.
    @inflight.tracked
    @notify_action('rebuild')
    def rebuild_instance(self, ctxt, instance_uuid, migration_uuid,
                         allocations=None, recreate=True, stop_after=False):
        guard = {'dest_compute': self.host}
        rows = self._advance(
            ctxt, migration_uuid, EVENT, expected_values=guard,
            **moves.guard_of(table, 'rebuild_instance', 'start'))
        if rows is None:
            return  # rolled back meanwhile, or a duplicate delivery
        instance = rows['instance']
        # 2.95 leaves it stopped; a server that was stopped stays stopped.
        stop_after = stop_after or instance['vm_state'] == states.STOPPED
        try:
            self.driver.spawn(instance_uuid, instance['flavor'],
                              operation='rebuild',
                              image_ref=instance.get('image_ref'),
                              power='shutdown' if stop_after else 'running')
            power = states.POWER_RUNNING
            if stop_after:
                self.driver.set_power(instance_uuid, 'shutdown', 'power_off')
                power = states.POWER_SHUTDOWN
        except Exception as exc:
            LOG.warning('Rebuild of %s on %s failed: %s', instance_uuid,
                        self.host, exc)
            self._rebuild_failed(ctxt, instance_uuid, migration_uuid, exc)
            raise
        # The server is here now, and the migration 'done' (the source
        # half waits for the dead source's return), in one step.
        if self._advance(
                ctxt, migration_uuid, EVENT, 'Success',
                expected_values=guard,
                **moves.guard_of(table, 'rebuild_instance'),
                instance_values={'host': self.host, 'node': self.host,
                                 'vm_state': (states.STOPPED if stop_after
                                              else states.ACTIVE),
                                 'power_state': power}) is None:
            self._destroy_partial(instance_uuid)

    def _destroy_partial(self, instance_uuid):
        try:
            if self.driver.has_guest(instance_uuid):
                self.driver.destroy(instance_uuid, operation='cleanup')
        except Exception:
            LOG.exception('Could not remove the partial copy of %s',
                          instance_uuid)

    def _rebuild_failed(self, ctxt, instance_uuid, migration_uuid, exc):
        """move_failed: the claim goes, the source half returns to the
        server, which stays on its (dead) source in ERROR with a fault
        and a failed migration, all in one transaction."""
        self._destroy_partial(instance_uuid)
        self._move_failed(ctxt, migration_uuid, exc, EVENT,
                          status=states.M_FAILED,
                          **moves.fail_guard(table, 'rebuild_instance'),
                          expected_values={'dest_compute': self.host})

class EvacuationCleanup(base.Steps):
    """The source's side, not an RPC endpoint: run by the manager at
    start-up (init_host) and before reporting up after a partition."""

    def __init__(self, deps):
        super().__init__(deps)
        # The evacuations this host's one watch thread follows, and that
        # thread; the lock guards both (a few list operations).
        self._watch_lock = threading.Lock()
        self._watching = []
        self._watch_thread = None

    # -- source, when it comes back ---------------------------------------
    def run(self, ctxt, migrations=None):
        """Called at start-up, and by the heartbeat when this host was
        silent longer than service_down_time while running (a network
        partition, a frozen process): its servers may have been
        evacuated meanwhile, so their copies go BEFORE it reports up
        again, as at a restart (Nova only cleans up at a restart).
        ``migrations``: the evacuations away from this host the
        conductor's answer listed (else asked for here). Raises while the
        conductors are still out of reach: then no report is sent."""
        if migrations is None:
            migrations = self.conductor.migration_get_all(
                ctxt, source_compute=self.host,
                migration_type=states.EVACUATION,
                status=list(moves.step_named(
                    table, '_clean_evacuated').undo_statuses()))
        with self._watch_lock:
            watched = set(self._watching)
        waiting = []
        for migration in migrations:
            if migration['uuid'] in watched:
                continue  # the watch thread has it
            if not self._clean_evacuated(ctxt, migration):
                waiting.append(migration['uuid'])
        if waiting:
            self._watch(ctxt, waiting)

    def _watch(self, ctxt, uuids):
        """Watch these evacuations in the one watch thread of this host:
        a host shown down settles at every heartbeat and finds the same
        evacuations still in flight each time."""
        with self._watch_lock:
            watching = self._watching
            new = [u for u in uuids if u not in watching]
            watching.extend(new)
            thread = self._watch_thread
            if thread is not None and thread.is_alive():
                if new:
                    LOG.info('Evacuations from %s still running: %s; '
                             'watching them too', self.host, new)
                return
            LOG.info('Evacuations from %s still running: %s; watching',
                     self.host, list(watching))
            thread = threading.Thread(target=self._watch_evacuations,
                                      args=(ctxt, watching), daemon=True,
                                      name='evacuate-watch')
            self._watch_thread = thread
            thread.start()

    def _watch_evacuations(self, ctxt, waiting, timeout=WATCH_SECONDS):
        """Clean up evacuations that were still running when this host
        came back, once they land ('done'); ones that failed leave the
        server here, which is then this host's own again. ``waiting`` is
        shared with _watch, which adds to it while this runs."""
        deadline = time.monotonic() + timeout
        while True:
            with self._watch_lock:
                # Over in the same lock _watch adds under: an evacuation
                # added after this finds no thread and starts one.
                if not waiting or time.monotonic() >= deadline:
                    self._watch_thread = None
                    left = list(waiting)
                    break
            time.sleep(WATCH_INTERVAL)
            for uuid in list(waiting):
                try:
                    migration = self.conductor.migration_get(ctxt, uuid)
                    if migration['status'] in moves.EVACUATING and \
                            not self._clean_evacuated(ctxt, migration):
                        continue
                    if migration['status'] == states.M_DONE:
                        self._clean_evacuated(ctxt, migration)
                    with self._watch_lock:
                        waiting.remove(uuid)
                except Exception:
                    LOG.exception('Watching evacuation %s failed', uuid)
        if left:
            # Still in the list: a later settle watches them again.
            LOG.warning('Evacuations %s from %s did not settle in %ss; '
                        'they are cleaned up on the next restart',
                        left, self.host, timeout)

    def _clean_evacuated(self, ctxt, migration):
        """Clean one evacuation away from this host; False when it is
        still in flight with the server not landed elsewhere yet."""
        instance_uuid = migration['instance_uuid']
        try:
            instance = self.conductor.instance_get(ctxt, instance_uuid,
                                                   read_deleted=True)
        except exception.InstanceNotFound:
            instance = None
        gone = instance is None or instance['vm_state'] == states.DELETED
        still_ours = not gone and instance['host'] == self.host
        in_flight = migration['status'] in moves.EVACUATING
        if in_flight and (still_ours or not gone and
                          instance['host'] is None):
            return False
        if not still_ours and self.driver.has_guest(instance_uuid):
            LOG.info('Destroying local copy of %s, evacuated from %s to %s',
                     instance_uuid, self.host,
                     instance and instance['host'])
            self.driver.destroy(instance_uuid)
        # The migration holds only the source half (root, nested or
        # sharing providers of this host); the server's own is elsewhere.
        # One step: a second cleaner finds it completed and stops.
        if self._advance(ctxt, migration['uuid'], None,
                         **moves.guard_of(table, '_clean_evacuated')) is None:
            return True
        LOG.info('Evacuation %s of %s from %s completed', migration['uuid'],
                 instance_uuid, self.host)
        return True
