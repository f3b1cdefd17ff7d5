"""Migration rows and the single transactions that start a move."""
import uuid as uuidlib

import sqlalchemy as sa

from nova_moves.db import keyset
from nova_moves.db import models
from nova_moves.db import move_queue
from nova_moves.db import phases
from nova_moves import exception
from nova_moves import moves
from nova_moves import states
from nova_moves.db.allocations import (_CONSUMER_GENERATION, _move_in,
                                       _with_cas_retry)
from nova_moves.db.instances import (
    _encode_instance_values, _instance_row, _instance_row_dict)
from nova_moves.db.session import (
    _get_by_id_or_uuid,
    _parse_time,
    _retry_on_deadlock,
    _row_by_id_or_uuid,
    _row_dict,
    _session,
    _tx,
    _to_dict,
    utcnow)

_MIGRATIONS = models.Migration.__table__
_bp = sa.bindparam

# A cold move of the server that still runs (any status a move may
# still change).
_COLD_IN_FLIGHT = (
    sa.select(_MIGRATIONS.c.uuid, _MIGRATIONS.c.status)
    .where(_MIGRATIONS.c.instance_uuid == _bp('b_uuid'),
           _MIGRATIONS.c.migration_type.in_(list(states.COLD_MIGRATION_TYPES)),
           _MIGRATIONS.c.status.notin_(
               list(states.MIGRATION_TERMINAL_STATUSES)))
    .limit(1))
# cold_move_start's guarded write: old/new flavor on the server while it
# still has the move's task_state and no other cold move of it runs.
_INSTANCES = models.Instance.__table__
_COLD_TYPES = {'b_type_%d' % i: t
               for i, t in enumerate(states.COLD_MIGRATION_TYPES)}
_FLAVORS_ON_START = _INSTANCES.update().where(
    _INSTANCES.c.uuid == _bp('b_uuid'), _INSTANCES.c.deleted == 0,
    _INSTANCES.c.task_state == _bp('b_task'),
    ~sa.exists().where(
        _MIGRATIONS.c.instance_uuid == _INSTANCES.c.uuid,
        _MIGRATIONS.c.migration_type.in_([_bp(k) for k in _COLD_TYPES]),
        _MIGRATIONS.c.status.notin_(
            list(states.MIGRATION_TERMINAL_STATUSES)))).values(
    old_flavor=_bp('old_flavor'), new_flavor=_bp('new_flavor'))


def migration_create(values):
    values = dict(values)
    values.setdefault('uuid', str(uuidlib.uuid4()))
    if values.get('status'):
        values['phases'] = phases.stamp(None, values['status'], utcnow())
    with _session() as session:
        row = models.Migration(**values)
        session.add(row)
        session.flush()
        return _to_dict(row)


def migration_get(migration_id):
    """By integer id or uuid."""
    return _get_by_id_or_uuid(
        models.Migration, migration_id,
        lambda: exception.MigrationNotFound(migration_id=migration_id))


def move_resume_rows(migration_id, instance_uuid):
    """What a queued cold move reads when it gets its slot, in one
    transaction: (migration, server, the server's consumer generation)."""
    with _tx(writer=False) as session:
        migration = _row_dict(_row_by_id_or_uuid(
            session, _MIGRATIONS, migration_id,
            lambda: exception.MigrationNotFound(migration_id=migration_id)))
        row = _instance_row(session, instance_uuid, live_only=True)
        if row is None:
            raise exception.InstanceNotFound(instance_id=instance_uuid)
        return migration, _instance_row_dict(row), session.execute(
            _CONSUMER_GENERATION, {'b_uuid': instance_uuid}).scalar()


@_retry_on_deadlock
def migration_update(migration_id, values, expected_status=None):
    """Update a migration; with ``expected_status`` (a list) only if it is
    still in one of them, else Conflict. One transaction, Core."""
    table = _MIGRATIONS
    with _tx() as session:
        current = _row_by_id_or_uuid(
            session, table, migration_id,
            lambda: exception.MigrationNotFound(migration_id=migration_id))
        values = dict(values)
        if values.get('status') and values['status'] != current.status:
            # Only written while the status still is the one it was
            # stamped after (expected_status), or last-writer-wins like
            # the status.
            values['phases'] = phases.stamp(current.phases,
                                            values['status'], utcnow())
        query = table.update().where(table.c.id == current.id)
        if expected_status:
            query = query.where(table.c.status.in_(list(expected_status)))
        if session.execute(query.values(**values)).rowcount == 1:
            return _row_dict(session.execute(sa.select(table).where(
                table.c.id == current.id)).first())
        status = session.execute(sa.select(table.c.status).where(
            table.c.id == current.id)).scalar()
    raise exception.Conflict(
        reason='migration %s is %s, expected %s'
        % (migration_id, status, expected_status))


@_retry_on_deadlock
def migration_get_all(instance_uuid=None, host=None, status=None,
                      migration_type=None, source_compute=None,
                      user_id=None, project_id=None, changes_since=None,
                      changes_before=None, limit=None, marker=None,
                      newest_first=True, uuids=None, after=None,
                      skip_hidden_copies=False):
    """``after``: the sort values (created_at, id, uuid) of a migration
    of any cell, in place of ``marker`` (db/keyset; newest first).
    ``skip_hidden_copies``: leave out a cross-cell move's migration
    where its server's copy is hidden (a list merging every cell)."""
    with _tx(writer=False) as session:
        if after is not None:
            order = keyset.order_by(_MIGRATIONS)
        elif newest_first:
            order = (_MIGRATIONS.c.created_at.desc(),
                     _MIGRATIONS.c.id.desc())
        else:
            order = (_MIGRATIONS.c.id,)
        query = sa.select(_MIGRATIONS).order_by(*order)
        if instance_uuid:
            query = query.where(_MIGRATIONS.c.instance_uuid ==
                                instance_uuid)
        if uuids is not None:
            query = query.where(_MIGRATIONS.c.uuid.in_(list(uuids)))
        if host:
            query = query.where(sa.or_(_MIGRATIONS.c.source_compute == host,
                                       _MIGRATIONS.c.dest_compute == host))
        if source_compute:
            query = query.where(_MIGRATIONS.c.source_compute ==
                                source_compute)
        if status:
            statuses = status if isinstance(status, (list, tuple)) \
                else [status]
            query = query.where(_MIGRATIONS.c.status.in_(statuses))
        if migration_type:
            query = query.where(_MIGRATIONS.c.migration_type ==
                                migration_type)
        if user_id:
            query = query.where(_MIGRATIONS.c.user_id == user_id)
        if project_id:
            query = query.where(_MIGRATIONS.c.project_id == project_id)
        if changes_since:
            query = query.where(_MIGRATIONS.c.updated_at >=
                                _parse_time(changes_since))
        if changes_before:
            query = query.where(_MIGRATIONS.c.updated_at <=
                                _parse_time(changes_before))
        if after is not None:
            query = query.where(keyset.after(_MIGRATIONS, after))
        if skip_hidden_copies:
            query = query.where(_not_beside_hidden_copy())
        if marker:
            mrow = session.execute(sa.select(_MIGRATIONS.c.id).where(
                _MIGRATIONS.c.uuid == marker)).first()
            if mrow is None:
                raise exception.MigrationNotFound(migration_id=marker)
            query = query.where(_MIGRATIONS.c.id < mrow.id)
        if limit:
            query = query.limit(limit)
        return [_row_dict(r) for r in session.execute(query)]


def _not_beside_hidden_copy():
    """A cross-cell move writes its migration in both cells
    (db/cross_cell.py); the copy in the cell where the server's row is
    hidden is the other cell's shadow, so a list merging the cells shows
    the move once, from the cell the server is in (Nova's API leaves
    hidden migrations out too)."""
    hidden_server = sa.exists().where(
        _INSTANCES.c.uuid == _MIGRATIONS.c.instance_uuid,
        _INSTANCES.c.hidden == sa.true())
    return sa.not_(sa.and_(_MIGRATIONS.c.cross_cell_move == sa.true(),
                           hidden_server))


def migrations_unsettled():
    """Migrations whose move is under way (not parked waiting for a user
    or a dead host, not ended): what the stuck-move sweep looks at."""
    # The statuses the step tables' swept compute steps accept.
    moving = moves.SWEPT
    with _session(writer=False) as session:
        return [_to_dict(r) for r in session.scalars(
            sa.select(models.Migration).where(
                models.Migration.status.in_(moving)))]


# Re-exported through db/api.py, where the audit and the tests look.
MIGRATION_TERMINAL_STATUSES = states.MIGRATION_TERMINAL_STATUSES


@_with_cas_retry
def cold_move_start(instance_uuid, describe,
                    expected_task_state=states.RESIZE_PREP, gate=None):
    """The conductor's start of a resize/cold migration, all or nothing,
    in one transaction: read the server, create the migration row from
    ``describe(server)`` = (values, old_flavor, new_flavor), record old/new
    flavor on the server (only while it still has ``expected_task_state``
    and no other cold move of it runs), hand the server's current
    allocation to the migration's uuid and, with ``gate`` (the
    concurrency gate's {kind, request, limits, me}), pass the gate.
    Returns (migration, server as now, the server's consumer generation
    as this left it, which the scheduler's claim states, the gate's
    answer or None). Raises UnexpectedTaskState with nothing written,
    and MoveConflict when the server already has a cold move in flight:
    a repeated migrate_server arriving while the first is still
    preparing (task_state still resize_prep) would otherwise start a
    second move of the same server."""
    with _tx() as session:
        row = _instance_row(session, instance_uuid, live_only=True)
        if row is None:
            raise exception.InstanceNotFound(instance_id=instance_uuid)
        server = _instance_row_dict(row)
        values, old_flavor, new_flavor = describe(server)
        values = dict(values)
        values.setdefault('uuid', str(uuidlib.uuid4()))
        now = utcnow()
        values['phases'] = phases.stamp(None, values['status'], now)
        # The columns' defaults, written out: the row is returned as
        # written, not read back.
        for column, default in (('created_at', now), ('updated_at', None),
                                ('hidden', False), ('deleted', 0),
                                ('step_retries', 0)):
            values.setdefault(column, default)
        if session.execute(_FLAVORS_ON_START, dict(
                _encode_instance_values({'old_flavor': old_flavor,
                                         'new_flavor': new_flavor}),
                b_uuid=instance_uuid, b_task=expected_task_state,
                **_COLD_TYPES)).rowcount != 1:
            _explain_start(session, instance_uuid, expected_task_state)
        generations = {}
        _move_in(session, instance_uuid, values['uuid'], to_is_new=True,
                 read_back=False, generations=generations)
        admitted = None
        if gate is not None:
            # Before the migration's row: a move that must wait is
            # written queued, not written and then compare-and-swapped.
            admitted = move_queue.enter_in(
                session, values['uuid'], instance_uuid, server['host'],
                gate['kind'], gate['request'], values['status'],
                *gate['limits'], gate['me'], unwritten=True)
            if admitted['status'] != values['status']:
                values['status'] = admitted['status']
                values['phases'] = phases.stamp(values['phases'],
                                                admitted['status'], now)
        values['id'] = session.execute(
            _MIGRATIONS.insert().values(**values)).inserted_primary_key[0]
        # The row as written, without reading it back.
        migration = dict(dict.fromkeys(_MIGRATIONS.c.keys()), **{
            k: v.isoformat() if hasattr(v, 'isoformat') else v
            for k, v in values.items()})
        generation = generations.get(instance_uuid)
        if generation is None:  # MySQL: no UPDATE ... RETURNING
            generation = session.execute(
                _CONSUMER_GENERATION, {'b_uuid': instance_uuid}).scalar()
        return (migration, dict(server, old_flavor=old_flavor,
                                new_flavor=new_flavor), generation, admitted)


def _explain_start(session, instance_uuid, expected_task_state):
    """Why cold_move_start's guarded update wrote nothing (raises)."""
    running = session.execute(_COLD_IN_FLIGHT,
                              {'b_uuid': instance_uuid}).first()
    if running is not None:
        raise exception.MoveConflict(
            migration=running.uuid, instance_uuid=instance_uuid,
            reason='it is %s; not starting another move of the '
                   'server' % running.status)
    raise exception.UnexpectedTaskState(
        instance_uuid=instance_uuid, expected=expected_task_state,
        actual='(changed)')


def migration_start(instance_uuid, values, old_flavor, new_flavor,
                    expected_task_state=states.RESIZE_PREP):
    """cold_move_start with the migration's values given: the migration."""
    return cold_move_start(
        instance_uuid, lambda _server: (values, old_flavor, new_flavor),
        expected_task_state)[0]
