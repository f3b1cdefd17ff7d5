"""The rows of a cross-cell resize (nova_moves/moves/cross_cell.py):
each function is one transaction on the database of the cell targeted
when it runs (cells.target), or on the API database (the mapping).

A server's copy is its instances row and the rows that hang on it and
that the API shows (metadata, system metadata, tags, faults, actions
and their events) and its server group membership (the group mirrored
there, doc/cells.md "Server groups"); the migration is copied by itself.
Nova copies the same (nova/conductor/tasks/cross_cell_migrate.py
TargetDBSetupTask); its groups are API-level, here per cell.
"""
import sqlalchemy as sa

from nova_moves.db import api_models
from nova_moves.db import api_session
from nova_moves.db import models
from nova_moves.db.instances import _encode_instance_values
from nova_moves.db import server_groups
from nova_moves.db.session import _tx, utcnow

_INSTANCES = models.Instance.__table__
_MIGRATIONS = models.Migration.__table__
_ACTIONS = models.InstanceAction.__table__
_EVENTS = models.InstanceActionEvent.__table__
# Rows keyed by the server's uuid that go with it: (table, column).
_BY_UUID = ((models.InstanceMetadata.__table__, 'instance_uuid'),
            (models.InstanceSystemMetadata.__table__, 'instance_uuid'),
            (models.Tag.__table__, 'resource_id'),
            (models.InstanceFault.__table__, 'instance_uuid'))
_MAPPINGS = api_models.InstanceMapping.__table__
_CELLS = api_models.CellMapping.__table__


def _plain(row):
    return dict(row._mapping)


def server_rows(instance_uuid):
    """Everything of the server to copy to another cell (raw rows)."""
    with _tx(writer=False) as conn:
        instance = conn.execute(sa.select(_INSTANCES).where(
            _INSTANCES.c.uuid == instance_uuid,
            _INSTANCES.c.deleted == 0)).first()
        if instance is None:
            return None
        rows = {'instance': _plain(instance)}
        for table, column in _BY_UUID:
            rows[table.name] = [_plain(r) for r in conn.execute(
                sa.select(table).where(table.c[column] == instance_uuid))]
        actions = [_plain(r) for r in conn.execute(sa.select(_ACTIONS).where(
            _ACTIONS.c.instance_uuid == instance_uuid))]
        ids = [a['id'] for a in actions]
        events = [_plain(r) for r in conn.execute(sa.select(_EVENTS).where(
            _EVENTS.c.action_id.in_(ids)))] if ids else []
        rows['actions'] = actions
        rows['events'] = events
        # Its server group goes with it (a mirror in the target cell).
        rows['group'] = server_groups.group_row_of(conn, instance_uuid)
    return rows


def server_copy(rows, hidden=True, values=None):
    """Insert ``rows`` (server_rows) here, the server ``hidden``, with
    ``values`` on it. A copy already here (a retried step) is replaced."""
    instance_uuid = rows['instance']['uuid']
    with _tx() as conn:
        _purge_in(conn, instance_uuid, migrations=False)
        instance = {k: v for k, v in rows['instance'].items() if k != 'id'}
        instance.update(values or {}, hidden=hidden)
        conn.execute(_INSTANCES.insert().values(**instance))
        for table, _column in _BY_UUID:
            for row in rows.get(table.name, ()):
                row = dict(row)
                if 'id' in table.c:
                    row.pop('id', None)
                conn.execute(table.insert().values(**row))
        new_ids = {}
        for action in rows['actions']:
            old = action['id']
            result = conn.execute(_ACTIONS.insert().values(**{
                k: v for k, v in action.items() if k != 'id'}))
            new_ids[old] = result.inserted_primary_key[0]
        for event in rows['events']:
            event = {k: v for k, v in event.items() if k != 'id'}
            event['action_id'] = new_ids[event['action_id']]
            conn.execute(_EVENTS.insert().values(**event))
        if rows.get('group'):
            server_groups.join_in(conn, rows['group'], instance_uuid)


def _purge_in(conn, instance_uuid, migrations=True):
    ids = list(conn.scalars(sa.select(_ACTIONS.c.id).where(
        _ACTIONS.c.instance_uuid == instance_uuid)))
    if ids:
        conn.execute(_EVENTS.delete().where(_EVENTS.c.action_id.in_(ids)))
    conn.execute(_ACTIONS.delete().where(
        _ACTIONS.c.instance_uuid == instance_uuid))
    for table, column in _BY_UUID:
        conn.execute(table.delete().where(table.c[column] == instance_uuid))
    if migrations:
        conn.execute(_MIGRATIONS.delete().where(
            _MIGRATIONS.c.instance_uuid == instance_uuid))
    conn.execute(_INSTANCES.delete().where(
        _INSTANCES.c.uuid == instance_uuid))
    # Its membership here (an emptied mirror stays until the group's
    # delete: a conductor cannot tell a mirror from the home cell's row).
    server_groups.leave_in(conn, instance_uuid)


def server_purge(instance_uuid):
    """The server's copy here goes, with its migrations (Nova's hard
    delete of the source cell's instance at confirm; the target cell's
    copy when the move is undone or reverted)."""
    with _tx() as conn:
        _purge_in(conn, instance_uuid)


def server_set(instance_uuid, values):
    """Plain values on the server's copy here (the copy the move's
    guards do not watch: its task_state follows the other cell's)."""
    with _tx() as conn:
        conn.execute(_INSTANCES.update().where(
            _INSTANCES.c.uuid == instance_uuid).values(
                updated_at=utcnow(), **_encode_instance_values(values)))


def migration_copy(migration):
    """The migration written here too (a dict as the source read it),
    replacing a copy already here."""
    values = {k: v for k, v in migration.items()
              if k in _MIGRATIONS.c and k != 'id'}
    for key in ('created_at', 'updated_at', 'deleted_at'):
        values.pop(key, None)
    values['cross_cell_move'] = True
    with _tx() as conn:
        conn.execute(_MIGRATIONS.delete().where(
            _MIGRATIONS.c.uuid == migration['uuid']))
        conn.execute(_MIGRATIONS.insert().values(created_at=utcnow(),
                                                 **values))


def migration_set(migration_uuid, values):
    """The other cell's copy follows the guarded one."""
    with _tx() as conn:
        conn.execute(_MIGRATIONS.update().where(
            _MIGRATIONS.c.uuid == migration_uuid).values(
                updated_at=utcnow(), **values))


def mapping_set_cell(instance_uuid, cell_uuid):
    """The server's instance mapping points at ``cell_uuid`` (the API
    database): where the API routes it from now on."""
    with api_session.tx() as conn:
        cell_id = conn.execute(sa.select(_CELLS.c.id).where(
            _CELLS.c.uuid == cell_uuid)).scalar_one()
        conn.execute(_MAPPINGS.update().where(
            _MAPPINGS.c.instance_uuid == instance_uuid).values(
                cell_id=cell_id, updated_at=utcnow()))
