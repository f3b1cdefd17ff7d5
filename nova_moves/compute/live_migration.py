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

Abort and force-complete are casts from the API to the source; each is
one guarded call (moves/live.py CONTROL_GUARDS, its event in it) that
flags the running (or queued/preparing, 2.65) migration, which acts on
the flag at its next step.

Chained (compute RPC 1.6, conductor compute_db 1.6; compute/live_steps.py)
the source makes no conductor call between the conductor's cast and the
destination's take-over: 8 calls per live migration instead of 21."""
import threading

from oslo_log import log as logging
import oslo_messaging as messaging

from nova_moves.compute import base
from nova_moves.compute import live_steps
from nova_moves.compute import rpcapi as compute_rpcapi
from nova_moves import conf
from nova_moves import exception
from nova_moves import instance_actions
from nova_moves import moves
from nova_moves.moves import live
from nova_moves import notifications
from nova_moves import states
from nova_moves import timeutil

CONF = conf.CONF
LOG = logging.getLogger(__name__)
wrap_instance_event = instance_actions.wrap_instance_event
notify_action = notifications.notify_action

# Re-exported: the names the transfer uses (compute/live_steps.py).
MIB, GIB = live_steps.MIB, live_steps.GIB
PROGRESS_INTERVAL = live_steps.PROGRESS_INTERVAL
POLL_INTERVAL = live_steps.POLL_INTERVAL
LiveMigrationAborted = live_steps.LiveMigrationAborted
_Control = live_steps.Control


class LiveMigrationEndpoint(live_steps.LiveSteps):
    """The live migration's steps and controls (its guarded writes and
    transfer: compute/live_steps.py)."""
    target = messaging.Target(version=compute_rpcapi.ComputeAPI.VERSION)

    def __init__(self, deps):
        super().__init__(deps)
        self._lock = threading.Lock()
        limit = CONF.max_concurrent_live_migrations
        self._slots = threading.BoundedSemaphore(limit) if limit else None
        # migration id and uuid -> the _Controls of its runs here (a
        # chained source knows only the uuid, the abort and force-complete
        # casts name the id; two deliveries of the cast run until the
        # destination's guard refuses one)
        self._controls = {}
        self._early_aborts = set()  # aborts that beat the transfer cast

    # -- pre-checks -----------------------------------------------------------
    def check_can_live_migrate_destination(self, ctxt, instance_uuid,
                                           block_migration, migration_uuid,
                                           report_events=False, facts=None):
        """1.6 ``report_events``: this check's event and the source's come
        back under '_events' (the conductor records them with its next
        step); ``facts``: the server and the memory this host's other
        servers take, sent by the conductor (else read here)."""
        def check():
            instance, used = (facts['instance'], facts['memory_mb_used']) \
                if facts else (self._instance(ctxt, instance_uuid), None)
            info = self.driver.node_info()
            self._check_free_memory(ctxt, instance, info, used)
            dest_check_data = {'dest_host': self.host,
                               'dest_ip': info['host_ip'],
                               'hypervisor_type': info['hypervisor_type'],
                               'cpu_model': info['cpu_model'],
                               'block_migration': block_migration}
            return self.compute_rpcapi.check_can_live_migrate_source(
                ctxt, instance['host'], instance_uuid, dest_check_data,
                report_events=report_events)
        return self._checked(ctxt, instance_uuid,
                             'compute_check_can_live_migrate_destination',
                             report_events, check)

    def _check_free_memory(self, ctxt, instance, info, used=None):
        """Physical memory left on this host, without over-commit
        (``used``: what its other servers take, when the caller knows)."""
        if used is None:
            used = sum(
                i['flavor']['memory_mb'] for i in
                self.conductor.instance_get_all_by_host(ctxt, self.host)
                if i['uuid'] != instance['uuid'] and i.get('flavor'))
        avail = info['memory_mb'] - info['reserved_host_memory_mb'] - used
        wanted = instance['flavor']['memory_mb']
        if avail < wanted:
            raise exception.MigrationPreCheckError(
                reason='Unable to migrate %s to %s: Lack of memory(host:%d '
                       '<= instance:%d)' % (instance['uuid'], self.host,
                                            avail, wanted))

    def check_can_live_migrate_source(self, ctxt, instance_uuid,
                                      dest_check_data, report_events=False):
        return self._checked(
            ctxt, instance_uuid, 'compute_check_can_live_migrate_source',
            report_events,
            lambda: self._check_source(instance_uuid, dest_check_data))

    def _check_source(self, instance_uuid, dest_check_data):
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
    @notify_action('live_migration_pre')
    def pre_live_migration(self, ctxt, instance_uuid, migration_uuid,
                           migrate_data, source=None, progress=None):
        """1.6 ``source`` (chained): nothing here a stale call could harm
        comes before the end, so the guard is the end's one transaction,
        which also writes the source's start (live_steps.py)."""
        name = 'compute_pre_live_migration'
        if not source:
            with instance_actions.event(self.event_backend, ctxt,
                                        instance_uuid, name, host=self.host,
                                        whole=True):
                self._guard(ctxt, migration_uuid, 'pre_live_migration',
                            'start', dest_compute=self.host)
                return self._prepare(instance_uuid, migrate_data)
        started = timeutil.utcnow_iso()
        try:
            answer = self._prepare(instance_uuid, migrate_data)
        except Exception as exc:
            self._record_error(ctxt, instance_uuid, name, exc, started)
            raise
        self._chained_running(ctxt, migration_uuid, source, progress,
                              started)
        return answer

    def _prepare(self, instance_uuid, migrate_data):
        """The hypervisor made ready to receive the guest; its answer
        (where to send memory and disks) goes back to the source."""
        migrate_data = dict(migrate_data or {})
        migrate_data.update(self.driver.pre_live_migration(
            instance_uuid, migrate_data.get('flavor'), migrate_data))
        return migrate_data

    @notify_action('live_migration_post_dest')
    def post_live_migration_at_destination(self, ctxt, instance_uuid,
                                           migration_uuid, source=None,
                                           transferred=None):
        """1.6 ``source`` (chained): the start also ends the source's
        transfer (``transferred``: its final progress) and the end closes
        the source's event."""
        name = 'compute_post_live_migration_at_destination'
        rows = self._post_start(ctxt, migration_uuid, source, transferred)
        events = [live_steps.event(live_steps.SOURCE_EVENT, source,
                                   'Success')] if source else None
        try:
            self._take_over(ctxt, instance_uuid, migration_uuid, rows,
                            events)
        except Exception as exc:
            self._record_error(ctxt, instance_uuid, name, exc)
            raise

    @wrap_instance_event('compute', whole=True)
    @notify_action('live_migration_rollback_dest')
    def rollback_live_migration_at_destination(self, ctxt, instance_uuid,
                                               migration_uuid):
        # Drop whatever copy arrived -- never the one the server runs as
        # (a late or duplicate rollback after the destination won).
        self._drop_copy_unless_here(ctxt, instance_uuid)

    # -- source: the transfer -------------------------------------------------
    def live_migration(self, ctxt, instance_uuid, dest, migration_uuid,
                       migrate_data, chained=False):
        """1.6 ``chained``: no conductor call here on the way (the
        destination writes this step's start and end; a stale or
        duplicate cast is refused by its guard, the conductor's cast
        carries the server's flavor for the transfer's totals)."""
        migrate_data = dict(migrate_data or {})
        chained = bool(chained and migrate_data.get('flavor') and
                       self.compute_rpcapi.can_chain_live_steps())
        if chained:
            self._source(ctxt, instance_uuid, dest,
                         {'uuid': migration_uuid, 'id': None},
                         migrate_data, None)
            return
        with instance_actions.event(self.event_backend, ctxt, instance_uuid,
                                    live_steps.SOURCE_EVENT, host=self.host):
            # Rolled back meanwhile (this host restarted with the cast
            # still in its queue, a duplicate delivery): nothing to do.
            rows = self._advance(ctxt, migration_uuid, None,
                                 expected_values={'source_compute': self.host},
                                 **moves.guard_of(live, 'live_migration',
                                                  'start'))
            if rows is None:
                return
            self._source(ctxt, instance_uuid, dest, rows['migration'],
                         migrate_data, rows)

    def _source(self, ctxt, instance_uuid, dest, migration, migrate_data,
                rows):
        control = _Control()
        keys = {k for k in (migration['id'], migration['uuid'])
                if k is not None}
        with self._lock:
            for key in keys:
                self._controls.setdefault(key, []).append(control)
            if keys & self._early_aborts:
                self._early_aborts -= keys
                control.abort.set()
        try:
            if not self._wait_for_slot(control):
                self._rollback(ctxt, instance_uuid, migration, dest,
                               None, states.M_CANCELLED,
                               dest_prepared=False,
                               event=None if rows else
                               live_steps.SOURCE_EVENT)
                return
            try:
                self._run(ctxt, instance_uuid, migration, dest,
                          migrate_data, control, rows)
            finally:
                if self._slots is not None:
                    self._slots.release()
        finally:
            with self._lock:
                for key in keys:
                    runs = self._controls.get(key, [])
                    if control in runs:
                        runs.remove(control)
                    if not runs:
                        self._controls.pop(key, None)

    # -- abort and force-complete (casts from the API) ------------------------
    @notify_action('live_migration_abort')
    def live_migration_abort(self, ctxt, instance_uuid, migration_id):
        migration = self._control_step(ctxt, 'live_migration_abort',
                                       migration_id)
        if migration is None:
            return
        # Under the lock live_migration() registers its control with, so
        # the abort is either seen by a running transfer or left for the
        # transfer cast that has not been handled yet.
        with self._lock:
            controls = self._runs(migration)
            for control in controls:
                control.abort.set()
            if not controls:
                self._early_aborts.update(
                    k for k in (migration['id'], migration['uuid'])
                    if k is not None)

    @notify_action('live_migration_force_complete')
    def live_migration_force_complete(self, ctxt, instance_uuid,
                                      migration_id):
        migration = self._control_step(
            ctxt, 'live_migration_force_complete', migration_id)
        with self._lock:
            controls = self._runs(migration) if migration else []
            for control in controls:
                control.force_complete.set()
        if not controls:
            LOG.info('Nothing to force-complete: migration %s is not '
                     'running on %s', migration_id, self.host)

    # -- 1.1: asked by the stuck-move sweep -----------------------------------
    def live_migration_status(self, ctxt, migration_uuid):
        """True while this host runs (or queues) the live migration (its
        control is known by uuid: no conductor call)."""
        with self._lock:
            return migration_uuid in self._controls

def _undoable():
    # What the source's rollback accepts: every status of its run.
    return {'status': moves.fail_guard(live, 'live_migration')[
        'expected_status']}


class LiveRecovery(base.Steps):
    """At start-up (not an RPC endpoint): what this host's live
    migrations left when it stopped, undone through the endpoint's
    rollback (``steps``, given explicitly)."""

    def __init__(self, deps, steps):
        super().__init__(deps)
        self.steps = steps  # the LiveMigrationEndpoint of this host

    def run(self, ctxt):
        """A live migration this host was running when it stopped cannot
        go on: roll it back, it ends ``failed`` with a fault, and the
        source's event of it is closed as Error. Then no copy of a server
        that lives elsewhere stays here."""
        for migration in self.conductor.migration_get_all(
                ctxt, source_compute=self.host,
                migration_type=states.LIVE_MIGRATION,
                **_undoable()):
            LOG.warning('Rolling back live migration %s of %s left %s',
                        migration['id'], migration['instance_uuid'],
                        migration['status'])
            exc = exception.MoveInterruptedByRestart(
                host=self.host, step='live_migration',
                migration=migration['uuid'])
            # The event the dead handler opened, on the move's action
            # (this context has no request id of its own).
            self.steps._rollback(ctxt, migration['instance_uuid'], migration,
                                 migration['dest_compute'], exc,
                                 states.M_FAILED, dest_prepared=True,
                                 event=live_steps.SOURCE_EVENT, newest=True)
        self._remove_leftovers(ctxt)

    def _remove_leftovers(self, ctxt):
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
            self.steps._drop_copy_unless_here(ctxt, instance_uuid)
