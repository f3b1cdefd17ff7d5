"""Per-project quota limits and usage, counted from the servers (Nova's
counting quotas: no reservations to leak)."""
import json

import sqlalchemy as sa

from nova_moves.db import models
from nova_moves.db.session import _session, utcnow

__all__ = ['quota_get_project', 'quota_set', 'quota_delete_project',
           'quota_usage']


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
    """instances, cores and ram the project's servers hold. A server in a
    resize holds the larger of its old and new flavor, as Nova counts."""
    usage = {'instances': 0, 'cores': 0, 'ram': 0}
    with _session(writer=False) as session:
        rows = session.execute(
            sa.select(models.Instance.flavor, models.Instance.new_flavor)
            .where(models.Instance.project_id == project_id,
                   models.Instance.deleted == 0))
        for flavor, new_flavor in rows:
            flavors = [json.loads(f) for f in (flavor, new_flavor) if f]
            usage['instances'] += 1
            usage['cores'] += max(f.get('vcpus', 0) for f in flavors)
            usage['ram'] += max(f.get('memory_mb', 0) for f in flavors)
    return usage
