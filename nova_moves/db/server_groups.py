"""Server groups (os-server-groups) and where their members are.

A member "is on" every host whose provider tree holds an allocation of
the member, or of a migration of the member still in progress: during a
move the server counts on both its source and its destination, so no
other member of an anti-affinity group is placed on either until the
move settles (as Nova counts a migrating member on both hosts).
"""
import collections
import json
import uuid as uuidlib

import sqlalchemy as sa

from nova_moves.db import models
from nova_moves import exception
from nova_moves import states
from nova_moves.db.session import _row_dict, _session, _to_dict

__all__ = ['ServerGroupNotFound', 'ServerGroupFull', 'server_group_create',
           'server_group_get', 'server_group_get_all', 'server_group_delete',
           'server_group_member_add', 'server_group_of_instance',
           'server_group_count', 'server_group_member_hosts',
           'server_group_join', 'server_group_leave',
           'server_group_drop_if_empty', 'server_group_members_here']

_GROUPS = models.InstanceGroup.__table__
_MEMBERS = models.InstanceGroupMember.__table__
_INSTANCES = models.Instance.__table__


class ServerGroupNotFound(exception.NotFound):
    msg_fmt = 'Instance group %(group_uuid)s could not be found.'


class ServerGroupFull(exception.NovaMovesException):
    code = 403
    msg_fmt = ('Quota exceeded, too many servers in group %(group_uuid)s '
               '(%(allowed)s allowed).')


def _group_dict(row, members):
    group = _to_dict(row)
    group['rules'] = json.loads(group['rules'] or '{}')
    group['members'] = members
    return group


def _live_members(session, group_ids, shown=False):
    """{group id: [instance uuid]}: members whose server is not deleted
    (a deleted server leaves its group, as in Nova); ``shown``: only
    those whose row here is the one shown, not the hidden copy of a
    cross-cell move (which is a member in both cells until it settles:
    the scheduler here must still see its host, a count of members must
    not see it twice)."""
    result = collections.defaultdict(list)
    if not group_ids:
        return result
    query = (
        sa.select(_MEMBERS.c.group_id, _MEMBERS.c.instance_uuid)
        .join(_INSTANCES, _INSTANCES.c.uuid == _MEMBERS.c.instance_uuid)
        .where(_MEMBERS.c.group_id.in_(group_ids),
               _INSTANCES.c.deleted == 0)
        .order_by(_MEMBERS.c.id))
    if shown:
        query = query.where(_INSTANCES.c.hidden == sa.false())
    rows = session.execute(query)
    for group_id, instance_uuid in rows:
        result[group_id].append(instance_uuid)
    return result


def server_group_create(name, policy, rules, project_id, user_id):
    with _session() as session:
        row = models.InstanceGroup(
            uuid=str(uuidlib.uuid4()), name=name, policy=policy,
            rules=json.dumps(rules) if rules else None,
            project_id=project_id, user_id=user_id)
        session.add(row)
        session.flush()
        return _group_dict(row, [])


def _group_row(session, group_uuid, project_id=None):
    query = sa.select(models.InstanceGroup).where(
        models.InstanceGroup.uuid == group_uuid)
    if project_id is not None:
        query = query.where(models.InstanceGroup.project_id == project_id)
    row = session.scalars(query).first()
    if row is None:
        raise ServerGroupNotFound(group_uuid=group_uuid)
    return row


def server_group_get(group_uuid, project_id=None):
    """The group, with its live members; ``project_id`` limits the
    lookup to one project (a non-admin sees only its own)."""
    with _session(writer=False) as session:
        row = _group_row(session, group_uuid, project_id)
        return _group_dict(row, _live_members(session, [row.id])[row.id])


def server_group_get_all(project_id=None, limit=None, offset=0):
    with _session(writer=False) as session:
        query = sa.select(models.InstanceGroup).order_by(
            models.InstanceGroup.id)
        if project_id is not None:
            query = query.where(models.InstanceGroup.project_id == project_id)
        if offset:
            query = query.offset(offset)
        if limit is not None:
            query = query.limit(limit)
        rows = session.scalars(query).all()
        members = _live_members(session, [r.id for r in rows])
        return [_group_dict(r, members[r.id]) for r in rows]


def server_group_count(project_id):
    with _session(writer=False) as session:
        return session.scalar(sa.select(sa.func.count()).select_from(
            _GROUPS).where(_GROUPS.c.project_id == project_id))


def server_group_delete(group_uuid, project_id=None):
    with _session() as session:
        row = _group_row(session, group_uuid, project_id)
        session.execute(_MEMBERS.delete().where(
            _MEMBERS.c.group_id == row.id))
        session.delete(row)


def server_group_member_add(group_uuid, instance_uuid, project_id,
                            max_members, elsewhere=(), mirror=None):
    """Add a new server to a group of its project; ServerGroupFull (403)
    when the group already has ``max_members`` live members (-1: no
    limit), counting ``elsewhere`` (the members' uuids in other cells)
    with those here, each once. ``mirror``: the home cell's group, whose
    mirror is written here first when this cell has none. One
    transaction: the mirror, the member count here and the insert (a
    concurrent drop of an emptied mirror cannot come in between)."""
    with _session() as session:
        if mirror is not None:
            mirror_in(session.connection(), mirror)
        row = _group_row(session, group_uuid, project_id)
        members = _live_members(session, [row.id])[row.id]
        if max_members >= 0 and len(
                set(members) | set(elsewhere)) >= max_members:
            raise ServerGroupFull(group_uuid=group_uuid, allowed=max_members)
        session.execute(_MEMBERS.insert().values(
            group_id=row.id, instance_uuid=instance_uuid,
            created_at=models.utcnow()))
        return _group_dict(row, members + [instance_uuid])


# Core, built once: the scheduler asks on every placement.
_GROUP_OF = (sa.select(_GROUPS)
             .join(_MEMBERS, _MEMBERS.c.group_id == _GROUPS.c.id)
             .where(_MEMBERS.c.instance_uuid == sa.bindparam('b_uuid'))
             .limit(1))


def server_group_of_instance(instance_uuid):
    """The group ``instance_uuid`` belongs to (with live members), or
    None."""
    with _session(writer=False) as session:
        row = session.execute(_GROUP_OF, {'b_uuid': instance_uuid}).first()
        if row is None:
            return None
        group = _row_dict(row)
        group['rules'] = json.loads(group['rules'] or '{}')
        group['members'] = _live_members(session, [row.id])[row.id]
        return group


def server_group_member_hosts(group, exclude_instance=None):
    """{host: number of members on it}, counting every member but
    ``exclude_instance`` (the one being placed) on each host where it or
    one of its unsettled migrations holds an allocation, or that it is
    recorded on."""
    members = [m for m in group['members'] if m != exclude_instance]
    if not members:
        return {}
    providers = models.ResourceProvider.__table__
    roots = providers.alias('roots')
    with _session(writer=False) as session:
        migrations = session.execute(
            sa.select(models.Migration.uuid, models.Migration.instance_uuid)
            .where(models.Migration.instance_uuid.in_(members),
                   models.Migration.status.not_in(
                       states.MIGRATION_TERMINAL_STATUSES))).all()
        owner = {m: m for m in members}
        owner.update({uuid: inst for uuid, inst in migrations})
        held = session.execute(
            sa.select(models.Allocation.consumer_id, roots.c.name)
            .join(providers, providers.c.id ==
                  models.Allocation.resource_provider_id)
            .join(roots, roots.c.id == sa.func.coalesce(
                providers.c.root_provider_id, providers.c.id))
            .where(models.Allocation.consumer_id.in_(list(owner)))
            .distinct()).all()
        recorded = session.execute(
            sa.select(_INSTANCES.c.uuid, _INSTANCES.c.host).where(
                _INSTANCES.c.uuid.in_(members),
                _INSTANCES.c.host.is_not(None))).all()
    on = collections.defaultdict(set)
    for consumer, host in held:
        on[owner[consumer]].add(host)
    for instance_uuid, host in recorded:
        on[instance_uuid].add(host)
    counts = collections.Counter()
    for hosts in on.values():
        counts.update(hosts)
    return dict(counts)


# -- Mirrors (doc/cells.md "Server groups"): a group with members in a
# cell other than the API's home cell has a copy there (same uuid,
# policy and rules) holding that cell's members, so the cell's scheduler
# and views read it as before. The home cell's row stays authoritative.

_MIRRORED = ('uuid', 'name', 'user_id', 'project_id', 'policy', 'rules')


def mirror_in(conn, group):
    """The id of the group's row here, written from ``group`` (a group
    of another cell) when this cell has none."""
    found = conn.scalar(sa.select(_GROUPS.c.id).where(
        _GROUPS.c.uuid == group['uuid']))
    if found is not None:
        return found
    values = {k: group.get(k) for k in _MIRRORED}
    if isinstance(values['rules'], dict):
        values['rules'] = json.dumps(values['rules']) \
            if values['rules'] else None
    return conn.execute(_GROUPS.insert().values(
        created_at=models.utcnow(), **values)).inserted_primary_key[0]


def join_in(conn, group, instance_uuid):
    """``instance_uuid`` a member of ``group`` here (the mirror written
    if needed); nothing when it is one already."""
    group_id = mirror_in(conn, group)
    if conn.scalar(sa.select(_MEMBERS.c.id).where(
            _MEMBERS.c.instance_uuid == instance_uuid)) is None:
        conn.execute(_MEMBERS.insert().values(
            group_id=group_id, instance_uuid=instance_uuid,
            created_at=models.utcnow()))


def leave_in(conn, instance_uuid):
    """The server's member row here goes; its group's uuid, or None."""
    group_uuid = conn.scalar(
        sa.select(_GROUPS.c.uuid)
        .join(_MEMBERS, _MEMBERS.c.group_id == _GROUPS.c.id)
        .where(_MEMBERS.c.instance_uuid == instance_uuid))
    if group_uuid is not None:
        conn.execute(_MEMBERS.delete().where(
            _MEMBERS.c.instance_uuid == instance_uuid))
    return group_uuid


def group_row_of(conn, instance_uuid):
    """The plain row of the group ``instance_uuid`` is a member of here
    (for a copy in another cell), or None."""
    row = conn.execute(_GROUP_OF, {'b_uuid': instance_uuid}).first()
    return None if row is None else {k: row._mapping[k] for k in _MIRRORED}


def server_group_join(group, instance_uuid):
    """``instance_uuid`` a member of ``group`` in the targeted cell (no
    quota: a member moving there, counted already)."""
    with _session() as session:
        join_in(session.connection(), group, instance_uuid)


def server_group_leave(instance_uuid):
    """The server leaves its group in the targeted cell; the group's
    uuid, or None."""
    with _session() as session:
        return leave_in(session.connection(), instance_uuid)


def server_group_drop_if_empty(group_uuid):
    """A mirror with no member row left goes (never called on the home
    cell, whose row is the group); whether it went."""
    with _session() as session:
        conn = session.connection()
        # Locked: a member joining it (server_group_member_add) waits,
        # or is waited for and keeps it.
        group_id = conn.scalar(sa.select(_GROUPS.c.id).where(
            _GROUPS.c.uuid == group_uuid).with_for_update())
        if group_id is None or conn.scalar(
                sa.select(_MEMBERS.c.id).where(
                    _MEMBERS.c.group_id == group_id).limit(1)) is not None:
            return False
        conn.execute(_GROUPS.delete().where(_GROUPS.c.id == group_id))
        return True


def server_group_members_here(group_uuids, shown=False):
    """{group uuid: [live member]} of those of ``group_uuids`` that the
    targeted cell has a row of (its mirrors); ``shown``: see
    _live_members."""
    if not group_uuids:
        return {}
    with _session(writer=False) as session:
        ids = dict(session.execute(sa.select(_GROUPS.c.id, _GROUPS.c.uuid)
                                   .where(_GROUPS.c.uuid.in_(group_uuids)))
                   .all())
        members = _live_members(session, list(ids), shown=shown)
        return {ids[i]: members[i] for i in ids}
