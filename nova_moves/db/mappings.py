"""The cells v2 API database: cell, host and instance mappings (Nova's
CellMapping, HostMapping and InstanceMapping objects), as plain dicts.

Each function is one transaction on the API database (db/api_session:
the [database] database in a one-cell deployment). Reads of a cell's
own database, which the operator commands need, are at the end."""
import uuid as uuidlib

from oslo_db import exception as db_exc
from oslo_log import log as logging
import sqlalchemy as sa

from nova_moves.db import api_models
from nova_moves.db import api_session
from nova_moves.db import models
from nova_moves.db import request_specs
from nova_moves.db import session
from nova_moves import exception

LOG = logging.getLogger(__name__)
# Nova's: cell0 holds the servers that never got a host.
CELL0_UUID = '00000000-0000-0000-0000-000000000000'
CELL0_NAME = 'cell0'
# RPC never goes to cell0 (Nova's transport URL for it).
CELL0_TRANSPORT_URL = 'none:///'
COMPUTE_BINARY = 'nova-moves-compute'

_CELLS = api_models.CellMapping.__table__
_HOSTS = api_models.HostMapping.__table__
_INSTANCES = api_models.InstanceMapping.__table__


def _cell(row):
    return None if row is None else session._row_dict(row)


def is_cell0(cell):
    return cell['uuid'] == CELL0_UUID


# Cells

def cell_create(values):
    """A new cell mapping (a uuid made unless given); DBDuplicateEntry
    when that uuid is mapped already."""
    values = dict(values, uuid=values.get('uuid') or str(uuidlib.uuid4()),
                  disabled=bool(values.get('disabled')),
                  created_at=session.utcnow())
    with api_session.tx() as conn:
        conn.execute(_CELLS.insert().values(**values))
        return _cell(conn.execute(sa.select(_CELLS).where(
            _CELLS.c.uuid == values['uuid'])).first())


def cell_get(cell_uuid):
    with api_session.tx(writer=False) as conn:
        row = conn.execute(sa.select(_CELLS).where(
            _CELLS.c.uuid == cell_uuid)).first()
    if row is None:
        raise exception.CellMappingNotFound(uuid=cell_uuid)
    return _cell(row)


def cell_list():
    with api_session.tx(writer=False) as conn:
        return [_cell(row) for row in conn.execute(
            sa.select(_CELLS).order_by(_CELLS.c.id))]


def cell_update(cell_uuid, values):
    with api_session.tx() as conn:
        result = conn.execute(_CELLS.update().where(
            _CELLS.c.uuid == cell_uuid).values(
                updated_at=session.utcnow(), **values))
        if not result.rowcount:
            raise exception.CellMappingNotFound(uuid=cell_uuid)
        return _cell(conn.execute(sa.select(_CELLS).where(
            _CELLS.c.uuid == cell_uuid)).first())


def cell_delete(cell_uuid, with_mappings=False):
    """The cell mapping deleted; with ``with_mappings`` its host and
    instance mappings first, in the same transaction."""
    with api_session.tx() as conn:
        cell_id = conn.execute(sa.select(_CELLS.c.id).where(
            _CELLS.c.uuid == cell_uuid)).scalar()
        if cell_id is None:
            raise exception.CellMappingNotFound(uuid=cell_uuid)
        if with_mappings:
            conn.execute(_HOSTS.delete().where(_HOSTS.c.cell_id == cell_id))
            specs = api_models.RequestSpec.__table__
            conn.execute(specs.delete().where(specs.c.instance_uuid.in_(
                sa.select(_INSTANCES.c.instance_uuid).where(
                    _INSTANCES.c.cell_id == cell_id))))
            conn.execute(_INSTANCES.delete().where(
                _INSTANCES.c.cell_id == cell_id))
        conn.execute(_CELLS.delete().where(_CELLS.c.id == cell_id))


# Hosts

def _host_select():
    return sa.select(_HOSTS.c.host, _HOSTS.c.cell_id,
                     _CELLS.c.uuid.label('cell_uuid'),
                     _CELLS.c.name.label('cell_name')).join(
        _CELLS, _CELLS.c.id == _HOSTS.c.cell_id)


def host_mapping_get(host):
    """The host's mapping (with its cell's uuid and name), or None."""
    with api_session.tx(writer=False) as conn:
        row = conn.execute(_host_select().where(
            _HOSTS.c.host == host)).first()
    return None if row is None else dict(row._mapping)


def host_mappings_of(hosts):
    """{host: its mapping} of those of ``hosts`` that are mapped."""
    with api_session.tx(writer=False) as conn:
        return {row.host: dict(row._mapping) for row in conn.execute(
            _host_select().where(_HOSTS.c.host.in_(list(hosts))))}


def host_mapping_create(host, cell_id):
    try:
        with api_session.tx() as conn:
            conn.execute(_HOSTS.insert().values(
                host=host, cell_id=cell_id, created_at=session.utcnow()))
    except db_exc.DBDuplicateEntry:
        raise exception.HostMappingExists(name=host)


def host_mapping_list(cell_id=None):
    query = _host_select().order_by(_HOSTS.c.host)
    if cell_id is not None:
        query = query.where(_HOSTS.c.cell_id == cell_id)
    with api_session.tx(writer=False) as conn:
        return [dict(row._mapping) for row in conn.execute(query)]


# Instances

def instance_mapping_create(instance_uuid, cell_id, project_id, user_id,
                            queued_for_delete=False, spec=None):
    """False when the server is mapped already (left as it is). With
    ``spec`` (db/request_specs.build) its request spec too, in the same
    transaction."""
    try:
        with api_session.tx() as conn:
            conn.execute(_INSTANCES.insert().values(
                instance_uuid=instance_uuid, cell_id=cell_id,
                project_id=project_id, user_id=user_id,
                queued_for_delete=queued_for_delete,
                created_at=session.utcnow()))
            if spec is not None:
                request_specs.insert(conn, instance_uuid, spec)
    except db_exc.DBDuplicateEntry:
        return False
    return True


def local_cell_id(conn, database_connection):
    """The id of the cell whose database is ``database_connection`` (the
    [database] of the process asking): by that URL, else the only cell
    there is; None when there is no such cell yet (a one-cell deployment
    before ``cell_v2 simple_cell_setup``)."""
    cells = conn.execute(sa.select(
        _CELLS.c.id, _CELLS.c.database_connection).where(
            _CELLS.c.uuid != CELL0_UUID)).all()
    for cell_id, url in cells:
        if url == database_connection:
            return cell_id
    if len(cells) > 1:
        # The boot still succeeds (unmapped, as before cells); routing
        # will need it right: say which option to align.
        LOG.warning('No cell mapping has this process\'s [database] '
                    'connection among %d cells: the new server is mapped to '
                    'no cell. Give the cell this exact URL (cell_v2 '
                    'update_cell --database_connection).', len(cells))
    return cells[0][0] if len(cells) == 1 else None


def instance_mapping_for_boot(instance_uuid, project_id, user_id,
                              database_connection, spec=None):
    """The new server's mapping, to the cell it was created in (and its
    request spec, as instance_mapping_create)."""
    with api_session.tx() as conn:
        conn.execute(_INSTANCES.insert().values(
            instance_uuid=instance_uuid,
            cell_id=local_cell_id(conn, database_connection),
            project_id=project_id, user_id=user_id, queued_for_delete=False,
            created_at=session.utcnow()))
        if spec is not None:
            request_specs.insert(conn, instance_uuid, spec)


def instance_mapping_get(instance_uuid):
    """The server's mapping with its cell's uuid and name (None when not
    in a cell), or None when it has no mapping."""
    query = sa.select(_INSTANCES, _CELLS.c.uuid.label('cell_uuid'),
                      _CELLS.c.name.label('cell_name')).outerjoin(
        _CELLS, _CELLS.c.id == _INSTANCES.c.cell_id).where(
            _INSTANCES.c.instance_uuid == instance_uuid)
    with api_session.tx(writer=False) as conn:
        row = conn.execute(query).first()
    return None if row is None else session._row_dict(row)


def instance_mapping_queue_for_delete(instance_uuid, queued=True):
    """Nova's queued_for_delete, set when the server is deleted (the
    mapping itself goes when the deleted rows are archived); its request
    spec goes at once (nothing shows a deleted server's flavor from it)."""
    with api_session.tx() as conn:
        conn.execute(_INSTANCES.update().where(
            _INSTANCES.c.instance_uuid == instance_uuid).values(
                queued_for_delete=queued, updated_at=session.utcnow()))
        if queued:
            request_specs.delete(conn, instance_uuid)


def instance_mapping_delete(instance_uuid):
    """The mapping of a server that never existed for its owner (a boot
    undone before it was answered), and its request spec."""
    with api_session.tx() as conn:
        request_specs.delete(conn, instance_uuid)
        conn.execute(_INSTANCES.delete().where(
            _INSTANCES.c.instance_uuid == instance_uuid))


def instance_mappings_by_cell(cell_id):
    with api_session.tx(writer=False) as conn:
        return [row[0] for row in conn.execute(
            sa.select(_INSTANCES.c.instance_uuid).where(
                _INSTANCES.c.cell_id == cell_id))]


def cell_ids_of_project(project_id):
    """The ids of the cells the project has servers in (deleted ones
    too), by their instance mappings (Nova's
    InstanceMappingList.get_cell_mappings_by_project)."""
    with api_session.tx(writer=False) as conn:
        return {row[0] for row in conn.execute(
            sa.select(_INSTANCES.c.cell_id).distinct().where(
                _INSTANCES.c.project_id == project_id,
                _INSTANCES.c.cell_id.is_not(None)))}


def instance_mappings_in_cells(cell_ids, project_id=None):
    """The live servers' mappings of those cells (of ``project_id`` when
    given), newest first: the partial records of the cells that are
    down (Nova's get_not_deleted_by_cell_and_project)."""
    query = sa.select(_INSTANCES).where(
        _INSTANCES.c.cell_id.in_(list(cell_ids)),
        sa.or_(_INSTANCES.c.queued_for_delete == sa.false(),
               _INSTANCES.c.queued_for_delete.is_(None))).order_by(
            _INSTANCES.c.created_at.desc(), _INSTANCES.c.id.desc())
    if project_id:
        query = query.where(_INSTANCES.c.project_id == project_id)
    with api_session.tx(writer=False) as conn:
        return [session._row_dict(row) for row in conn.execute(query)]


def instance_mappings_map(cell_id, instances):
    """Map each of ``instances`` (dicts of uuid, project_id, user_id,
    deleted) to the cell: a new mapping, or one with no cell yet given
    this one. The number mapped."""
    mapped = 0
    with api_session.tx() as conn:
        known = {row[0]: row[1] for row in conn.execute(sa.select(
            _INSTANCES.c.instance_uuid, _INSTANCES.c.cell_id))}
        for inst in instances:
            if inst['uuid'] not in known:
                conn.execute(_INSTANCES.insert().values(
                    instance_uuid=inst['uuid'], cell_id=cell_id,
                    project_id=inst['project_id'], user_id=inst['user_id'],
                    queued_for_delete=bool(inst['deleted']),
                    created_at=session.utcnow()))
            elif known[inst['uuid']] is None:
                conn.execute(_INSTANCES.update().where(
                    _INSTANCES.c.instance_uuid == inst['uuid']).values(
                        cell_id=cell_id, updated_at=session.utcnow()))
            else:
                continue
            mapped += 1
    return mapped


def discover_hosts(cells, status=lambda msg: None, unreachable=None):
    """Host mappings for the compute services of ``cells`` that have
    none, with Nova's progress messages to ``status`` (Nova's
    host_mapping.discover_hosts --by-service: computes here register a
    service row, and the cell database has no compute_nodes.mapped
    column). The hosts mapped; HostMappingExists when another discovery
    mapped one of them in between. A cell whose database cannot be read
    is appended to ``unreachable`` (with the error) and the others are
    still searched; without that list the error is raised."""
    found = []
    for cell in cells:
        if is_cell0(cell):
            status('Skipping cell0 since it does not contain hosts.')
            continue
        if cell['name']:
            status("Getting computes from cell '%s': %s" % (
                cell['name'], cell['uuid']))
        else:
            status('Getting computes from cell: %s' % cell['uuid'])
        added = []
        try:
            hosts = cell_compute_hosts(cell['database_connection'])
        except sa.exc.SQLAlchemyError as exc:
            if unreachable is None:
                raise
            unreachable.append((cell, exc))
            continue
        for host in hosts:
            if host_mapping_get(host) is None:
                status('Creating host mapping for service %s' % host)
                host_mapping_create(host, cell['id'])
                added.append(host)
        status('Found %s unmapped computes in cell: %s' % (
            len(added), cell['uuid']))
        found += added
    return found


# A cell's own database (read by the operator commands)

def cell_compute_hosts(database_connection):
    """The hosts with a compute service in that cell's database."""
    services = models.Service.__table__
    with api_session.cell_connection(database_connection) as conn:
        return sorted({row[0] for row in conn.execute(
            sa.select(services.c.host).where(
                services.c.binary == COMPUTE_BINARY))})


def cell_instances(database_connection, include_deleted=True):
    """[{uuid, project_id, user_id, deleted, and what a request spec
    keeps: flavor (JSON text), image_ref, requested_az}] of that cell's
    servers, oldest first."""
    table = models.Instance.__table__
    query = sa.select(table.c.uuid, table.c.project_id, table.c.user_id,
                      table.c.deleted, table.c.flavor, table.c.image_ref,
                      table.c.requested_az).order_by(table.c.created_at,
                                                     table.c.id)
    if not include_deleted:
        query = query.where(table.c.deleted == 0)
    with api_session.cell_connection(database_connection) as conn:
        return [dict(row._mapping) for row in conn.execute(query)]


def cell_instance_deleted(database_connection, instance_uuid):
    """Whether that cell's server is deleted; None when it has no row."""
    table = models.Instance.__table__
    with api_session.cell_connection(database_connection) as conn:
        row = conn.execute(sa.select(table.c.deleted).where(
            table.c.uuid == instance_uuid)).first()
    return None if row is None else bool(row[0])
