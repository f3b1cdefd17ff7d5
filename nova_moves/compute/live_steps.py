"""What the live migration's handlers (compute/live_migration.py) share:
the guarded writes of its chained steps (compute RPC 1.6, conductor
compute_db 1.6), the events they carry as values, and the transfer's
progress. A chained step writes the previous host's end with its own, so
the source makes no conductor call between the conductor's cast and the
destination's take-over:

    dest   check_can_live_migrate_destination -> source's check: both
           events go back to the conductor, recorded with its 'queued'
    dest   pre_live_migration end: queued -> running (the 'preparing'
           phase it spent, the transfer's totals, the source's event
           opened, its own recorded whole)
    source the transfer (progress, when long, one guarded write each)
    dest   post_live_migration_at_destination start: running ->
           post-migrating with the final progress; end: completed, the
           source's event closed with its own
"""
import threading
import time

from oslo_log import log as logging

from nova_moves.compute import base
from nova_moves import conf
from nova_moves import exception
from nova_moves import faultinfo
from nova_moves import instance_actions
from nova_moves import moves
from nova_moves.moves import live
from nova_moves import states
from nova_moves import timeutil
from nova_moves.virt import driver

CONF = conf.CONF
LOG = logging.getLogger(__name__)

MIB = 1024 * 1024
GIB = 1024 * MIB
PROGRESS_INTERVAL = 0.3   # seconds between two progress writes
POLL_INTERVAL = 0.05
SOURCE_EVENT = 'compute_live_migration'

# The live table's row of the hypervisor's transfer of the guest (memory,
# and disks for a block migration), run by the source between
# pre_live_migration and the destination's take-over.
TRANSFER = '_transfer_guest'


LiveMigrationAborted = driver.LiveMigrationAborted
progress = driver.progress


class Control:
    """What the abort / force-complete casts tell a running migration."""

    def __init__(self):
        self.abort = threading.Event()
        self.force_complete = threading.Event()


def event(name, host, result=None, start_time=None):
    """An event as a value of a step's transaction (result None: its
    start)."""
    out = {'name': name, 'host': host, 'result': result}
    if start_time:
        out['start_time'] = start_time
    return out


def _take_answer(migrate_data, answer):
    """The destination's pre_live_migration answer (its migrate_data,
    with where to send memory and disks) into the source's."""
    if isinstance(answer, dict):
        migrate_data.update(answer)


def totals(flavor, migrate_data, memory_mb_override=0):
    memory_mb = memory_mb_override or flavor['memory_mb']
    block = migrate_data.get('block_migration')
    disk_gb = (flavor.get('root_gb', 0) + flavor.get('ephemeral_gb', 0)
               if block in (True, 'auto') else 0)
    return memory_mb * MIB, disk_gb * GIB


class LiveSteps(base.Steps):
    """Private helpers of LiveMigrationEndpoint (no handlers here: every
    public method of the endpoint is a step or a control of
    moves/live.py)."""

    def _record_error(self, ctxt, instance_uuid, name, exc,
                      started=None):
        """A chained step that failed records its own Error event (its
        success would have been a value of the next transaction)."""
        instance_actions._safe(
            self.event_backend.action_event_finish, ctxt, instance_uuid,
            ctxt.request_id, name, 'Error',
            traceback=instance_actions._format(exc),
            details=faultinfo.message(exc), host=self.host,
            start_time=started)

    def _checked(self, ctxt, instance_uuid, name, report_events, check):
        """Run a pre-check; its event recorded whole (a call), or with
        ``report_events`` returned under '_events' in its answer for the
        conductor to record with its next step. A failed check records
        its Error itself either way."""
        if not report_events:
            with instance_actions.event(self.event_backend, ctxt,
                                        instance_uuid, name, host=self.host,
                                        whole=True):
                return check()
        started = timeutil.utcnow_iso()
        try:
            answer = dict(check())
        except Exception as exc:
            self._record_error(ctxt, instance_uuid, name, exc, started)
            raise
        answer['_events'] = list(answer.get('_events') or ()) + [
            event(name, self.host, 'Success', started)]
        return answer

    def _chained_running(self, ctxt, migration_uuid, source, values,
                         started):
        """The end of a chained pre_live_migration: queued -> running in
        one transaction (the 'preparing' phase since ``started``, the
        transfer's totals, the source's event opened, this step's
        recorded whole). MoveConflict when the migration moved on (a
        duplicate of the source's cast won, a rollback)."""
        here = {'source_compute': source, 'dest_compute': self.host}
        events = [event(SOURCE_EVENT, source),
                  event('compute_pre_live_migration', self.host, 'Success',
                        started)]
        end = moves.guard_of(live, 'pre_live_migration')
        if self.conductor.can_chain_live_steps():
            rows = self.conductor.move_advance(
                ctxt, migration_uuid, expected_values=here, values=values,
                events=events, passed_phases=[[states.M_PREPARING, started]],
                **end)
        else:  # an older conductor: 'preparing' written on its own
            self.conductor.move_advance(
                ctxt, migration_uuid, expected_values=here,
                **moves.guard_of(live, 'live_migration'))
            rows = self.conductor.move_advance(
                ctxt, migration_uuid, expected_values=here, values=values,
                events=events, **moves.guard_of(
                    live, 'pre_live_migration', 'older_conductor'))
        self.notifier.saw(ctxt, rows)
        return rows

    def _post_start(self, ctxt, migration_uuid, source, transferred):
        """The guard of post_live_migration_at_destination, its event
        opened; chained (``source``), the transfer's end with it."""
        # Unchained, the source wrote post-migrating itself.
        kwargs = moves.guard_of(live, 'post_live_migration_at_destination',
                                'start' if source else 'unchained_start')
        rows = self.conductor.move_advance(
            ctxt, migration_uuid, values=transferred or None,
            expected_values={'dest_compute': self.host},
            event=event('compute_post_live_migration_at_destination',
                        self.host), **kwargs)
        self.notifier.saw(ctxt, rows)
        return rows

    def _control_step(self, ctxt, name, migration_id):
        """A control's guarded check (moves/live.py CONTROL_GUARDS), its
        event recorded whole in it: the migration as it is, or None when
        the cast is stale (the migration is not where the control
        applies, or not this host's)."""
        started = timeutil.utcnow_iso()
        try:
            rows = self.conductor.move_advance(
                ctxt, migration_id,
                expected_values={'source_compute': self.host},
                event=event('compute_' + name, self.host, 'Success',
                            started),
                **moves.control_guard(live, name))
        except exception.MoveConflict as exc:
            LOG.info('Nothing to %s on %s: %s', name, self.host, exc)
            return None
        return rows['migration']

    def _guard(self, ctxt, migration_uuid, step, phase,
               **expected_values):
        """A call from the source for a migration that has moved on (a
        rollback, a duplicate) is refused: MoveConflict to the caller.
        The check is ``step``'s ``phase`` in the live table."""
        rows = self.conductor.move_advance(
            ctxt, migration_uuid, expected_values=expected_values,
            **moves.guard_of(live, step, phase))
        self.notifier.saw(ctxt, rows)
        return rows

    def _take_over(self, ctxt, instance_uuid, migration_uuid, rows,
                   events):
        # A paused server stays paused on the destination (Nova).
        paused = rows['instance']['vm_state'] == states.PAUSED
        self.driver.post_live_migration_at_destination(
            instance_uuid, rows['instance']['flavor'],
            'paused' if paused else 'running')
        try:
            # The point of no return, one transaction: the server is here,
            # its source half is gone and the migration is completed --
            # or, when a rollback got there first, nothing.
            self.notifier.saw(ctxt, self.conductor.move_advance(
                ctxt, migration_uuid,
                expected_values={'dest_compute': self.host},
                instance_values={'host': self.host, 'node': self.host,
                                 'power_state': states.POWER_PAUSED
                                 if paused else states.POWER_RUNNING,
                                 'progress': 0},
                event=event(
                    'compute_post_live_migration_at_destination', self.host,
                    'Success'), events=events,
                **moves.guard_of(live, 'post_live_migration_at_destination')))
        except exception.MoveConflict:
            # Rolled back meanwhile (the source restarted, the sweep) or a
            # duplicate: the copy just started goes unless the server
            # already runs here.
            self._drop_copy_unless_here(ctxt, instance_uuid)
            raise

    def _drop_copy_unless_here(self, ctxt, instance_uuid):
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

    def _wait_for_slot(self, control):
        """Queue behind max_concurrent_live_migrations; False if aborted
        while waiting."""
        if self._slots is None:
            return not control.abort.is_set()
        while not control.abort.is_set():
            if self._slots.acquire(timeout=POLL_INTERVAL):
                if control.abort.is_set():
                    self._slots.release()
                    return False
                return True
        return False

    def _set_status(self, ctxt, migration, step, phase, **values):
        """``step``'s ``phase`` of the live table, unchained (the source
        writes its own statuses): MoveConflict (the run stops) when the
        migration or the server moved on."""
        return self.conductor.move_advance(
            ctxt, migration['uuid'], values=values,
            **moves.guard_of(live, step, phase))

    def _start(self, ctxt, instance_uuid, migration, dest, migrate_data,
               rows):
        """Up to the transfer: 'preparing', the destination's
        pre_live_migration, 'running'. Returns the transfer's totals, or
        None when another delivery of the cast runs the migration (or
        it settled meanwhile): nothing to do or undo here."""
        chained = rows is None
        # What the destination needs to receive the guest, and (from its
        # answer) what the transfer needs: both ride in migrate_data.
        migrate_data.update(
            self.driver.live_migration_source_data(instance_uuid))
        if chained:
            sizes = totals(
                migrate_data['flavor'], migrate_data,
                CONF.compute.live_migration_memory_mb)
            try:
                answer = self.compute_rpcapi.pre_live_migration(
                    ctxt, dest, instance_uuid, migration['uuid'],
                    migrate_data, source=self.host,
                    progress=progress(sizes, 0.0))
            except exception.MoveConflict as exc:
                LOG.info('Live migration %s of %s is run by another '
                         'delivery or settled: %s', migration['uuid'],
                         instance_uuid, exc)
                return None
            _take_answer(migrate_data, answer)
            return sizes
        try:
            rows = self._set_status(ctxt, migration, 'live_migration',
                                    'end')
        except exception.MoveConflict:
            # Another delivery of this cast won the first step and runs
            # the migration: a rollback here would undo its move.
            LOG.info('Live migration %s of %s is run by another delivery',
                     migration['id'], instance_uuid)
            return None
        answer = self.compute_rpcapi.pre_live_migration(
            ctxt, dest, instance_uuid, migration['uuid'], migrate_data)
        _take_answer(migrate_data, answer)
        # The server as the guarded step above returned it (its flavor
        # does not change while it migrates).
        sizes = self._totals(rows['instance'], migrate_data)
        self._set_status(ctxt, migration, TRANSFER, 'start',
                         **progress(sizes, 0.0))
        return sizes

    def _run(self, ctxt, instance_uuid, migration, dest, migrate_data,
             control, rows):
        chained = rows is None
        # From the call to pre_live_migration on, the destination may
        # hold something to clean up, even when it fails half-way.
        dest_prepared = True
        event = SOURCE_EVENT if chained else None
        try:
            sizes = self._start(ctxt, instance_uuid, migration, dest,
                                migrate_data, rows)
            if sizes is None:
                return
            if control.abort.is_set():
                raise LiveMigrationAborted(migration=migration['uuid'])
            done = self._transfer_guest(ctxt, migration, sizes, control,
                                     instance_uuid, migrate_data)
            if chained:
                post = dict(source=self.host, transferred=done)
            else:
                # The transfer's final progress goes with the status.
                self._set_status(ctxt, migration, TRANSFER, 'end',
                                 **done)
                post = {}
            # Nova's instance.live_migration_post.* come from the source.
            self.notifier.run(
                ctxt, instance_uuid, 'live_migration_post',
                lambda: self.compute_rpcapi.post_live_migration_at_destination(
                    ctxt, dest, instance_uuid, migration['uuid'], **post))
        except LiveMigrationAborted:
            LOG.info('Live migration %s of %s aborted', migration['uuid'],
                     instance_uuid)
            self._rollback(ctxt, instance_uuid, migration, dest, None,
                           states.M_CANCELLED, dest_prepared, event=event)
            return
        except Exception as exc:
            LOG.warning('Live migration %s of %s to %s failed: %s',
                        migration['uuid'], instance_uuid, dest, exc)
            if self._rollback(ctxt, instance_uuid, migration, dest, exc,
                              states.M_ERROR, dest_prepared, event=event):
                raise
            # Settled otherwise first: the destination won (its reply was
            # lost, or ours came too late) and our copy went with the
            # rollback's check; or the move was undone and ours stays.
            return
        # The destination completed the migration: the local copy goes.
        try:
            self.driver.destroy(instance_uuid,
                                operation='live_migration_cleanup')
        except Exception:
            LOG.exception('Could not remove the source copy of %s',
                          instance_uuid)

    def _totals(self, instance, migrate_data):
        return totals(instance['flavor'], migrate_data,
                                 CONF.compute.live_migration_memory_mb)

    # Named as its step in nova_moves/moves/live.py (TRANSFER: a
    # step no message starts, so private to oslo.messaging).
    def _transfer_guest(self, ctxt, migration, sizes, control,
                        instance_uuid, migrate_data=None):
        """The hypervisor's transfer (virt/driver.py live_migrate):
        force-complete finishes it, abort stops it. Progress, when the
        copy is long enough to report it, is one guarded write (the
        migration's columns and the server's percent). Returns the final
        progress values (for the next step to write)."""
        last = [time.monotonic()]
        # The transfer's own row: running, migrating, both kept as they are.
        keep = moves.guard_of(live, TRANSFER, 'progress')

        def report(values, fraction):
            now = time.monotonic()
            if now - last[0] < PROGRESS_INTERVAL:
                return
            last[0] = now
            self.conductor.move_advance(
                ctxt, migration['uuid'], values=values, **keep,
                # The server's own progress field, like Nova's.
                instance_values={'progress': int(100 * fraction)})

        data = dict(migrate_data or {}, migration_uuid=migration['uuid'])
        return self.driver.live_migrate(instance_uuid, data, control, sizes,
                                        report)

    def _rollback(self, ctxt, instance_uuid, migration, dest, exc,
                  status, dest_prepared, event=None, newest=False):
        """move_failed: the server stays on this host, its allocation
        back (the destination claim dropped), task_state cleared,
        migration ``status``; then the destination cleans up. True when
        rolled back; False when the migration settled otherwise first
        (then a copy here of a server that now lives elsewhere goes).
        ``event``: the source's event to close as Error in the same
        transaction (chained, or a restart: ``newest``)."""
        return self.notifier.run(
            ctxt, instance_uuid, 'live_migration_rollback',
            lambda: self._undo(ctxt, instance_uuid, migration, dest,
                                       exc, status, dest_prepared, event,
                                       newest))

    def _undo(self, ctxt, instance_uuid, migration, dest, exc,
                      status, dest_prepared, event, newest):
        failed = self._move_failed(
            ctxt, migration['uuid'], exc,
            **moves.fail_guard(live, 'live_migration'), status=status,
            instance_values={'progress': 0},
            expected_values={'source_compute': self.host}, event=event,
            newest_action=newest)
        if failed is None:
            self._drop_copy_unless_here(ctxt, instance_uuid)
            return False
        # The server stays here: a guest the transfer left paused runs on.
        try:
            self.driver.rollback_live_migration_at_source(instance_uuid)
        except Exception:
            LOG.exception('Could not resume %s on %s', instance_uuid,
                          self.host)
        if dest_prepared and dest:
            try:
                self.compute_rpcapi.rollback_live_migration_at_destination(
                    ctxt, dest, instance_uuid, migration['uuid'])
            except Exception:
                LOG.exception('Could not ask %s to clean up %s', dest,
                              instance_uuid)
        return True

    def _runs(self, migration):
        """The controls of ``migration``'s runs here (under _lock)."""
        runs = []
        for key in (migration['id'], migration['uuid']):
            for control in self._controls.get(key, ()):
                if control not in runs:
                    runs.append(control)
        return runs
