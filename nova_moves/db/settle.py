"""The one start of a confirm or a revert of a resize or cold migration,
whoever asks: the API (confirmResize, revertResize), the source's
auto-confirm (through the conductor, compute_db 1.7) and a host drain.
Its guard is the 'request' phase of the step's row in the cold table
(nova_moves/moves/cold.py); what the step's cast then carries (compute
RPC 1.8) is read in the same transaction."""
import functools

import sqlalchemy as sa

from nova_moves.db.actions import _action_start_in
from nova_moves.db import models
from nova_moves.db import phases
from nova_moves.db import request_specs
from nova_moves.db.instances import _decode_json, _instance_row
from nova_moves.db.session import _row_dict, _tx, utcnow
from nova_moves import exception
from nova_moves import moves
from nova_moves.moves import cold
from nova_moves import states

__all__ = ['settle_start', 'settle_abandon']

_MIGRATIONS = models.Migration.__table__
_INSTANCES = models.Instance.__table__
_bp = sa.bindparam
# What the step's facts read of the server (cold.FACTS_COLUMNS), not its
# whole row.
_FACTS = [_INSTANCES.c[name] for name in cold.FACTS_COLUMNS]
_FACTS_OF = sa.select(*_FACTS).where(_INSTANCES.c.uuid == _bp('b_uuid'),
                                     _INSTANCES.c.deleted == 0)


def _task_is(column, value):
    return column.is_(None) if value is None else column == value


def _fixed(values):
    """IN (:p1, :p2): each value its own parameter, rendered once. A list
    given to in_() is an expanding parameter, rendered into the SQL again
    at every execution (step_sql._in says how much that costs)."""
    return [sa.literal(value) for value in values]


@functools.lru_cache(maxsize=8)
def _statements(step, by_migration):
    """``step``'s guard and its statements, built once: building a
    statement and its cache key costs more CPU than running it (each
    confirmResize built three). The migration is found by
    ``b_migration`` or, newest first, by ``b_instance``."""
    guard = moves.guard_of(cold, step, 'request')
    before, after = guard['status']
    tasks = guard.get('task_state')
    find = sa.select(_MIGRATIONS).where(
        _MIGRATIONS.c.status == before,
        _MIGRATIONS.c.migration_type.in_(_fixed(states.COLD_MIGRATION_TYPES)))
    if by_migration:
        find = find.where(_MIGRATIONS.c.uuid == _bp('b_migration'))
    else:
        find = find.where(
            _MIGRATIONS.c.instance_uuid == _bp('b_instance')).order_by(
            _MIGRATIONS.c.created_at.desc(), _MIGRATIONS.c.id.desc())
    advance = _MIGRATIONS.update().where(
        _MIGRATIONS.c.id == _bp('b_id'),
        _MIGRATIONS.c.status == before).values(
        status=after, updated_at=_bp('v_now'), phases=_bp('v_phases'))
    claim = None
    if tasks is not None:
        vm_states = _fixed(guard['expected_vm_state'])
        claim = _INSTANCES.update().where(
            _INSTANCES.c.uuid == _bp('b_server'), _INSTANCES.c.deleted == 0,
            _task_is(_INSTANCES.c.task_state, tasks[0]),
            _INSTANCES.c.vm_state.in_(vm_states)).values(
            task_state=tasks[1], updated_at=_bp('v_now'))
        # The server as written, where the database returns it
        # (PostgreSQL, SQLite): no SELECT after the UPDATE.
        claim = (claim, claim.returning(*_FACTS))
    return guard, find.limit(1), advance, claim


def _claim(session, claim, server, now):
    """The server's task_state claimed: (claimed, the row as written or
    None when it is to be read)."""
    plain, returning = claim
    params = {'b_server': server, 'v_now': now}
    if session.dialect.update_returning:
        row = session.execute(returning, params).first()
        return row is not None, row
    return session.execute(plain, params).rowcount == 1, None


def settle_start(step, instance_uuid=None, migration_uuid=None,
                 action=None):
    """``step`` ('confirm_resize' or 'revert_resize') starts on the
    server's newest finished cold move (``instance_uuid``), or on
    ``migration_uuid``: the migration's status and the server's
    task_state as the row's 'request' guard says, and ``action``
    (action_start's arguments) recorded, in one transaction. Returns
    (the migration as it was, the facts of the step's cast). Invalid when
    the server has no finished move; Conflict (InstanceInvalidState for
    the server) when another request moved either on first."""
    guard, find, advance, claim = _statements(
        step, migration_uuid is not None)
    before, after = guard['status']
    with _tx() as session:
        row = session.execute(find, {'b_migration': migration_uuid} if
                              migration_uuid is not None else
                              {'b_instance': instance_uuid}).first()
        if row is None:
            if migration_uuid is not None:
                raise exception.Conflict(
                    reason='migration %s is no longer %s'
                    % (migration_uuid, before))
            raise exception.Invalid(reason='Instance has not been resized.')
        now = utcnow()
        if session.execute(advance, {
                'b_id': row.id, 'v_now': now,
                'v_phases': phases.stamp(row.phases, after, now)}
                ).rowcount != 1:
            raise exception.Conflict(
                reason='migration %s is no longer %s' % (row.id, before))
        server = row.instance_uuid
        instance = None
        claimed = True
        if claim is not None:
            claimed, instance = _claim(session, claim, server, now)
        if not claimed:
            current = _instance_row(session, server, live_only=True)
            if current is None:
                raise exception.InstanceNotFound(instance_id=server)
            busy = current.vm_state in guard['expected_vm_state']
            raise exception.InstanceInvalidState(
                method=(action or {}).get('action', step),
                instance_uuid=server,
                attr='task_state' if busy else 'vm_state',
                state=current.task_state if busy else current.vm_state)
        if instance is None:
            instance = session.execute(_FACTS_OF,
                                       {'b_uuid': server}).first()
        if instance is None:
            raise exception.InstanceNotFound(instance_id=server)
        if action:
            _action_start_in(session, **action)
        migration = _row_dict(row)
        instance = _decode_json(dict(instance._mapping))
    _keep_spec_flavor(step, server, instance)
    return migration, cold.FACTS[step](migration, instance)


def _keep_spec_flavor(step, server, instance):
    """The request spec's flavor (API database) follows a resize once it
    is settled: every confirm and revert starts here, whoever asks. The
    new flavor at a confirm, the old one back at a revert (a confirm that
    was given back may have written the new one). A cold migration keeps
    its flavor: nothing written."""
    old, new = instance.get('old_flavor'), instance.get('flavor')
    if not old or not new or old.get('flavorid') == new.get('flavorid'):
        return
    request_specs.keep(server, flavor=new if step == 'confirm_resize'
                       else old)


def settle_abandon(step, migration):
    """The cast of a started ``step`` failed, so nothing else ran: the
    migration back to finished and the server's task_state released (the
    'request' guard backwards). Quiet when something moved on."""
    guard = moves.guard_of(cold, step, 'request')
    before, after = guard['status']
    tasks = guard.get('task_state')
    with _tx() as session:
        session.execute(_MIGRATIONS.update().where(
            _MIGRATIONS.c.id == migration['id'],
            _MIGRATIONS.c.status == after).values(
            status=before, updated_at=utcnow()))
        if tasks is not None:
            session.execute(_INSTANCES.update().where(
                _INSTANCES.c.uuid == migration['instance_uuid'],
                _INSTANCES.c.task_state == tasks[1]).values(
                task_state=tasks[0], updated_at=utcnow()))
