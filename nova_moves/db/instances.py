"""Servers (instances) and their faults."""
import json
import uuid as uuidlib

import sqlalchemy as sa

from nova_moves.db import fault_text
from nova_moves.db import keyset
from nova_moves.db import server_order
from nova_moves.db import models
from nova_moves import exception
from nova_moves import states
from nova_moves.db.session import (
    _parse_time,
    _retry_on_deadlock,
    _row_dict,
    _rows_dicts,
    _session,
    _tx,
    _to_dict,
    utcnow)


_JSON_FIELDS = ('flavor', 'old_flavor', 'new_flavor', 'security_groups',
                'scheduler_hints')


def _decode_json(values):
    for field in _JSON_FIELDS:
        if values.get(field):
            values[field] = json.loads(values[field])
    return values


def _instance_dict(row):
    return _decode_json(_to_dict(row))


def _instance_row_dict(row):
    """_instance_dict of a Core row of the instances table."""
    return _decode_json(_row_dict(row))


def _encode_instance_values(values):
    values = dict(values)
    for field in _JSON_FIELDS:
        if field in values and values[field] is not None:
            values[field] = json.dumps(values[field])
    for key in ('launched_at', 'terminated_at', 'deleted_at'):
        if key in values:
            values[key] = _parse_time(values[key])
    return values


def instance_create(values):
    values = _encode_instance_values(values)
    values.setdefault('uuid', str(uuidlib.uuid4()))
    with _session() as session:
        row = models.Instance(**values)
        session.add(row)
        session.flush()
        return _instance_dict(row)


# Core, built once: every API action and move step reads a server.
_BY_UUID = sa.select(models.Instance.__table__).where(
    models.Instance.__table__.c.uuid == sa.bindparam('b_uuid'))
_LIVE_BY_UUID = _BY_UUID.where(models.Instance.__table__.c.deleted == 0)


def _instance_row(session, instance_uuid, live_only=False):
    """The Core row of a server (not deleted with ``live_only``)."""
    return session.execute(_LIVE_BY_UUID if live_only else _BY_UUID,
                           {'b_uuid': instance_uuid}).first()


def instance_get(instance_uuid, read_deleted=False):
    with _tx(writer=False) as session:
        row = _instance_row(session, instance_uuid,
                            live_only=not read_deleted)
        if row is None:
            raise exception.InstanceNotFound(instance_id=instance_uuid)
        return _instance_row_dict(row)


# What the API's move actions read of a server before they start one:
# whose it is (404, the policy's target), its states (409), its host (a
# migrate's target must differ) and its lock. A whole row is ~35 columns
# and three JSON documents for these seven.
INSTANCE_BRIEF = ('uuid', 'project_id', 'user_id', 'host', 'vm_state',
                  'task_state', 'locked_by')
_BRIEF_BY_UUID = sa.select(
    *[models.Instance.__table__.c[name] for name in INSTANCE_BRIEF]).where(
    models.Instance.__table__.c.uuid == sa.bindparam('b_uuid'),
    models.Instance.__table__.c.deleted == 0)


def instance_get_brief(instance_uuid):
    """The INSTANCE_BRIEF columns of a server that is not deleted."""
    with _tx(writer=False) as session:
        row = session.execute(_BRIEF_BY_UUID,
                              {'b_uuid': instance_uuid}).first()
        if row is None:
            raise exception.InstanceNotFound(instance_id=instance_uuid)
        return _row_dict(row)


def instance_get_all(project_id=None, host=None, limit=None, marker=None,
                     read_deleted=False, uuids=None, vm_states=None,
                     after=None, order=keyset.DEFAULT_ORDER):
    """The servers in ``order`` (db/server_order: created_at newest first,
    then id, then uuid by default). ``marker``: the uuid of the server
    (deleted or not) the page starts after; ``after``, in its place: the
    sort values of a record of any cell (server_order.values), the page
    of a list merged across cells."""
    # Core rows, not ORM objects: a list merged across cells reads up
    # to ``limit`` servers of every cell (a third of the CPU per row).
    table = models.Instance.__table__
    c = table.c
    with _tx(writer=False) as conn:
        query = sa.select(table).order_by(*server_order.order_by(order))
        if marker:
            mrow = conn.execute(sa.select(table).where(
                c.uuid == marker)).first()
            if mrow is None:
                raise exception.MarkerNotFound(marker=marker)
            after = server_order.values(_row_dict(mrow), order)
        if after is not None:
            query = query.where(server_order.after(after, order))
        if not read_deleted:
            # A cross-cell resize's copy in the cell the server is not
            # mapped to is not a server of its own (Nova's hidden).
            query = query.where(c.deleted == 0, c.hidden == sa.false())
        if project_id:
            query = query.where(c.project_id == project_id)
        if host:
            query = query.where(c.host == host)
        if uuids is not None:
            query = query.where(c.uuid.in_(uuids))
        if vm_states is not None:
            query = query.where(c.vm_state.in_(vm_states))
        if limit:
            query = query.limit(limit)
        return [_decode_json(values)
                for values in _rows_dicts(conn.execute(query))]


_UNSET = object()


@_retry_on_deadlock
def instance_update(instance_uuid, values, expected_task_state=_UNSET,
                    expected_vm_state=None, expected_host=None):
    """Update a server; with ``expected_task_state`` (a value or a list)
    and/or ``expected_vm_state`` (a list), only if the row still holds
    them: the compare-and-swap that makes two moves of one server race
    safely. Raises UnexpectedTaskState or InstanceInvalidState when lost."""
    values = _encode_instance_values(values)
    with _session() as session:
        query = sa.update(models.Instance).where(
            models.Instance.uuid == instance_uuid,
            models.Instance.deleted == 0)
        if expected_task_state is not _UNSET:
            expected = (list(expected_task_state)
                        if isinstance(expected_task_state, (list, tuple))
                        else [expected_task_state])
            conds = [models.Instance.task_state.in_(
                [e for e in expected if e is not None])]
            if None in expected:
                conds.append(models.Instance.task_state.is_(None))
            query = query.where(sa.or_(*conds))
        if expected_vm_state:
            query = query.where(models.Instance.vm_state.in_(
                list(expected_vm_state)))
        if expected_host is not None:
            query = query.where(models.Instance.host == expected_host)
        result = session.execute(query.values(**values))
        if result.rowcount == 1:
            row = session.scalars(sa.select(models.Instance).where(
                models.Instance.uuid == instance_uuid)).one()
            return _instance_dict(row)
    current = instance_get(instance_uuid)
    if expected_vm_state and current['vm_state'] not in expected_vm_state:
        raise exception.InstanceInvalidState(
            method='update', instance_uuid=instance_uuid, attr='vm_state',
            state=current['vm_state'])
    if expected_host is not None and current['host'] != expected_host:
        raise exception.Conflict(reason='instance %s is no longer on %s'
                                 % (instance_uuid, expected_host))
    raise exception.UnexpectedTaskState(
        instance_uuid=instance_uuid, expected=expected_task_state,
        actual=current['task_state'])


def instance_destroy(instance_uuid):
    now = utcnow()
    with _session() as session:
        row = session.scalars(sa.select(models.Instance).where(
            models.Instance.uuid == instance_uuid,
            models.Instance.deleted == 0)).first()
        if row is None:
            raise exception.InstanceNotFound(instance_id=instance_uuid)
        row.deleted = row.id
        row.deleted_at = now
        row.terminated_at = now
        row.vm_state = states.DELETED
        row.task_state = None
        return _instance_dict(row)


def instance_fault_create(instance_uuid, code, message, details=None,
                          host=None):
    with _session() as session:
        values = fault_text.fault(session, {  # fit for the owner
            'code': code, 'message': message, 'details': details,
            'host': host})
        session.add(models.InstanceFault(instance_uuid=instance_uuid,
                                         **values))


def instance_fault_get_latest(instance_uuid):
    with _session(writer=False) as session:
        row = session.scalars(
            sa.select(models.InstanceFault)
            .where(models.InstanceFault.instance_uuid == instance_uuid)
            .order_by(models.InstanceFault.id.desc())).first()
        return _to_dict(row)


def instance_get_all_by_task_states(task_states, updated_before):
    """Servers in one of ``task_states`` not updated since
    ``updated_before`` (a datetime): candidates for an interrupted move."""
    with _session(writer=False) as session:
        query = sa.select(models.Instance).where(
            models.Instance.deleted == 0,
            models.Instance.task_state.in_(list(task_states)),
            sa.func.coalesce(models.Instance.updated_at,
                             models.Instance.created_at) < updated_before)
        return [_instance_dict(r) for r in session.scalars(query)]


def move_keep_alive(instance_uuid, task_state, migration=None):
    """The API's cast of a move's start still waits for the broker: mark
    the move's rows as touched now (the server while it keeps
    ``task_state``, the migration while it keeps the status the API
    created it with), so the stuck-move sweep does not roll back a move
    whose start is still being sent. True while the move is still
    there."""
    now = utcnow()
    with _session() as session:
        kept = session.execute(
            sa.update(models.Instance).where(
                models.Instance.uuid == instance_uuid,
                models.Instance.task_state == task_state)
            .values(updated_at=now)).rowcount
        if migration is not None:
            session.execute(
                sa.update(models.Migration).where(
                    models.Migration.uuid == migration['uuid'],
                    models.Migration.status == migration['status'])
                .values(updated_at=now))
    return bool(kept)
