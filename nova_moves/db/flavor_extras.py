"""Flavor extra specs, flavor access lists (private flavors' projects)
and server tags: the small key tables issue 26's tempest modules need.

Extra specs and access rows hang off the flavor's row id (Nova's
flavors.id); a flavor's deletion removes them (flavors.flavor_delete,
as SQLite enforces no foreign keys here)."""
from oslo_db import exception as db_exc
import sqlalchemy as sa

from nova_moves.db import key_rows
from nova_moves.db import models
from nova_moves import exception
from nova_moves.db.session import _session

__all__ = ['flavor_extra_specs_get', 'flavor_extra_specs_get_many',
           'flavor_extra_specs_update', 'flavor_extra_spec_delete',
           'flavor_access_get', 'flavor_access_projects_flavors',
           'flavor_access_add', 'flavor_access_remove',
           'instance_tags_get', 'instance_tags_get_many',
           'instance_tags_set', 'instance_tag_add', 'instance_tag_delete']

# SQLite's engine here is plain SQLAlchemy's (no oslo.db filters): its
# unique-constraint failure is an IntegrityError, not DBDuplicateEntry.
_DUPLICATE = (db_exc.DBDuplicateEntry, sa.exc.IntegrityError)
_SPEC = models.FlavorExtraSpec
_ACCESS = models.FlavorProject
_TAG = models.Tag


def _flavor_row_id(session, flavorid):
    row_id = session.scalar(sa.select(models.Flavor.id).where(
        models.Flavor.flavorid == str(flavorid)))
    if row_id is None:
        raise exception.FlavorNotFound(flavor_id=flavorid)
    return row_id


def flavor_extra_specs_get(flavorid):
    with _session(writer=False) as session:
        row_id = _flavor_row_id(session, flavorid)
        return {r.key: r.value for r in session.scalars(
            sa.select(_SPEC).where(_SPEC.flavor_id == row_id))}


def flavor_extra_specs_get_many(row_ids):
    """{flavor row id: {key: value}} for one page of flavors."""
    if not row_ids:
        return {}
    with _session(writer=False) as session:
        result = {}
        for fid, key, value in session.execute(
                sa.select(_SPEC.flavor_id, _SPEC.key, _SPEC.value)
                .where(_SPEC.flavor_id.in_(list(row_ids)))):
            result.setdefault(fid, {})[key] = value
        return result


def flavor_extra_specs_update(flavorid, specs):
    """Create or update ``specs`` (strings) in one transaction."""
    with _session() as session:
        row_id = _flavor_row_id(session, flavorid)
        current = {r.key: r for r in session.scalars(
            sa.select(_SPEC).where(_SPEC.flavor_id == row_id))}
        key_rows.upsert(
            session, current, specs,
            lambda key, value: _SPEC(flavor_id=row_id, key=key, value=value),
            _DUPLICATE, 'extra spec keys')
        return specs


def flavor_extra_spec_delete(flavorid, key):
    with _session() as session:
        row_id = _flavor_row_id(session, flavorid)
        deleted = session.execute(sa.delete(_SPEC).where(
            _SPEC.flavor_id == row_id, _SPEC.key == key)).rowcount
    if not deleted:
        raise exception.NotFound(
            'Flavor %s has no extra spec with key %s.' % (flavorid, key))


def flavor_access_get(flavorid):
    """The projects with access to the flavor, in the order added."""
    with _session(writer=False) as session:
        row_id = _flavor_row_id(session, flavorid)
        return list(session.scalars(
            sa.select(_ACCESS.project_id).where(_ACCESS.flavor_id == row_id)
            .order_by(_ACCESS.id)))


def flavor_access_projects_flavors(project_id):
    """The row ids of the private flavors ``project_id`` may see."""
    with _session(writer=False) as session:
        return set(session.scalars(sa.select(_ACCESS.flavor_id).where(
            _ACCESS.project_id == project_id)))


def flavor_access_add(flavorid, project_id):
    with _session() as session:
        row_id = _flavor_row_id(session, flavorid)
        session.add(_ACCESS(flavor_id=row_id, project_id=project_id))
        try:
            session.flush()
        except _DUPLICATE:
            raise exception.Conflict(
                reason='Flavor access already exists for flavor %s and '
                       'project %s combination.' % (flavorid, project_id))


def flavor_access_remove(flavorid, project_id):
    with _session() as session:
        row_id = _flavor_row_id(session, flavorid)
        deleted = session.execute(sa.delete(_ACCESS).where(
            _ACCESS.flavor_id == row_id,
            _ACCESS.project_id == project_id)).rowcount
    if not deleted:
        raise exception.NotFound(
            'Flavor access not found for %s / %s combination.'
            % (flavorid, project_id))


def instance_tags_get(instance_uuid):
    return instance_tags_get_many([instance_uuid]).get(instance_uuid, [])


def instance_tags_get_many(instance_uuids):
    """{uuid: [tag, ...]} (sorted) for one page of servers."""
    if not instance_uuids:
        return {}
    with _session(writer=False) as session:
        result = {}
        for uuid, tag in session.execute(
                sa.select(_TAG.resource_id, _TAG.tag)
                .where(_TAG.resource_id.in_(list(instance_uuids)))
                .order_by(_TAG.tag)):
            result.setdefault(uuid, []).append(tag)
        return result


def instance_tags_set(instance_uuid, tags):
    """Replace the server's tags (``[]``: delete them all)."""
    with _session() as session:
        key_rows.lock_instance(session, instance_uuid)
        session.execute(sa.delete(_TAG).where(
            _TAG.resource_id == instance_uuid))
        for tag in sorted(set(tags)):
            session.add(_TAG(resource_id=instance_uuid, tag=tag))
        key_rows.flush_unique(session, _DUPLICATE, 'tags')
    return sorted(set(tags))


def instance_tag_add(instance_uuid, tag, limit):
    """Add ``tag``; False when it was there already. Over ``limit`` tags:
    ValidationError, nothing added (the count is taken under the
    server's row lock)."""
    with _session() as session:
        key_rows.lock_instance(session, instance_uuid)
        tags = set(session.scalars(sa.select(_TAG.tag).where(
            _TAG.resource_id == instance_uuid)))
        if tag in tags:
            return False
        if len(tags) >= limit:
            raise exception.ValidationError(
                detail='The number of tags exceeded the per-server limit '
                       '%d' % limit)
        session.add(_TAG(resource_id=instance_uuid, tag=tag))
        key_rows.flush_unique(session, _DUPLICATE, 'tags')
        return True


def instance_tag_delete(instance_uuid, tag):
    with _session() as session:
        key_rows.lock_instance(session, instance_uuid)
        deleted = session.execute(sa.delete(_TAG).where(
            _TAG.resource_id == instance_uuid, _TAG.tag == tag)).rowcount
    if not deleted:
        raise exception.NotFound('Tag %s could not be found.' % tag)
