"""What Nova's usage reports read: servers active in a period (deleted
ones included: rows are soft-deleted), the task log of the periodic
usage audit, and a server's system metadata (its password)."""
from oslo_db import exception as db_exc
import sqlalchemy as sa

from nova_moves.db import models
from nova_moves.db.instances import _instance_dict
from nova_moves.db.session import _parse_time, _session, _to_dict
from nova_moves import exception

__all__ = ['instance_get_active_by_window', 'task_log_get_all',
           'task_log_begin', 'task_log_end', 'system_metadata_get',
           'system_metadata_update']

_I = models.Instance
_LOG = models.TaskLog
_SYS = models.InstanceSystemMetadata


def instance_get_active_by_window(begin, end, project_id=None, host=None,
                                  limit=None, marker=None):
    """Nova's instance_get_active_by_window_joined: every server, deleted
    or not, launched before ``end`` and not terminated before ``begin``
    (never launched: not there); oldest first (created_at, id),
    ``marker`` a uuid."""
    with _session(writer=False) as session:
        query = sa.select(_I).where(
            sa.or_(_I.terminated_at.is_(None), _I.terminated_at > begin),
            _I.launched_at < end
        ).order_by(_I.created_at, _I.id)
        if project_id:
            query = query.where(_I.project_id == project_id)
        if host:
            query = query.where(_I.host == host)
        if marker:
            mrow = session.scalars(sa.select(_I).where(
                _I.uuid == marker)).first()
            if mrow is None:
                raise exception.MarkerNotFound(marker=marker)
            query = query.where(sa.or_(
                _I.created_at > mrow.created_at,
                sa.and_(_I.created_at == mrow.created_at, _I.id > mrow.id)))
        if limit:
            query = query.limit(limit)
        return [_instance_dict(r) for r in session.scalars(query)]


def task_log_get_all(task_name, begin, end, host=None):
    with _session(writer=False) as session:
        query = sa.select(_LOG).where(
            _LOG.task_name == task_name,
            _LOG.period_beginning == _parse_time(begin),
            _LOG.period_ending == _parse_time(end)).order_by(_LOG.host)
        if host:
            query = query.where(_LOG.host == host)
        return [_to_dict(r) for r in session.scalars(query)]


def task_log_begin(task_name, begin, end, host, task_items, message):
    """Claim the task for (host, period): False when a row is already
    there (another conductor did or does it)."""
    try:
        with _session() as session:
            session.add(_LOG(
                task_name=task_name, state='RUNNING', host=host,
                period_beginning=_parse_time(begin),
                period_ending=_parse_time(end), message=message,
                task_items=task_items, errors=0))
    except db_exc.DBDuplicateEntry:
        return False
    return True


def task_log_end(task_name, begin, end, host, errors, message):
    with _session() as session:
        session.execute(sa.update(_LOG).where(
            _LOG.task_name == task_name, _LOG.host == host,
            _LOG.period_beginning == _parse_time(begin),
            _LOG.period_ending == _parse_time(end)).values(
                state='DONE', errors=errors, message=message))


def system_metadata_get(instance_uuid):
    with _session(writer=False) as session:
        return {row.key: row.value for row in session.scalars(
            sa.select(_SYS).where(_SYS.instance_uuid == instance_uuid))}


def system_metadata_update(instance_uuid, items):
    """Set each of ``items`` (key -> value) on the server."""
    with _session() as session:
        current = {row.key: row for row in session.scalars(
            sa.select(_SYS).where(_SYS.instance_uuid == instance_uuid,
                                  _SYS.key.in_(list(items))))}
        for key, value in items.items():
            if key in current:
                current[key].value = value
            else:
                session.add(_SYS(instance_uuid=instance_uuid, key=key,
                                 value=value))
