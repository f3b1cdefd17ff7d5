"""nova-moves-manage cell_v2: the set-up commands (map_cell0,
simple_cell_setup, map_instances, verify_instance); the others are in
manage_cells, the parsers in manage_cells_cli."""
import os
from urllib import parse

from oslo_db import exception as db_exc
import sqlalchemy as sa

from nova_moves.cmd import manage_cells
from nova_moves import conf
from nova_moves.db import mappings
from nova_moves.db import migration
from nova_moves.db import request_specs

CONF = conf.CONF


def cell0_default_connection():
    """Nova's: the main database's URL, its database name + '_cell0'.
    A SQLite file keeps its extension (nova_moves_cell0.sqlite)."""
    url = sa.engine.make_url(CONF.database.connection)
    database = url.database or ''
    if url.get_backend_name() == 'sqlite' and database:
        root, ext = os.path.splitext(database)
        database = root + '_cell0' + ext
    else:
        database += '_cell0'
    return parse.unquote(url.set(database=database).render_as_string(
        hide_password=False))


def _map_cell0(database_connection=None):
    # RPC never goes to cell0: its transport is Nova's 'none:///'.
    return mappings.cell_create({
        'uuid': mappings.CELL0_UUID, 'name': mappings.CELL0_NAME,
        'transport_url': mappings.CELL0_TRANSPORT_URL,
        'database_connection': (database_connection or
                                cell0_default_connection())})


def map_cell0(args):
    try:
        _map_cell0(args.database_connection)
    except db_exc.DBDuplicateEntry:
        print('Cell0 is already setup')
    return 0


def _local_cell():
    """The cell whose database is this host's [database] connection."""
    for cell in mappings.cell_list():
        if cell['database_connection'] == CONF.database.connection and \
                not mappings.is_cell0(cell):
            return cell
    return None


def map_cell_and_hosts(transport_url, name=None, verbose=False):
    """Nova's _map_cell_and_hosts: this host's cell ([database] and the
    transport URL) mapped with its compute hosts; the cell's uuid, or
    None when there is no compute host to map."""
    hosts = mappings.cell_compute_hosts(CONF.database.connection)
    if not hosts:
        print('No hosts found to map to cell, exiting.')
        return None
    cell_uuid = None
    missing = []
    for host in hosts:
        mapping = mappings.host_mapping_get(host)
        if mapping is None:
            missing.append(host)
            continue
        if verbose:
            print('Host %s is already mapped to cell %s' % (
                host, mapping['cell_uuid']))
        cell_uuid = mapping['cell_uuid']
    if not missing:
        print('All hosts are already mapped to cell(s).')
        return cell_uuid
    # Reuse a mapping of this cell (by a host, else by its database) so
    # a second run never maps one database twice.
    cell = mappings.cell_get(cell_uuid) if cell_uuid else _local_cell()
    if cell is None:
        cell = mappings.cell_create({
            'name': name, 'transport_url': transport_url,
            'database_connection': CONF.database.connection})
    for host in missing:
        mappings.host_mapping_create(host, cell['id'])
    if verbose:
        print(cell['uuid'])
    return cell['uuid']


def simple_cell_setup(args):
    """Today's one-cell deployment into cells v2 in one command: cell0
    mapped (and its schema synced), this host's cell mapped with its
    compute hosts, the existing servers mapped. 0 when done (or done
    before), 1 when no compute host reports (nothing can be mapped)."""
    transport_url = manage_cells.validate_transport_url(args.transport_url)
    if not transport_url:
        return 1
    try:
        cell0 = _map_cell0()
    except db_exc.DBDuplicateEntry:
        print('Cell0 is already setup')
        cell0 = mappings.cell_get(mappings.CELL0_UUID)
    try:
        migration.db_sync_url(cell0['database_connection'])
    except Exception as ex:
        print('Unable to sync cell0 schema: %s' % ex)
    cell_uuid = map_cell_and_hosts(transport_url)
    if cell_uuid is None:
        return 1
    _map_instances(mappings.cell_get(cell_uuid))
    return 0


def _map_instances(cell):
    """The cell's servers mapped, and given the request specs they lack
    (servers booted before the API database kept them)."""
    instances = mappings.cell_instances(cell['database_connection'])
    mapped = mappings.instance_mappings_map(cell['id'], instances)
    request_specs.fill(cell['id'], instances)
    return mapped


def map_instances(args):
    """Every server of the cell's database without a cell given one (all
    at once: Nova's --max-count batches are not needed at this size)."""
    cell = manage_cells._get_cell(args.cell_uuid)
    if cell is None:
        return 1
    _map_instances(cell)
    return 0


def verify_instance(args):
    def say(string):
        if not args.quiet:
            print(string)

    uuid = args.uuid
    mapping = mappings.instance_mapping_get(uuid)
    if mapping is None:
        say('Instance %s is not mapped to a cell (upgrade is incomplete) '
            'or instance does not exist' % uuid)
        return 1
    if mapping['cell_id'] is None:
        say('Instance %s is not mapped to a cell' % uuid)
        return 2
    cell = mappings.cell_get(mapping['cell_uuid'])
    deleted = mappings.cell_instance_deleted(cell['database_connection'],
                                             uuid)
    if deleted:
        say('The instance with uuid %s has been deleted.' % uuid)
        return 3
    if deleted is None:
        say('The instance with uuid %s has been archived.' % uuid)
        say('However its instance_mapping remains.')
        return 4
    say('Instance %s is in cell: %s (%s)' % (uuid, cell['name'],
                                             cell['uuid']))
    return 0
