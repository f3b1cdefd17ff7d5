"""nova-moves-manage api_db and cell_v2: the cells v2 API database and
its mappings, with Nova's nova-manage sub-commands, arguments, messages
and exit codes (nova/cmd/manage.py ApiDbCommands, CellV2Commands).

What differs from Nova, and why, is said where it happens; doc/cells.md
is the operator's guide."""
from urllib import parse

from oslo_config import cfg
from oslo_db import exception as db_exc
import oslo_messaging as messaging
from oslo_messaging import opts as messaging_opts
import sqlalchemy as sa

from nova_moves.cmd import tables
from nova_moves import conf
from nova_moves.db import api_migration
from nova_moves.db import mappings
from nova_moves import exception

CONF = conf.CONF


def mask_passwd_in_url(url):
    """The password of every user in the URL shown as ****, as Nova's
    list_cells does. Per host of a multi-host URL (Nova's greedy
    ':.*@' hides every host but the last), and only in the netloc
    (Nova's urlunparse turns sqlite:////x into sqlite://x)."""
    netloc = parse.urlsplit(url or '').netloc
    if '@' not in netloc:
        return url
    hosts = []
    for part in netloc.split(','):
        if '@' in part:
            user, host = part.rsplit('@', 1)
            if ':' in user:
                part = '%s:****@%s' % (user.split(':', 1)[0], host)
        hosts.append(part)
    return url.replace(netloc, ','.join(hosts), 1)


def conf_transport_url():
    # [DEFAULT] transport_url is oslo.messaging's option, registered when
    # a transport is built; this command builds none. Only that option:
    # its neighbours' defaults are changed by set_transport_defaults,
    # and a copy of them would no longer register as the same option.
    try:
        return CONF.transport_url
    except cfg.NoSuchOptError:
        CONF.register_opts([opt for group, options in
                            messaging_opts.list_opts() if group is None
                            for opt in options if opt.name == 'transport_url'])
    return CONF.transport_url


def validate_transport_url(transport_url, warn_about_none=True):
    if not transport_url:
        if not conf_transport_url():
            if warn_about_none:
                print('Must specify --transport-url if '
                      '[DEFAULT]/transport_url is not set in the '
                      'configuration file.')
            return None
        print('--transport-url not provided in the command line, using the '
              'value [DEFAULT]/transport_url from the configuration file')
        transport_url = CONF.transport_url
    try:
        messaging.TransportURL.parse(conf=CONF, url=transport_url)
    except (messaging.InvalidTransportURL, ValueError) as e:
        print('Invalid transport URL: %s' % e)
        return None
    return transport_url


def validate_database_connection(database_connection, warn_about_none=True):
    if not database_connection:
        if not CONF.database.connection:
            if warn_about_none:
                print('Must specify --database_connection if '
                      '[database]/connection is not set in the '
                      'configuration file.')
            return None
        print('--database_connection not provided in the command line, '
              'using the value [database]/connection from the '
              'configuration file')
        return CONF.database.connection
    return database_connection


def _not_unique(cell, transport_url, database_connection):
    """Nova's check: no two cells share a database or a queue."""
    for other in mappings.cell_list():
        if cell and other['uuid'] == cell['uuid']:
            continue
        if (other['database_connection'] == database_connection or
                other['transport_url'] == transport_url):
            print('The specified transport_url and/or database_connection '
                  'combination already exists for another cell with uuid '
                  '%s.' % other['uuid'])
            return True
    return False


def _get_cell(cell_uuid):
    try:
        return mappings.cell_get(cell_uuid)
    except exception.CellMappingNotFound:
        print('Cell with uuid %s was not found.' % cell_uuid)
        return None


# api_db

def api_db_sync(args):
    api_migration.db_sync(args.version or 'head')
    print('API database at revision %s' % api_migration.db_version())
    return 0


def api_db_version(args):
    print(api_migration.db_version())
    return 0


# cell_v2

def create_cell(args):
    transport_url = validate_transport_url(args.transport_url)
    if not transport_url:
        return 1
    database_connection = validate_database_connection(
        args.database_connection)
    if not database_connection:
        return 1
    if _not_unique(None, transport_url, database_connection):
        return 2
    cell = mappings.cell_create({
        'name': args.name, 'transport_url': transport_url,
        'database_connection': database_connection,
        'disabled': args.disabled})
    if args.verbose:
        print(cell['uuid'])
    return 0


def list_cells(args):
    rows = []
    for cell in sorted(mappings.cell_list(),
                       key=lambda cell: cell['name'] or ''):
        urls = [cell['transport_url'], cell['database_connection']]
        if not args.verbose:
            urls = [mask_passwd_in_url(url) for url in urls]
        rows.append([cell['name'] or '', cell['uuid']] + urls +
                    [bool(cell['disabled'])])
    print(tables.render(('Name', 'UUID', 'Transport URL',
                         'Database Connection', 'Disabled'), rows))
    return 0


def discover_hosts(args):
    def status(msg):
        if args.verbose:
            print(msg)

    if args.cell_uuid:
        cell = _get_cell(args.cell_uuid)
        if cell is None:
            return 1
        cells = [cell]
    else:
        cells = mappings.cell_list()
        status('Found %s cell mappings.' % len(cells))
    unreachable = []
    try:
        found = mappings.discover_hosts(cells, status, unreachable)
    except exception.HostMappingExists as exp:
        print('ERROR: Duplicate host mapping was encountered. This command '
              'should be run once after all compute hosts have been '
              'deployed and should not be run in parallel. When run in '
              'parallel, the commands will collide with each other trying '
              'to map the same hosts in the database at the same time. '
              'Error: %s' % exp)
        return 2
    # Nova stops at the first cell it cannot read (a traceback, exit 1);
    # the others are mapped here first, then the same exit code.
    for cell, exc in unreachable:
        print('ERROR: Cannot read the database of cell %s: %s' % (
            cell['uuid'], str(exc).splitlines()[0]))
    if unreachable:
        return 1
    return int(not found) if args.strict else 0


def list_hosts(args):
    cell_id = None
    if args.cell_uuid:
        cell = _get_cell(args.cell_uuid)
        if cell is None:
            return 1
        cell_id = cell['id']
    rows = [(host['cell_name'], host['cell_uuid'], host['host'])
            for host in mappings.host_mapping_list(cell_id)]
    print(tables.render(('Cell Name', 'Cell UUID', 'Hostname'), rows))
    return 0


def delete_cell(args):
    cell = _get_cell(args.cell_uuid)
    if cell is None:
        return 1
    if mappings.host_mapping_list(cell['id']) and not args.force:
        print('There are existing hosts mapped to cell with uuid %s.'
              % args.cell_uuid)
        return 2
    if mappings.instance_mappings_by_cell(cell['id']):
        try:
            alive = mappings.cell_instances(cell['database_connection'],
                                            include_deleted=False)
        except sa.exc.SQLAlchemyError as exc:
            print('Cannot read the instances of cell %s: %s' % (
                args.cell_uuid, exc))
            return 3
        if alive:
            print('There are existing instances mapped to cell with uuid '
                  '%s.' % args.cell_uuid)
            return 3
        if not args.force:
            print('There are instance mappings to cell with uuid %s, but '
                  'all instances have been deleted in the cell.'
                  % args.cell_uuid)
            # Nova points at archive_deleted_rows, which removes them;
            # there is no such command here, --force does it.
            print('So execute delete_cell with --force to delete the '
                  'instance mappings.')
            return 4
    mappings.cell_delete(args.cell_uuid, with_mappings=True)
    return 0


def update_cell(args):
    cell = _get_cell(args.cell_uuid)
    if cell is None:
        return 1
    values = {}
    if args.name:
        values['name'] = args.name
    # Only what is given changes. (Nova's update_cell falls back to this
    # host's [DEFAULT] transport_url and [database] connection when the
    # options are absent, so renaming a cell from another cell's config
    # would repoint it; not here.)
    transport_url = db_connection = None
    if args.transport_url:
        transport_url = validate_transport_url(args.transport_url)
        if not transport_url:
            return 1
    if args.db_connection:
        db_connection = args.db_connection
    if _not_unique(cell, transport_url, db_connection):
        return 3
    if transport_url:
        values['transport_url'] = transport_url
    if db_connection:
        values['database_connection'] = db_connection
    if args.disable and args.enable:
        print('Cell cannot be disabled and enabled at the same time.')
        return 4
    if args.disable or args.enable:
        if mappings.is_cell0(cell):
            print('Cell0 cannot be disabled.')
            return 5
        if args.disable and not cell['disabled']:
            values['disabled'] = True
        elif args.enable and cell['disabled']:
            values['disabled'] = False
        elif args.disable:
            print('Cell %s is already disabled' % args.cell_uuid)
        else:
            print('Cell %s is already enabled' % args.cell_uuid)
    try:
        mappings.cell_update(args.cell_uuid, values)
    except (db_exc.DBError, exception.NovaMovesException) as e:
        print('Unable to update CellMapping: %s' % e)
        return 2
    return 0
