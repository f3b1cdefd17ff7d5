"""The three move operations, each one transaction.

- move_start: the API's start of a move: compare-and-swap of task_state
  (None -> the move's), the instance action, and the migration row when
  the move has one.
- move_advance: one step of a move: migration status and task_state both
  compare-and-swapped, optional values, an allocation change and the
  step's instance event. Raises MoveConflict, writing nothing, when
  either row moved on: the message that asked for the step is stale.
- move_failed: the one undo. The migration's allocation (the source
  half) goes back to the server, which drops any destination claim; the
  migration gets its failed status; the server is put back where the move
  found it and its task_state cleared, only while it is still this
  move's; a fault and an Error event say why.

Steps and allocation changes are named the same on every path, so a
duplicate or late message meets a row that has moved on and is refused
instead of acting on what the message said.
"""
import functools
import uuid as uuidlib

import sqlalchemy as sa

from nova_moves import exception
from nova_moves import moves
from nova_moves import states
from nova_moves.db import models
from nova_moves.db.actions import _action_start_in, events_in
from nova_moves.db.allocations import (_allocations_of, _delete_in, _move_in,
                                       _replace_in, _with_cas_retry)
from nova_moves.db.instances import (_encode_instance_values,
                                     _instance_row, _instance_row_dict)
from nova_moves.db import fault_text
from nova_moves.db import phases
from nova_moves.db import step_sql
from nova_moves.db.step_sql import (_as_list, _bound, _conflict, _in,
                                    _in_params, _migration_row)
from nova_moves.db.session import (_parse_time,
                                   _row_dict, _tx,
                                   utcnow)

# Core tables: every move step runs these statements, and ORM objects
# (identity map, attribute instrumentation, flush) cost more CPU than
# the statements themselves. The hot statements are built once with
# bind parameters: building a statement and its cache key costs about
# three times what executing it does (SQLite, measured).
_MIGRATIONS = models.Migration.__table__
_INSTANCES = models.Instance.__table__
_ACTIONS = models.InstanceAction.__table__
_FAULTS = models.InstanceFault.__table__
_bp = sa.bindparam


@functools.lru_cache(maxsize=32)
def _start(vm_count, on_host):
    """move_start: the task_state CAS (also on the host, with b_host)."""
    query = _INSTANCES.update().where(
        _INSTANCES.c.uuid == _bp('b_uuid'), _INSTANCES.c.deleted == 0,
        _INSTANCES.c.task_state.is_(None),
        _in(_INSTANCES.c.vm_state, 'b_vm', vm_count)).values(
        task_state=_bp('v_task_state'), updated_at=_bp('v_now'))
    return query.where(_INSTANCES.c.host == _bp('b_host')) if on_host \
        else query

_NEWEST_REQUEST_ID = (
    sa.select(_ACTIONS.c.request_id)
    .where(_ACTIONS.c.instance_uuid == _bp('b_uuid'))
    .order_by(_ACTIONS.c.id.desc()).limit(1))

# From the step tables (nova_moves/moves): the task_states each type of
# move sets (move_failed only clears one of these) and the statuses in
# which a migration may still hold something to give back.
MOVE_TASK_STATES = moves.MOVE_TASK_STATES
_UNSETTLED = moves.UNSETTLED
failed_instance_values = moves.failed_instance_values


_CLAIM = (_MIGRATIONS.update()
          .where(_MIGRATIONS.c.uuid == _bp('b_uuid'),
                 _MIGRATIONS.c.status == _bp('b_status'),
                 _MIGRATIONS.c.updated_at == _bp('b_stamp'))
          .values(updated_at=_bp('v_now')))
_CLAIM_NEW = (_MIGRATIONS.update()
              .where(_MIGRATIONS.c.uuid == _bp('b_uuid'),
                     _MIGRATIONS.c.status == _bp('b_status'),
                     _MIGRATIONS.c.updated_at.is_(None))
              .values(updated_at=_bp('v_now')))
_STAMP = sa.select(_MIGRATIONS.c.updated_at).where(
    _MIGRATIONS.c.uuid == _bp('b_uuid'))


def move_claim(migration_uuid, status, updated_at):
    """The stuck-move sweep's claim on a stalled step, in the one
    statement that reads it: the migration's ``updated_at`` moves on
    only while it is still ``status`` and still the ``updated_at`` the
    sweep read (None: never touched). Of several conductors sweeping at
    once exactly one wins; a step that advanced meanwhile is not claimed.
    Returns the stamp as stored (pass it as ``claimed`` to move_advance
    or move_failed: they then write only if nothing touched the
    migration since), or None when the claim was lost."""
    with _tx() as session:
        params = {'b_uuid': migration_uuid, 'b_status': status,
                  'v_now': utcnow()}
        if updated_at is None:
            query = _CLAIM_NEW
        else:
            query = _CLAIM
            params['b_stamp'] = _parse_time(updated_at)
        if session.execute(query, params).rowcount != 1:
            return None
        # As stored: a database with coarser timestamps rounds it.
        return session.execute(_STAMP, {'b_uuid': migration_uuid}).scalar()


@functools.lru_cache(maxsize=256)
def _instance_update(keys, task_states, task_state_none, vm_states,
                     returning):
    """The guarded UPDATE of a step's server: WHERE uuid, not deleted,
    task_state in b_ts_* (``task_states``: their count) or NULL
    (``task_state_none``), vm_state in b_vm_* (``vm_states``: count);
    values bound as v_<column>."""
    query = _INSTANCES.update().where(_INSTANCES.c.uuid == _bp('b_uuid'),
                                      _INSTANCES.c.deleted == 0)
    conds = []
    if task_states:
        conds.append(_in(_INSTANCES.c.task_state, 'b_ts', task_states))
    if task_state_none:
        conds.append(_INSTANCES.c.task_state.is_(None))
    if conds:
        query = query.where(sa.or_(*conds))
    if vm_states:
        query = query.where(_in(_INSTANCES.c.vm_state, 'b_vm', vm_states))
    query = query.values({k: _bp('v_' + k) for k in keys})
    return query.returning(*_INSTANCES.c) if returning else query


def _record_event(session, instance_uuid, request_id, *events):
    """The step's instance events, in the step's transaction; a flow
    started by a service (recovery, auto-confirm) has no action for its
    request id and records none."""
    events = [e for e in events if e]
    if not events:
        return
    if any(e.get('action') == 'newest' for e in events):
        # A service's own flow closing an event of the move it finishes
        # (a restarted host): the move's action is the server's newest.
        newest = session.execute(_NEWEST_REQUEST_ID,
                                 {'b_uuid': instance_uuid}).scalar()
        request_id = newest or request_id
    if not request_id:
        return
    try:
        # Raises before anything is written.
        events_in(session, instance_uuid, request_id, events, lookup=False)
    except exception.ActionNotFound:
        pass


def _apply_allocations(session, migration, op):
    """The allocation change of a step, in its transaction:
    park_source   the server's allocation goes to the migration (the
                  start of a live migration or evacuation)
    drop_source   the migration's (source half) goes: confirm, completed
    return_source the source half goes back to the server, dropping its
                  destination claim: revert, failure
    drop_dest     the server's claim on ``host``'s tree goes (revert, on
                  the destination)
    claim         the server's allocation becomes ``allocations`` (a
                  reschedule to an alternate)"""
    if not op:
        return
    kind = op['op']
    if kind == 'park_source':
        _move_in(session, migration.instance_uuid, migration.uuid)
    elif kind == 'drop_source':
        _delete_in(session, migration.uuid)
    elif kind == 'return_source':
        if _allocations_of(session, migration.uuid):
            _move_in(session, migration.uuid, migration.instance_uuid)
    elif kind == 'drop_dest':
        _delete_in(session, migration.instance_uuid,
                   root_host=op.get('host'))
    elif kind == 'claim':
        _replace_in(session, migration.instance_uuid, op['allocations'])
    else:
        raise exception.Invalid(reason='unknown allocation op %s' % kind)


def _result(session, migration, written=None, instance=None):
    """{'migration', 'instance'} as they are now: the migration row read
    at the start with what this step ``written`` on it, and the
    ``instance`` row when the step's UPDATE returned it."""
    values = _row_dict(migration)
    for key, value in (written or {}).items():
        values[key] = value.isoformat() if hasattr(value, 'isoformat') \
            else value
    if instance is None:
        instance = _instance_row(session, migration.instance_uuid)
    return {'migration': values,
            'instance': _instance_row_dict(instance) if instance else None}


@_with_cas_retry
def move_start(instance_uuid, task_state, vm_states, action, request_id,
               user_id, project_id, migration=None, expected_host=None,
               read_back=True):
    """Start a move, all or nothing: task_state None -> ``task_state``
    (vm_state still in ``vm_states``, host still ``expected_host`` when
    given), the instance action, and the migration row from
    ``migration`` (values) when given. Returns {'instance', 'migration'}
    ('instance' None unless ``read_back``: the API's start does not use
    it, and reading it back was a statement and a row per request).
    Raises UnexpectedTaskState / InstanceInvalidState (409) with nothing
    written when another request got there first."""
    now = utcnow()
    with _tx() as session:
        params = dict(_in_params('b_vm', vm_states), b_uuid=instance_uuid,
                      v_task_state=task_state, v_now=now)
        if expected_host is not None:
            params['b_host'] = expected_host
        result = session.execute(
            _start(len(vm_states), expected_host is not None), params)
        if result.rowcount == 1:
            _action_start_in(session, instance_uuid, action, request_id,
                             user_id, project_id)
            row = None
            if migration is not None:
                values = dict(migration, instance_uuid=instance_uuid)
                values.setdefault('uuid', str(uuidlib.uuid4()))
                values['phases'] = phases.stamp(None, values['status'], now)
                session.execute(_MIGRATIONS.insert().values(**values))
                row = _row_dict(_migration_row(session, values['uuid']))
            return {'instance': _instance_row_dict(
                        _instance_row(session, instance_uuid))
                    if read_back else None, 'migration': row}
        current = _instance_row(session, instance_uuid, live_only=True)
    if current is None:
        raise exception.InstanceNotFound(instance_id=instance_uuid)
    if current.vm_state not in vm_states:
        raise exception.InstanceInvalidState(
            method=action, instance_uuid=instance_uuid, attr='vm_state',
            state=current.vm_state)
    if expected_host is not None and current.host != expected_host:
        raise exception.Conflict(reason='instance %s is no longer on %s'
                                 % (instance_uuid, expected_host))
    raise exception.UnexpectedTaskState(
        instance_uuid=instance_uuid, expected=[None],
        actual=current.task_state)


@_with_cas_retry
def move_advance(migration_id, status=None, task_state=None, values=None,
                 instance_values=None, expected_vm_state=None,
                 allocations=None, event=None, request_id=None,
                 expected_values=None, fault=None, claimed=None,
                 events=None, passed_phases=None):
    """One step of a move in one transaction.

    ``status`` and ``task_state`` are [expected] (a check) or [expected,
    new]; an expected value may be a list. ``values`` go on the
    migration, ``instance_values`` on the server, ``allocations`` is an
    op of _apply_allocations, ``event`` {name, result (None: start),
    traceback, host} is recorded under ``request_id``'s action,
    ``fault`` {code, message, details, host} on the server.
    ``expected_values`` are migration columns that must still hold (a
    step for one destination is stale once a reschedule chose another).
    ``events`` are more events of the same shape (a chained step records
    the previous step's end in its own transaction). ``claimed``
    (move_claim's stamp): the migration must not have been
    touched since the claim. ``passed_phases`` ([status, time] pairs)
    are statuses the move went through before ``status``'s new one
    without a write of their own (a chained live migration's
    'preparing', spent on the destination before its one call). The
    migration's updated_at moves on every
    step (the stuck-move sweep measures from it). Returns {'instance',
    'migration'} as they are now; raises MoveConflict, writing nothing,
    when either row moved on."""
    with _tx() as session:
        if session.dialect.update_returning:
            migration = step_sql.advance_returning(
                session, migration_id, status, values, expected_values,
                claimed, passed_phases)
            written = None
        else:
            migration, written = step_sql.advance_read_first(
                session, migration_id, status, values, expected_values,
                claimed, passed_phases)
        instance = None
        if task_state is not None or instance_values or expected_vm_state:
            instance = _advance_instance(session, migration, task_state,
                                         instance_values, expected_vm_state)
        _apply_allocations(session, migration, allocations)
        _add_fault(session, migration.instance_uuid, fault)
        _record_event(session, migration.instance_uuid, request_id,
                      *(events or ()), event)
        return _result(session, migration, written, instance)


def _add_fault(session, instance_uuid, fault):
    if fault:
        fault = fault_text.fault(session, fault)  # fit for the owner
        session.execute(_FAULTS.insert().values(
            instance_uuid=instance_uuid, code=fault.get('code') or 500,
            message=(fault.get('message') or 'move failed')[:255],
            details=fault.get('details'), host=fault.get('host')))


def _advance_instance(session, migration, task_state, instance_values,
                      expected_vm_state):
    """The server's half of a step; returns its row as it is now when the
    database can return it from the UPDATE (PostgreSQL, SQLite), else
    None (the caller reads it)."""
    inst_values = dict(instance_values or {})
    if task_state is not None and len(task_state) > 1:
        inst_values['task_state'] = task_state[1]
    inst_values = _encode_instance_values(inst_values)
    inst_values['updated_at'] = utcnow()
    params = _bound(inst_values)
    params['b_uuid'] = migration.instance_uuid
    expected = _as_list(task_state[0]) if task_state is not None else []
    task_states = [e for e in expected if e is not None]
    vm_states = _as_list(expected_vm_state) if expected_vm_state else []
    params.update(_in_params('b_ts', task_states))
    params.update(_in_params('b_vm', vm_states))
    returning = session.dialect.update_returning
    query = _instance_update(tuple(sorted(inst_values)), len(task_states),
                             None in expected, len(vm_states), returning)
    result = session.execute(query, params)
    row = result.first() if returning else None
    if (row is None) if returning else result.rowcount != 1:
        current = _instance_row(session, migration.instance_uuid)
        raise _conflict(migration, 'server is %s' % (
            'gone' if current is None or current.deleted else
            'task_state %s, vm_state %s' % (current.task_state,
                                           current.vm_state)))
    return row


@_with_cas_retry
def move_failed(migration_id=None, expected_status=None, status=states.M_ERROR,
                instance_values=None, fault=None, event=None,
                request_id=None, allocations='return_source',
                instance_uuid=None, task_states=None, expected_values=None,
                claimed=None):
    """The one undo of a move, in one transaction; see the module doc.

    ``expected_status`` (default: any status that still holds something)
    is compare-and-swapped to ``status``; ``claimed`` (move_claim's
    stamp) also requires that nothing touched the migration since the
    claim. ``fault`` is {code, message, details, host}; ``event`` {name,
    traceback, host} is closed as Error. ``allocations='keep'`` leaves
    them. A move that failed before its migration row existed names
    ``instance_uuid`` and the ``task_states`` it may clear instead.

    Settled is final: when another path settled or advanced the move
    first (the migration is no longer as expected, or the server no
    longer has one of ``task_states``), MoveConflict is raised and
    nothing at all is written: no fault, no event. Returns {'instance',
    'migration'}."""
    with _tx() as session:
        if migration_id is None:
            return _instance_failed(session, instance_uuid, task_states,
                                    instance_values, fault, event,
                                    request_id)
        migration = _migration_row(session, migration_id)
        instance_uuid = migration.instance_uuid
        expected = (_as_list(expected_status) if expected_status
                    else list(_UNSETTLED))
        for column, value in (expected_values or {}).items():
            if getattr(migration, column) != value:
                raise _conflict(migration, '%s is %s, not %s' % (
                    column, getattr(migration, column), value))
        now = utcnow()
        written = {'status': status, 'updated_at': now,
                   'phases': phases.stamp(migration.phases, status, now)}
        params = dict(_bound(written), b_id=migration.id,
                      **_in_params('b_status', expected))
        if claimed is not None:
            params['b_claimed'] = claimed
        result = session.execute(
            step_sql.migration_update(tuple(sorted(written)), len(expected),
                              claimed is not None), params)
        if result.rowcount != 1:
            raise _conflict(migration, 'migration is %s, expected %s%s' % (
                migration.status, expected,
                ' and untouched since the claim' if claimed else ''))
        if allocations == 'return_source':
            _apply_allocations(session, migration, {'op': 'return_source'})
        task_states = MOVE_TASK_STATES.get(migration.migration_type, ())
        instance = _instance_row(session, instance_uuid, live_only=True)
        if instance is not None and instance.task_state in task_states:
            inst_values = failed_instance_values(
                _row_dict(migration), _instance_row_dict(instance))
            inst_values.update(instance_values or {})
            _put_back(session, instance, inst_values)
        if instance is not None:
            _add_fault(session, instance_uuid, fault)
            if event:
                _record_event(session, instance_uuid, request_id,
                              dict(event, result='Error'))
        return _result(session, migration, written)


def _put_back(session, instance, values):
    """The server's half of the undo: ``values`` and task_state cleared,
    only while its task_state is still the one read; the rowcount."""
    values = dict(values, task_state=None, updated_at=utcnow())
    return session.execute(
        _INSTANCES.update()
        .where(_INSTANCES.c.id == instance.id,
               _INSTANCES.c.task_state == instance.task_state)
        .values(**_encode_instance_values(values))).rowcount


def _instance_failed(session, instance_uuid, task_states, instance_values,
                     fault, event, request_id):
    """move_failed of a move with no migration row yet: only while the
    server still has one of ``task_states`` (else the move got further,
    or another sweeper undid it: MoveConflict, nothing written)."""
    instance = _instance_row(session, instance_uuid, live_only=True)
    if instance is None or instance.task_state not in (task_states or ()) \
            or _put_back(session, instance, instance_values or {}) != 1:
        raise exception.MoveConflict(
            migration='(none)', instance_uuid=instance_uuid,
            reason='server is %s' % ('gone' if instance is None else
                                     'task_state %s' % instance.task_state))
    _add_fault(session, instance_uuid, fault)
    if event:
        _record_event(session, instance_uuid, request_id,
                      dict(event, result='Error'))
    instance = _instance_row(session, instance_uuid, live_only=True)
    return {'migration': None, 'instance': _instance_row_dict(instance)}
