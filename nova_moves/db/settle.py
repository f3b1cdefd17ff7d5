"""The one start of a confirm or a revert of a resize or cold migration,
whoever asks: the API (confirmResize, revertResize), the source's
auto-confirm (through the conductor, compute_db 1.7) and a host drain.
Its guard is the 'request' phase of the step's row in the cold table
(nova_moves/moves/cold.py); what the step's cast then carries (compute
RPC 1.8) is read in the same transaction."""
import sqlalchemy as sa

from nova_moves.db.actions import _action_start_in
from nova_moves.db import models
from nova_moves.db import phases
from nova_moves.db.instances import _instance_row, _instance_row_dict
from nova_moves.db.session import _row_dict, _tx, utcnow
from nova_moves import exception
from nova_moves import moves
from nova_moves.moves import cold
from nova_moves import states

__all__ = ['settle_start', 'settle_abandon']

_MIGRATIONS = models.Migration.__table__
_INSTANCES = models.Instance.__table__


def _task_is(column, value):
    return column.is_(None) if value is None else column == value


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
    guard = moves.guard_of(cold, step, 'request')
    before, after = guard['status']
    tasks = guard.get('task_state')
    with _tx() as session:
        query = sa.select(_MIGRATIONS).where(
            _MIGRATIONS.c.status == before,
            _MIGRATIONS.c.migration_type.in_(
                list(states.COLD_MIGRATION_TYPES)))
        if migration_uuid is not None:
            query = query.where(_MIGRATIONS.c.uuid == migration_uuid)
        else:
            query = query.where(
                _MIGRATIONS.c.instance_uuid == instance_uuid).order_by(
                _MIGRATIONS.c.created_at.desc(), _MIGRATIONS.c.id.desc())
        row = session.execute(query.limit(1)).first()
        if row is None:
            if migration_uuid is not None:
                raise exception.Conflict(
                    reason='migration %s is no longer %s'
                    % (migration_uuid, before))
            raise exception.Invalid(reason='Instance has not been resized.')
        now = utcnow()
        if session.execute(_MIGRATIONS.update().where(
                _MIGRATIONS.c.id == row.id,
                _MIGRATIONS.c.status == before).values(
                status=after, updated_at=now,
                phases=phases.stamp(row.phases, after, now))).rowcount != 1:
            raise exception.Conflict(
                reason='migration %s is no longer %s' % (row.id, before))
        server = row.instance_uuid
        if tasks is not None and session.execute(_INSTANCES.update().where(
                _INSTANCES.c.uuid == server, _INSTANCES.c.deleted == 0,
                _task_is(_INSTANCES.c.task_state, tasks[0]),
                _INSTANCES.c.vm_state.in_(guard['expected_vm_state'])).values(
                task_state=tasks[1], updated_at=now)).rowcount != 1:
            current = _instance_row(session, server, live_only=True)
            if current is None:
                raise exception.InstanceNotFound(instance_id=server)
            busy = current.vm_state in guard['expected_vm_state']
            raise exception.InstanceInvalidState(
                method=(action or {}).get('action', step),
                instance_uuid=server,
                attr='task_state' if busy else 'vm_state',
                state=current.task_state if busy else current.vm_state)
        instance = _instance_row(session, server, live_only=True)
        if instance is None:
            raise exception.InstanceNotFound(instance_id=server)
        if action:
            _action_start_in(session, **action)
        migration = _row_dict(row)
        return migration, cold.FACTS[step](migration,
                                           _instance_row_dict(instance))


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
