"""Per-project quota limits and usage, counted from the servers (Nova's
counting quotas: no reservations to leak).

A boot counts and creates in one transaction that holds the project's
quota lock (instance_create_in_quota), so racing boots of one project
queue: none gets past the limit and none is refused while there is room.
(Nova counts, creates, and counts again, refusing every racer that sees
the limit passed -- including ones that would have fitted.)"""
import json
import uuid as uuidlib

import sqlalchemy as sa

from nova_moves.db.instances import _encode_instance_values, _instance_dict
from nova_moves.db import models
from nova_moves.db.session import _retry_on_deadlock, _session, utcnow

__all__ = ['quota_get_project', 'quota_set', 'quota_delete_project',
           'quota_usage', 'instance_create_in_quota']


def quota_get_project(project_id):
    """{resource: hard_limit} of the project's overrides only."""
    with _session(writer=False) as session:
        rows = session.scalars(sa.select(models.Quota).where(
            models.Quota.project_id == project_id))
        return {row.resource: row.hard_limit for row in rows}


def quota_set(project_id, resource, hard_limit):
    """Insert or update one limit (a unique key on project and resource
    makes two concurrent first writers one row)."""
    with _session() as session:
        updated = session.execute(
            sa.update(models.Quota)
            .where(models.Quota.project_id == project_id,
                   models.Quota.resource == resource)
            .values(hard_limit=hard_limit, updated_at=utcnow())).rowcount
        if not updated:
            session.add(models.Quota(project_id=project_id,
                                     resource=resource,
                                     hard_limit=hard_limit))


def quota_delete_project(project_id):
    """Back to the [quota] defaults."""
    with _session() as session:
        session.execute(sa.delete(models.Quota).where(
            models.Quota.project_id == project_id))


def quota_usage(project_id):
    """instances, cores and ram the project's servers hold."""
    with _session(writer=False) as session:
        return _usage(session, project_id)


def _usage(session, project_id, for_update=False):
    """A server in a resize holds the larger of its old and new flavor, as
    Nova counts."""
    usage = {'instances': 0, 'cores': 0, 'ram': 0}
    query = (sa.select(models.Instance.flavor, models.Instance.new_flavor)
             .where(models.Instance.project_id == project_id,
                    models.Instance.deleted == 0))
    if for_update:
        query = query.with_for_update()
    for flavor, new_flavor in session.execute(query):
        flavors = [json.loads(f) for f in (flavor, new_flavor) if f]
        usage['instances'] += 1
        usage['cores'] += max(f.get('vcpus', 0) for f in flavors)
        usage['ram'] += max(f.get('memory_mb', 0) for f in flavors)
    return usage


def _lock_project(session, project_id):
    """Hold the project's quota lock until the transaction ends.

    SQLite: a writer session already began IMMEDIATE (one writer at a
    time). PostgreSQL: a transaction-scoped advisory lock on the project
    (READ COMMITTED: the count that follows sees every boot committed
    before). MySQL/MariaDB: the count reads the project's rows FOR UPDATE,
    whose next-key locks on instances_project_idx also keep other boots
    of the project from inserting; two first boots of an empty project
    deadlock on the gap instead, and the loser is retried."""
    dialect = session.bind.dialect.name
    if dialect == 'postgresql':
        session.execute(sa.text(
            'SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))'),
            {'key': 'nova_moves.quota.%s' % project_id})
    return dialect == 'mysql'


@_retry_on_deadlock
def instance_create_in_quota(values, check):
    """instance_create, once ``check(usage)`` (which raises to refuse) has
    passed on the project's usage, counted under its quota lock."""
    values = _encode_instance_values(values)
    values.setdefault('uuid', str(uuidlib.uuid4()))
    with _session() as session:
        lock_rows = _lock_project(session, values['project_id'])
        check(_usage(session, values['project_id'], for_update=lock_rows))
        row = models.Instance(**values)
        session.add(row)
        session.flush()
        return _instance_dict(row)
