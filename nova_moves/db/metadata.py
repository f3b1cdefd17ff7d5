"""Server metadata and quota classes.

A metadata write and the count it is checked against run in one
transaction holding the server's row (FOR UPDATE where the database has
it; SQLite's writer is already alone), so two racing writers cannot both
pass [quota] metadata_items."""
from oslo_db import exception as db_exc
import sqlalchemy as sa

from nova_moves.db import key_rows
from nova_moves.db import models
from nova_moves import exception
from nova_moves.db.session import _retry_on_deadlock, _session, utcnow

__all__ = ['instance_metadata_get', 'instance_metadata_get_many',
           'instance_metadata_update', 'instance_metadata_delete',
           'quota_class_get', 'quota_class_set']

_META = models.InstanceMetadata


def instance_metadata_get(instance_uuid):
    return instance_metadata_get_many([instance_uuid]).get(instance_uuid, {})


def instance_metadata_get_many(instance_uuids):
    """{uuid: {key: value}} for the servers of one list page."""
    if not instance_uuids:
        return {}
    with _session(writer=False) as session:
        rows = session.execute(
            sa.select(_META.instance_uuid, _META.key, _META.value)
            .where(_META.instance_uuid.in_(list(instance_uuids))))
        result = {}
        for uuid, key, value in rows:
            result.setdefault(uuid, {})[key] = value
        return result


@_retry_on_deadlock
def instance_metadata_update(instance_uuid, items, replace=False,
                             check=None):
    """Set ``items`` (all of them with ``replace``), then ``check(count)``
    (which raises to refuse, undoing the write); returns the metadata."""
    with _session() as session:
        key_rows.lock_instance(session, instance_uuid)
        current = {r.key: r for r in session.scalars(
            sa.select(_META).where(_META.instance_uuid == instance_uuid))}
        for key, row in list(current.items()):
            if replace and key not in items:
                session.delete(row)
                del current[key]
        key_rows.upsert(
            session, current, items,
            lambda key, value: _META(instance_uuid=instance_uuid, key=key,
                                     value=value),
            db_exc.DBDuplicateEntry, 'metadata keys')
        if check is not None:
            check(len(current))
        return {key: row.value for key, row in current.items()}


def instance_metadata_delete(instance_uuid, key):
    with _session() as session:
        key_rows.lock_instance(session, instance_uuid)
        deleted = session.execute(sa.delete(_META).where(
            _META.instance_uuid == instance_uuid,
            _META.key == key)).rowcount
    if not deleted:
        raise exception.NotFound(
            'Metadata item was not found')


def quota_class_get(class_name):
    """{resource: hard_limit} set for the class (nothing set: {})."""
    with _session(writer=False) as session:
        rows = session.scalars(sa.select(models.QuotaClass).where(
            models.QuotaClass.class_name == class_name))
        return {row.resource: row.hard_limit for row in rows}


def quota_class_set(class_name, values):
    """Insert or update the class's limits in one transaction."""
    with _session() as session:
        for resource, hard_limit in values.items():
            updated = session.execute(
                sa.update(models.QuotaClass)
                .where(models.QuotaClass.class_name == class_name,
                       models.QuotaClass.resource == resource)
                .values(hard_limit=hard_limit,
                        updated_at=utcnow())).rowcount
            if not updated:
                session.add(models.QuotaClass(
                    class_name=class_name, resource=resource,
                    hard_limit=hard_limit))
