"""Compute side of live migration.

Checks (both blocking calls, run while the conductor waits):
  dest check_can_live_migrate_destination
    -> source check_can_live_migrate_source
Transfer (cast by the conductor to the source):
  source live_migration: wait for a slot ([DEFAULT]
  max_concurrent_live_migrations, the migration stays ``queued``) ->
  ``preparing`` (call dest pre_live_migration) -> ``running`` (simulated
  memory/disk copy, progress written to the migration row) ->
  ``post-migrating`` -> call dest post_live_migration_at_destination ->
  destroy the source copy.
The destination starts its copy, then takes the server over in one
transaction: server host, task_state cleared, source allocation dropped,
migration ``completed``. That transaction is the point of no return and
decides which copy lives: whoever finds the migration settled the other
way removes its own copy (a destination whose commit lost to a rollback,
a source whose call failed after the destination won, a host restarted
with a copy of a server that now lives elsewhere), so a server never runs
on two hosts.
Any failure before it rolls back: the source allocation returns to the
server (the destination claim goes with it), the destination is told to
clean up, the server stays ACTIVE on the source, the migration ends
``error`` (or ``cancelled`` when aborted, ``failed`` when found half-done
at start-up, with a fault and the source's event closed as Error).

Abort and force-complete are casts from the API to the source; they flag
the running (or queued/preparing, 2.65) migration, which acts on the flag
at its next step."""
import threading
import time

from oslo_log import log as logging

from nova_moves import conf
from nova_moves import exception
from nova_moves import instance_actions
from nova_moves import notifications
from nova_moves import states

CONF = conf.CONF
LOG = logging.getLogger(__name__)
wrap_instance_event = instance_actions.wrap_instance_event
notify_action = notifications.notify_action

MIB = 1024 * 1024
GIB = 1024 * MIB
PROGRESS_INTERVAL = 0.3   # seconds between two progress writes
POLL_INTERVAL = 0.05


class LiveMigrationAborted(exception.NovaMovesException):
    msg_fmt = 'Live migration %(migration)s was aborted by a user.'
    code = 400


class _Control:
    """What the abort / force-complete casts tell a running migration."""

    def __init__(self):
        self.abort = threading.Event()
        self.force_complete = threading.Event()


class LiveMigrationMixin:
    # The compute manager sets its own (nova_moves/notifications.py).
    notifier = notifications.OFF

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._lm_setup()

    def _lm_setup(self):
        if getattr(self, '_lm_lock', None) is not None:
            return
        self._lm_lock = threading.Lock()
        limit = CONF.max_concurrent_live_migrations
        self._lm_slots = threading.BoundedSemaphore(limit) if limit else None
        self._lm_controls = {}       # migration id -> _Control
        self._lm_early_aborts = set()  # aborts that beat the transfer cast

    # -- pre-checks -----------------------------------------------------------
    @wrap_instance_event('compute', whole=True)
    def check_can_live_migrate_destination(self, ctxt, instance_uuid,
                                           block_migration, migration_uuid):
        instance = self._instance(ctxt, instance_uuid)
        info = self.driver.node_info()
        self._check_free_memory(ctxt, instance, info)
        dest_check_data = {'dest_host': self.host,
                           'dest_ip': info['host_ip'],
                           'hypervisor_type': info['hypervisor_type'],
                           'cpu_model': info['cpu_model'],
                           'block_migration': block_migration}
        return self.compute_rpcapi.check_can_live_migrate_source(
            ctxt, instance['host'], instance_uuid, dest_check_data)

    def _check_free_memory(self, ctxt, instance, info):
        """Physical memory left on this host, without over-commit."""
        used = sum(i['flavor']['memory_mb'] for i in
                   self.conductor.instance_get_all_by_host(ctxt, self.host)
                   if i['uuid'] != instance['uuid'] and i.get('flavor'))
        avail = info['memory_mb'] - info['reserved_host_memory_mb'] - used
        wanted = instance['flavor']['memory_mb']
        if avail < wanted:
            raise exception.MigrationPreCheckError(
                reason='Unable to migrate %s to %s: Lack of memory(host:%d '
                       '<= instance:%d)' % (instance['uuid'], self.host,
                                            avail, wanted))

    @wrap_instance_event('compute', whole=True)
    def check_can_live_migrate_source(self, ctxt, instance_uuid,
                                      dest_check_data):
        info = self.driver.node_info()
        dest = dest_check_data['dest_host']
        if not self.driver.has_guest(instance_uuid):
            raise exception.MigrationPreCheckError(
                reason='instance %s is not running on %s'
                       % (instance_uuid, self.host))
        if dest_check_data['hypervisor_type'] != info['hypervisor_type']:
            raise exception.MigrationPreCheckError(
                reason='hypervisor type mismatch: source %s is %s, '
                       'destination %s is %s' % (
                           self.host, info['hypervisor_type'], dest,
                           dest_check_data['hypervisor_type']))
        if dest_check_data['cpu_model'] != info['cpu_model']:
            raise exception.MigrationPreCheckError(
                reason='CPU model mismatch: source %s has %s, destination '
                       '%s has %s' % (self.host, info['cpu_model'], dest,
                                      dest_check_data['cpu_model']))
        return dict(dest_check_data, source_host=self.host)

    # -- destination steps ----------------------------------------------------
    @wrap_instance_event('compute', whole=True)
    @notify_action('live_migration_pre')
    def pre_live_migration(self, ctxt, instance_uuid, migration_uuid,
                           migrate_data):
        self._lm_guard(ctxt, migration_uuid, states.M_PREPARING,
                       dest_compute=self.host)
        self.driver.operate('pre_live_migration')
        return migrate_data

    def _lm_guard(self, ctxt, migration_uuid, status, **expected_values):
        """A call from the source for a migration that has moved on (a
        rollback, a duplicate) is refused: MoveConflict to the caller."""
        rows = self.conductor.move_advance(
            ctxt, migration_uuid, status=[status],
            task_state=[states.MIGRATING], expected_values=expected_values)
        self.notifier.saw(ctxt, rows)
        return rows

    @wrap_instance_event('compute')
    @notify_action('live_migration_post_dest')
    def post_live_migration_at_destination(self, ctxt, instance_uuid,
                                           migration_uuid):
        rows = self._lm_guard(ctxt, migration_uuid, states.M_POST_MIGRATING,
                              dest_compute=self.host)
        # A paused server stays paused on the destination (Nova).
        paused = rows['instance']['vm_state'] == states.PAUSED
        self.driver.spawn(instance_uuid, rows['instance']['flavor'],
                          operation='post_live_migration_at_destination',
                          power='paused' if paused else 'running')
        try:
            # The point of no return, one transaction: the server is here,
            # its source half is gone and the migration is completed --
            # or, when a rollback got there first, nothing.
            self.notifier.saw(ctxt, self.conductor.move_advance(
                ctxt, migration_uuid,
                status=[states.M_POST_MIGRATING, states.M_COMPLETED],
                task_state=[states.MIGRATING, None],
                expected_values={'dest_compute': self.host},
                instance_values={'host': self.host, 'node': self.host,
                                 'power_state': states.POWER_PAUSED
                                 if paused else states.POWER_RUNNING,
                                 'progress': 0},
                allocations={'op': 'drop_source'}))
        except exception.MoveConflict:
            # Rolled back meanwhile (the source restarted, the sweep) or a
            # duplicate: the copy just started goes unless the server
            # already runs here.
            self._lm_drop_copy_unless_here(ctxt, instance_uuid)
            raise

    def _lm_drop_copy_unless_here(self, ctxt, instance_uuid):
        """Remove this host's copy of a server recorded elsewhere."""
        try:
            host = self._instance(ctxt, instance_uuid)['host']
        except exception.InstanceNotFound:
            host = None
        if host != self.host and self.driver.has_guest(instance_uuid):
            LOG.warning('Removing the copy of %s on %s: the server lives '
                        'on %s', instance_uuid, self.host, host)
            self.driver.destroy(instance_uuid,
                                operation='rollback_live_migration')
            return True
        return False

    @wrap_instance_event('compute', whole=True)
    @notify_action('live_migration_rollback_dest')
    def rollback_live_migration_at_destination(self, ctxt, instance_uuid,
                                               migration_uuid):
        # Drop whatever copy arrived -- never the one the server runs as
        # (a late or duplicate rollback after the destination won).
        self._lm_drop_copy_unless_here(ctxt, instance_uuid)

    # -- source: the transfer -------------------------------------------------
    @wrap_instance_event('compute')
    def live_migration(self, ctxt, instance_uuid, dest, migration_uuid,
                       migrate_data):
        self._lm_setup()
        # Rolled back meanwhile (this host restarted with the cast still
        # in its queue, a duplicate delivery): nothing left to do.
        rows = self._advance(ctxt, migration_uuid, None,
                             status=[states.M_QUEUED],
                             task_state=[states.MIGRATING],
                             expected_values={'source_compute': self.host})
        if rows is None:
            return
        migration = rows['migration']
        control = _Control()
        with self._lm_lock:
            self._lm_controls[migration['id']] = control
            if migration['id'] in self._lm_early_aborts:
                self._lm_early_aborts.discard(migration['id'])
                control.abort.set()
        try:
            if not self._lm_wait_for_slot(control):
                self._lm_rollback(ctxt, instance_uuid, migration, dest,
                                  None, states.M_CANCELLED,
                                  dest_prepared=False)
                return
            try:
                self._lm_run(ctxt, instance_uuid, migration, dest,
                             migrate_data, control)
            finally:
                if self._lm_slots is not None:
                    self._lm_slots.release()
        finally:
            with self._lm_lock:
                self._lm_controls.pop(migration['id'], None)

    def _lm_wait_for_slot(self, control):
        """Queue behind max_concurrent_live_migrations; False if aborted
        while waiting."""
        if self._lm_slots is None:
            return not control.abort.is_set()
        while not control.abort.is_set():
            if self._lm_slots.acquire(timeout=POLL_INTERVAL):
                if control.abort.is_set():
                    self._lm_slots.release()
                    return False
                return True
        return False

    def _lm_set_status(self, ctxt, migration, status, expected, **values):
        """A guarded step: MoveConflict (the run stops) when the migration
        or the server moved on."""
        return self.conductor.move_advance(
            ctxt, migration['uuid'], status=[expected, status],
            task_state=[states.MIGRATING], values=values)

    def _lm_run(self, ctxt, instance_uuid, migration, dest, migrate_data,
                control):
        dest_prepared = False
        try:
            try:
                rows = self._lm_set_status(ctxt, migration,
                                           states.M_PREPARING,
                                           states.M_QUEUED)
            except exception.MoveConflict:
                # Another delivery of this cast won the first step and
                # runs the migration: a rollback here would undo its move.
                LOG.info('Live migration %s of %s is run by another '
                         'delivery', migration['id'], instance_uuid)
                return
            # From here the destination may hold something to clean up,
            # even when pre_live_migration itself fails half-way.
            dest_prepared = True
            self.compute_rpcapi.pre_live_migration(
                ctxt, dest, instance_uuid, migration['uuid'], migrate_data)
            if control.abort.is_set():
                raise LiveMigrationAborted(migration=migration['id'])
            # The server as the guarded step above returned it (its
            # flavor does not change while it migrates).
            instance = rows['instance']
            done = self._lm_transfer(ctxt, instance, migration,
                                     migrate_data, control)
            # The transfer's final progress goes with the status change.
            self._lm_set_status(ctxt, migration, states.M_POST_MIGRATING,
                                states.M_RUNNING, **done)
            # Nova's instance.live_migration_post.* come from the source.
            self.notifier.run(
                ctxt, instance_uuid, 'live_migration_post',
                lambda: self.compute_rpcapi.post_live_migration_at_destination(
                    ctxt, dest, instance_uuid, migration['uuid']))
        except LiveMigrationAborted:
            LOG.info('Live migration %s of %s aborted', migration['id'],
                     instance_uuid)
            self._lm_rollback(ctxt, instance_uuid, migration, dest, None,
                              states.M_CANCELLED, dest_prepared)
            return
        except Exception as exc:
            LOG.warning('Live migration %s of %s to %s failed: %s',
                        migration['id'], instance_uuid, dest, exc)
            if self._lm_rollback(ctxt, instance_uuid, migration, dest, exc,
                                 states.M_ERROR, dest_prepared):
                raise
            # The destination won (its reply was lost, or ours came too
            # late): the migration completed, our copy goes below.
        # The destination completed the migration: the local copy goes.
        try:
            self.driver.destroy(instance_uuid,
                                operation='live_migration_cleanup')
        except Exception:
            LOG.exception('Could not remove the source copy of %s',
                          instance_uuid)

    def _lm_totals(self, instance, migrate_data):
        flavor = instance['flavor']
        memory_mb = CONF.compute.live_migration_memory_mb or \
            flavor['memory_mb']
        block = migrate_data.get('block_migration')
        disk_gb = (flavor.get('root_gb', 0) + flavor.get('ephemeral_gb', 0)
                   if block in (True, 'auto') else 0)
        return memory_mb * MIB, disk_gb * GIB

    def _lm_transfer(self, ctxt, instance, migration, migrate_data,
                     control):
        """Copy memory (and disks for a block migration) over the
        simulated duration; force-complete finishes now, abort stops.
        Returns the migration's final progress values (for the caller's
        next step to write)."""
        memory_total, disk_total = self._lm_totals(instance, migrate_data)
        duration = self.driver.duration('live_migration')

        def progress(fraction):
            memory_done = int(memory_total * fraction)
            disk_done = int(disk_total * fraction)
            return {'memory_total': memory_total,
                    'memory_processed': memory_done,
                    'memory_remaining': memory_total - memory_done,
                    'disk_total': disk_total, 'disk_processed': disk_done,
                    'disk_remaining': disk_total - disk_done}

        self._lm_set_status(ctxt, migration, states.M_RUNNING,
                            states.M_PREPARING, **progress(0.0))
        started = last_report = time.monotonic()
        while True:
            if control.abort.is_set():
                raise LiveMigrationAborted(migration=migration['id'])
            now = time.monotonic()
            if control.force_complete.is_set() or now - started >= duration:
                break
            if now - last_report >= PROGRESS_INTERVAL:
                fraction = min(1.0, (now - started) / duration)
                self.conductor.migration_update(ctxt, migration['id'],
                                                progress(fraction))
                # The server's own progress field, like Nova's.
                self._update(ctxt, instance['uuid'],
                             {'progress': int(100 * fraction)})
                last_report = now
            time.sleep(min(POLL_INTERVAL, max(0.0, duration -
                                              (now - started))))
        if self.driver.injected('live_migration'):
            raise exception.HypervisorOperationFailed(
                operation='live_migration', host=self.host)
        return progress(1.0)

    def _lm_rollback(self, ctxt, instance_uuid, migration, dest, exc,
                     status, dest_prepared, event=None):
        """move_failed: the server stays on this host, its allocation
        back (the destination claim dropped), task_state cleared,
        migration ``status``; then the destination cleans up. True when
        rolled back; False when the migration settled otherwise first
        (then a copy here of a server that now lives elsewhere goes)."""
        return self.notifier.run(
            ctxt, instance_uuid, 'live_migration_rollback',
            lambda: self._lm_roll_back(ctxt, instance_uuid, migration, dest,
                                       exc, status, dest_prepared, event))

    def _lm_roll_back(self, ctxt, instance_uuid, migration, dest, exc,
                      status, dest_prepared, event):
        failed = self._move_failed(
            ctxt, migration['uuid'], exc,
            expected_status=list(states.LIVE_MIGRATION_IN_FLIGHT),
            status=status, instance_values={'progress': 0},
            expected_values={'source_compute': self.host}, event=event,
            newest_action=event is not None)
        if failed is None:
            self._lm_drop_copy_unless_here(ctxt, instance_uuid)
            return False
        if dest_prepared and dest:
            try:
                self.compute_rpcapi.rollback_live_migration_at_destination(
                    ctxt, dest, instance_uuid, migration['uuid'])
            except Exception:
                LOG.exception('Could not ask %s to clean up %s', dest,
                              instance_uuid)
        return True

    # -- abort and force-complete (casts from the API) ------------------------
    def _lm_control(self, migration_id):
        self._lm_setup()
        with self._lm_lock:
            return self._lm_controls.get(migration_id)

    @wrap_instance_event('compute')
    @notify_action('live_migration_abort')
    def live_migration_abort(self, ctxt, instance_uuid, migration_id):
        self._lm_setup()
        migration = self.conductor.migration_get(ctxt, migration_id)
        if migration['status'] not in states.LIVE_MIGRATION_ABORTABLE:
            LOG.info('Nothing to abort: migration %s is %s', migration_id,
                     migration['status'])
            return
        # Under the lock live_migration() registers its control with, so
        # the abort is either seen by a running transfer or left for the
        # transfer cast that has not been handled yet.
        with self._lm_lock:
            control = self._lm_controls.get(migration['id'])
            if control is not None:
                control.abort.set()
            else:
                self._lm_early_aborts.add(migration['id'])

    @wrap_instance_event('compute')
    @notify_action('live_migration_force_complete')
    def live_migration_force_complete(self, ctxt, instance_uuid,
                                      migration_id):
        control = self._lm_control(migration_id)
        if control is None:
            LOG.info('Nothing to force-complete: migration %s is not '
                     'running on %s', migration_id, self.host)
            return
        control.force_complete.set()

    # -- 1.1: asked by the stuck-move sweep -----------------------------------
    def live_migration_status(self, ctxt, migration_uuid):
        """True while this host runs (or queues) the live migration."""
        self._lm_setup()
        migration = self.conductor.migration_get(ctxt, migration_uuid)
        with self._lm_lock:
            return migration['id'] in self._lm_controls

    # -- start-up -------------------------------------------------------------
    def _init_host_live_migration(self, ctxt):
        """A live migration this host was running when it stopped cannot
        go on: roll it back, it ends ``failed`` with a fault, and the
        source's event of it is closed as Error. Then no copy of a server
        that lives elsewhere stays here."""
        self._lm_setup()
        for migration in self.conductor.migration_get_all(
                ctxt, source_compute=self.host,
                migration_type=states.LIVE_MIGRATION,
                status=list(states.LIVE_MIGRATION_IN_FLIGHT)):
            LOG.warning('Rolling back live migration %s of %s left %s',
                        migration['id'], migration['instance_uuid'],
                        migration['status'])
            exc = exception.MoveInterruptedByRestart(
                host=self.host, step='live_migration',
                migration=migration['uuid'])
            # The event the dead handler opened, on the move's action
            # (this context has no request id of its own).
            self._lm_rollback(ctxt, migration['instance_uuid'], migration,
                              migration['dest_compute'], exc,
                              states.M_FAILED, dest_prepared=True,
                              event='compute_live_migration')
        self._lm_remove_leftovers(ctxt)

    def _lm_remove_leftovers(self, ctxt):
        """Copies of servers that live elsewhere now, left by a live
        migration that settled while this host was down: the source of a
        completed one, the destination of one rolled back."""
        guests = self.driver.guests()
        if not guests:
            return
        here = {i['uuid'] for i in
                self.conductor.instance_get_all_by_host(ctxt, self.host)}
        for instance_uuid in set(guests) - here:
            migrations = self.conductor.migration_get_all(
                ctxt, instance_uuid=instance_uuid)
            if not migrations:
                continue
            newest = max(migrations, key=lambda m: m['id'])
            if newest['migration_type'] != states.LIVE_MIGRATION or \
                    newest['status'] in states.LIVE_MIGRATION_IN_FLIGHT or \
                    self.host not in (
                        newest['source_compute'], newest['dest_compute']):
                continue  # another kind of move owns this copy
            self._lm_drop_copy_unless_here(ctxt, instance_uuid)
