"""Cross-cell resize and cold migrate: the way there (doc/cells.md
"Cross-cell resize", the table in nova_moves/moves/cross_cell.py).

Run by the source cell's conductor when the same-cell task found no
host in its cell and the API's policy check allowed leaving it
(``compute:servers:resize:cross_cell``). The migration exists already
(db cold_move_start: pre-migrating, the source allocation parked on
its uuid). Each step: the hypervisor's part by an RPC call to the
compute (in its cell), then the step's guarded transition in the
cell the server is mapped to; the other cell's copy follows.

rollback() undoes a failure before the mapping flipped: the target
cell's guest, copy, migration and claim go, the source guest is powered
back on, and move_failed in the source cell hands the allocation back
and clears the task_state (as a cold move's undo).
"""
from oslo_log import log as logging

from nova_moves import cells
from nova_moves.conductor import cell_clients
from nova_moves.conductor import db_proxy
from nova_moves.conductor.tasks import base
from nova_moves.conductor.tasks import cross_cell_group
from nova_moves.conductor.tasks import cross_cell_settle
from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves.db import cross_cell as cc_db
from nova_moves.db import mappings
from nova_moves import exception
from nova_moves import faultinfo
from nova_moves import moves
from nova_moves.moves import cross_cell
from nova_moves import states

CONF = conf.CONF
LOG = logging.getLogger(__name__)
CONDUCTOR_STEP = 'conductor.migrate_server'


def guard(name, phase='end'):
    return moves.guard_of(cross_cell, name, phase)


class CrossCellMigrationTask(base.TaskBase):

    def __init__(self, ctxt, instance_uuid, migration, flavor, spec, db,
                 clients, event=None):
        """``event``: a callable giving move_advance's event argument
        (the conductor's event, written with its step)."""
        super().__init__(ctxt, instance_uuid)
        self.migration = migration
        self.flavor = flavor
        self.spec = dict(spec, consumer_generation=None)
        self.db = db
        self.clients = clients
        self.event = event
        self.source_cell = cell_clients.own_cell()
        self.target_cell = None
        self.selection = None
        self.image_id = None
        self.step = CONDUCTOR_STEP
        self.guest_off = False

    # -- execute -----------------------------------------------------------
    def execute(self):
        self._schedule()
        self._prep_dest()
        self._prep_source()
        self._finish_dest()
        return self.migration

    def _advance(self, name, phase='end', **kwargs):
        """The step's transition in the source cell (where the server is
        mapped until the flip), its copy in the target cell following."""
        self.migration = self.db.move_advance(
            self.ctxt, self.migration['uuid'], **guard(name, phase),
            **kwargs)['migration']
        with cells.target(self.target_cell):
            cc_db.migration_set(self.migration['uuid'],
                                {'status': self.migration['status']})

    def _schedule(self):
        """The first enabled other cell whose scheduler claims a host
        (its own placement); the server's copy there, hidden, and the
        migration in both cells. A server group member joins the group
        in each cell asked, so that its scheduler sees the group."""
        group = cross_cell_group.group_of(self.instance_uuid)
        cross_cell_group.check_may_leave(group, self.instance_uuid)
        for target in cell_clients.other_cells():
            try:
                with cells.target(target):
                    cross_cell_group.join_target(group, self.instance_uuid)
                    self.selection = self.clients.scheduler(
                        target).select_destinations(
                        self.ctxt, self.spec, [self.instance_uuid],
                        return_alternates=False)[0][0]
            except exception.NoValidHost as exc:
                LOG.info('Cell %s has no host for %s: %s', target.name,
                         self.instance_uuid, exc)
                cross_cell_group.leave_target(target, group,
                                              self.instance_uuid)
                continue
            except Exception:
                # A cell that cannot be asked (its broker or scheduler
                # down) is passed over, as a boot passes it over.
                LOG.exception('Cell %s could not schedule %s', target.name,
                              self.instance_uuid)
                cross_cell_group.leave_target(target, group,
                                              self.instance_uuid)
                continue
            self.target_cell = target
            break
        if self.target_cell is None:
            raise exception.NoValidHost(
                reason='No valid host in any cell (cross-cell resize '
                       'allowed).')
        # The row's end first: from here the migration names the target
        # (the sweep finds its cell from dest_compute's host mapping),
        # then the copies there.
        self.migration = self.db.move_advance(
            self.ctxt, self.migration['uuid'], **guard(CONDUCTOR_STEP),
            values={'dest_compute': self.selection['host'],
                    'dest_node': self.selection['nodename'],
                    'dest_host': self.selection['host'],
                    'cross_cell_move': True},
            **(self.event() if self.event else {}))['migration']
        rows = cc_db.server_rows(self.instance_uuid)
        with cells.target(self.target_cell):
            cc_db.server_copy(rows, hidden=True)
            cc_db.migration_copy(self.migration)
        LOG.info('Cross-cell migration %s of %s: %s in cell %s',
                 self.migration['uuid'], self.instance_uuid,
                 self.selection['host'], self.target_cell.name)

    def _record(self, name, host, started):
        """The step's event (the row's name), whole, on the move's
        action in the target cell, where the server's actions are read
        from once it is there (the source cell's copy of the action was
        copied at the conductor's step). Best effort: a missing action
        (a move a service started) records nothing."""
        try:
            with cells.target(self.target_cell):
                db_api.action_event_finish(
                    self.instance_uuid, self.ctxt.request_id,
                    moves.step_named(cross_cell, name).event, 'Success',
                    host=host, start_time=started)
        except Exception as exc:
            LOG.debug('No event %s for %s: %s', name, self.instance_uuid,
                      exc)

    def _dest(self):
        return self.clients.compute(self.target_cell)

    def _source(self):
        return self.clients.compute(self.source_cell)

    def _prep_dest(self):
        self.step = 'prep_snapshot_based_resize_at_dest'
        started = db_api.utcnow().isoformat()
        self._dest().prep_snapshot_based_resize_at_dest(
            self.ctxt, self.selection['host'], self.instance_uuid,
            self.migration['uuid'], self.flavor)
        # Its guard: still this move's, nothing written.
        self._advance(self.step)
        self._record(self.step, self.selection['host'], started)

    def _prep_source(self):
        self.step = 'prep_snapshot_based_resize_at_source'
        self._advance(self.step, 'start')
        started = db_api.utcnow().isoformat()
        self.guest_off = True
        self.image_id = self._source().prep_snapshot_based_resize_at_source(
            self.ctxt, self.migration['source_compute'], self.instance_uuid,
            self.migration['uuid'])
        self._advance(self.step)
        self._record(self.step, self.migration['source_compute'], started)

    def _finish_dest(self):
        self.step = 'finish_snapshot_based_resize_at_dest'
        instance = self.db.instance_get(self.ctxt, self.instance_uuid)
        stopped = instance['vm_state'] == states.STOPPED
        self._advance(self.step, 'start')
        started = db_api.utcnow().isoformat()
        power = self._dest().finish_snapshot_based_resize_at_dest(
            self.ctxt, self.selection['host'], self.instance_uuid,
            self.migration['uuid'], self.flavor, self.image_id, stopped)
        # The flip: the target copy shown on its new host, the mapping
        # to the target cell, then the source step's end (the source
        # copy hidden). Until the mapping moves the API shows the source
        # copy; a failure before it is undone as any other step's.
        end = moves.step_named(cross_cell, self.step).end
        with cells.target(self.target_cell):
            cc_db.server_set(self.instance_uuid, {
                'host': self.selection['host'],
                'node': self.selection['nodename'],
                'flavor': self.flavor,
                'vm_state': states.RESIZED, 'task_state': end.to_task,
                'power_state': power, 'hidden': False})
            cc_db.migration_set(self.migration['uuid'], {
                'status': end.to_status,
                'dest_compute': self.selection['host'],
                'dest_node': self.selection['nodename'],
                'dest_host': self.selection['host']})
        self._record(self.step, self.selection['host'], started)
        cc_db.mapping_set_cell(self.instance_uuid, self.target_cell.uuid)
        self.step = None  # flipped: the server is the target cell's now
        self.migration = self.db.move_advance(
            self.ctxt, self.migration['uuid'],
            **guard('finish_snapshot_based_resize_at_dest'),
            instance_values={'hidden': True, 'vm_state': states.RESIZED}
        )['migration']
        LOG.info('Cross-cell migration %s of %s finished on %s (cell %s)',
                 self.migration['uuid'], self.instance_uuid,
                 self.selection['host'], self.target_cell.name)

    # -- rollback ----------------------------------------------------------
    def rollback(self, exc):
        if self.target_cell is None:
            return  # no cell had room: the same-cell task's undo
        if self.step is None:
            # Only the source side's last write is left: the sweep
            # finishes it from the database (sweep_stalled).
            LOG.error('Cross-cell migration %s of %s failed after its '
                      'mapping flipped (the stuck-move sweep hides its '
                      'source copy): %s', self.migration['uuid'],
                      self.instance_uuid, exc)
            return
        undo_before_flip(self.ctxt, self.db, self.clients, self.migration,
                         self.target_cell, self.source_cell, self.step,
                         self.guest_off,
                         faultinfo.from_exc(exc, CONF.host))


def undo_before_flip(ctxt, db, clients, migration, target_cell, source_cell,
                     step, guest_off=True,
                     fault=None, claimed=None):
    """The undo of a cross-cell move that failed (or stalled: the sweep)
    at ``step``, before its mapping flipped: the target cell's guest,
    copy, migration and claim go, then the source guest runs again and
    move_failed (in the source cell) hands the allocation back and
    clears the task_state. Each part is tried; the source's undo runs
    whatever the target's did."""
    instance_uuid = migration['instance_uuid']
    if target_cell is not None:
        try:
            if migration.get('dest_compute'):
                clients.compute(target_cell) \
                    .revert_snapshot_based_resize_at_dest(
                        ctxt, migration['dest_compute'], instance_uuid,
                        migration['uuid'])
        except Exception:
            LOG.exception('Could not remove the destination guest of %s',
                          migration['uuid'])
        with cells.target(target_cell):
            cc_db.server_purge(instance_uuid)
            db_api.allocations_delete(instance_uuid)
    if guest_off:
        try:
            instance = db.instance_get(ctxt, instance_uuid)
            clients.compute(source_cell) \
                .finish_revert_snapshot_based_resize_at_source(
                    ctxt, migration['source_compute'], instance_uuid,
                    migration['uuid'],
                    instance['old_flavor'] or instance['flavor'],
                    instance['vm_state'] == states.STOPPED)
        except Exception:
            LOG.exception('Could not power the source guest of %s back on',
                          migration['uuid'])
    try:
        db.move_failed(ctxt, migration['uuid'],
                       **moves.fail_guard(cross_cell, step), fault=fault,
                       **({'claimed': claimed} if claimed else {}))
    except exception.MoveConflict as conflict:
        LOG.info('Cross-cell migration %s settled elsewhere: %s',
                 migration['uuid'], conflict)


def _clients():
    """Cell clients for a caller that brought none (the conductor passes
    its own: conductor/manager.py cell_clients)."""
    return cell_clients.CellClients()


def _finish_flip(migration, instance, mapping):
    """The finish step's source-side end, when its conductor failed
    between the flip and it (this cell's database was down, or the
    conductor died): this copy hidden, the migration at the step's end,
    as _finish_dest writes them. True when written."""
    name = 'finish_snapshot_based_resize_at_dest'
    end = moves.step_named(cross_cell, name).end
    dest = migration.get('dest_compute') and mappings.host_mapping_get(
        migration['dest_compute'])
    if not dest or dest['cell_uuid'] != mapping['cell_uuid'] or \
            not end.accepts(migration['status'], instance['task_state']):
        return False
    claimed = db_api.move_claim(migration['uuid'], migration['status'],
                                migration['updated_at'])
    if claimed is None:
        return False
    try:
        db_api.move_advance(migration['uuid'], **guard(name),
                            instance_values={'hidden': True,
                                             'vm_state': states.RESIZED},
                            claimed=claimed)
    except exception.MoveConflict as conflict:
        LOG.info('Cross-cell migration %s settled elsewhere: %s',
                 migration['uuid'], conflict)
        return False
    LOG.info('Cross-cell migration %s: its source copy hidden after the '
             'flip its conductor did not finish', migration['uuid'])
    return True


def _stalled_step(migration, task_state):
    """The row of the way there a stalled move is at (None: past the
    flip, or not this table's)."""
    for row in cross_cell.STEPS:
        if row.name in cross_cell.BEFORE_FLIP and \
                row.accepts(migration['status'], task_state):
            return row
    return None


def sweep_stalled(ctxt, migration, db=None, clients=None):
    """The stuck-move sweep's answer for a cross-cell migration in this
    cell: only the copy the server is mapped to is acted on (the hidden
    copy follows it). Before the flip every row says ROLL_BACK: its
    conductor died mid-flow (its calls to the computes keep touching the
    migration while it lives). A confirm or revert says REDRIVE: it is
    run again. True when undone or run."""
    db = db or _DbDoor()
    if clients is None:
        clients = _clients()
    try:
        instance = db_api.instance_get(migration['instance_uuid'])
    except exception.InstanceNotFound:
        return False
    if instance.get('hidden') or not cell_clients.available():
        return False
    mapping = mappings.instance_mapping_get(migration['instance_uuid'])
    own = cell_clients.own_cell()
    if mapping is None or own is None:
        return False
    if mapping['cell_uuid'] != own.uuid:
        # The mapping flipped already: the server is the target cell's
        # and undoing here would lose it; the source side's last write
        # (hide this copy) is finished instead.
        return _finish_flip(migration, instance, mapping)
    settle = _stalled_settle(migration, instance['task_state'])
    if settle is not None:
        return _redrive(ctxt, migration, settle, clients)
    row = _stalled_step(migration, instance['task_state'])
    if row is None or row.sweep != moves.ROLL_BACK:
        return False
    claimed = db_api.move_claim(migration['uuid'], migration['status'],
                                migration['updated_at'])
    if claimed is None:
        return False  # another conductor has it, or it moved on
    target = None
    if migration.get('dest_compute'):
        mapping = mappings.host_mapping_get(migration['dest_compute'])
        target = mapping and cell_clients.cell(mapping['cell_uuid'])
    if _still_running(ctxt, migration, row, target, clients):
        # Only slow (a long spawn): the claim touched the migration, so
        # it is not looked at again before its next timeout.
        LOG.info('Cross-cell step %s of %s is still running; waiting',
                 row.name, migration['uuid'])
        return False
    message = ('Cross-cell move step %s of migration %s did not finish '
               'in time (its conductor died); rolled back'
               % (row.name, migration['uuid']))
    LOG.warning(message)
    undo_before_flip(ctxt, db, clients, migration, target,
                     cell_clients.own_cell(), row.name,
                     guest_off=migration['status'] != states.M_PRE_MIGRATING,
                     fault={'code': 500, 'message': message,
                            'host': CONF.host}, claimed=claimed)
    return True


def _stalled_settle(migration, task_state):
    """The confirm or revert row a stalled settle is at (REDRIVE), or
    None."""
    for row in cross_cell.STEPS:
        if row.sweep == moves.REDRIVE and \
                row.accepts(migration['status'], task_state):
            return row
    return None


def _redrive(ctxt, migration, row, clients):
    """A confirm or revert whose conductor died (the migration still
    confirming or reverting past the timeout): claimed by one conductor,
    and unless the step's compute still runs it, run again from its
    start (every part is re-entrant: a guest or rows already gone are
    not an error). True when run."""
    claimed = db_api.move_claim(migration['uuid'], migration['status'],
                                migration['updated_at'])
    if claimed is None:
        return False  # another conductor has it, or it moved on
    host = (migration['source_compute'] if row.host == moves.SOURCE
            else migration['dest_compute'])
    mapping = mappings.host_mapping_get(host)
    cell = mapping and cell_clients.cell(mapping['cell_uuid'])
    if cell is not None and _asked(ctxt, clients, cell, host, migration):
        LOG.info('Cross-cell %s of %s is still running; waiting',
                 row.name, migration['uuid'])
        return False
    LOG.warning('Cross-cell %s of migration %s did not finish in time '
                '(its conductor died); running it again', row.name,
                migration['uuid'])
    settle = (cross_cell_settle.confirm
              if row.name == cross_cell_settle.CONFIRM
              else cross_cell_settle.revert)
    settle(ctxt, db_proxy.ComputeDBProxy(), clients, migration['uuid'])
    return True


def _asked(ctxt, clients, cell, host, migration):
    try:
        return bool(clients.compute(cell).move_step_status(
            ctxt, host, migration['uuid']))
    except Exception:
        LOG.exception('Could not ask %s about %s', host, migration['uuid'])
        return False


def _still_running(ctxt, migration, row, target, clients):
    """Whether the row's compute still runs its step (a short call, as
    the cold sweep asks): a conductor's own step has nobody to ask."""
    if row.host == moves.CONDUCTOR or (row.host == moves.DEST and
                                       target is None):
        return False
    cell, host = ((target, migration['dest_compute'])
                  if row.host == moves.DEST else
                  (cell_clients.own_cell(), migration['source_compute']))
    return _asked(ctxt, clients, cell, host, migration)


class _DbDoor:
    """db_api with the conductor proxy's signature (ctxt first)."""

    def instance_get(self, ctxt, instance_uuid):
        return db_api.instance_get(instance_uuid)

    def move_failed(self, ctxt, migration_id, **kwargs):
        return db_api.move_failed(migration_id, **kwargs)
