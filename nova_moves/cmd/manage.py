"""nova-moves-manage: database and service administration."""
import sys

from oslo_config import cfg

from nova_moves.cmd import manage_host
from nova_moves.cmd import tables
from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves.db import api_migration
from nova_moves.db import api_session
from nova_moves.db import migration
from nova_moves import service

CONF = conf.CONF


def _db_sync(args):
    migration.db_sync()
    print('Database at revision %s' % migration.db_version())
    if not api_session.separate():
        # One-cell deployment: db sync brought the API tables here too.
        print('API database at revision %s' % api_migration.db_version())
    return 0


def _db_version(args):
    print(migration.db_version() or 'none')
    return 0


def _service_list(args):
    rows = [(row['id'], row['binary'], row['host'],
             'disabled' if row['disabled'] else 'enabled',
             'up' if db_api.service_is_up(row) else 'down',
             row['forced_down'])
            for row in db_api.service_get_all()]
    print(tables.render(('Id', 'Binary', 'Host', 'Status', 'State',
                         'Forced down'), rows))
    return 0


def _service_delete(args):
    db_api.service_delete(args.service_id)
    print('Deleted service %s' % args.service_id)
    return 0


COMMANDS = {}
COMMANDS['host'] = (manage_host.HELP, manage_host.setup)


def add_command_parsers(subparsers):
    db = subparsers.add_parser('db', help='Database schema')
    db_sub = db.add_subparsers(dest='action')
    db_sub.required = True
    db_sub.add_parser('sync', help='Upgrade the schema to head').set_defaults(
        func=_db_sync)
    db_sub.add_parser('version', help='Print the schema revision') \
        .set_defaults(func=_db_version)
    svc = subparsers.add_parser('service', help='Services')
    svc_sub = svc.add_subparsers(dest='action')
    svc_sub.required = True
    svc_sub.add_parser('list', help='List services').set_defaults(
        func=_service_list)
    delete = svc_sub.add_parser('delete', help='Delete a service record')
    delete.add_argument('service_id')
    delete.set_defaults(func=_service_delete)
    for name, (help_text, setup) in COMMANDS.items():
        setup(subparsers.add_parser(name, help=help_text))


def main():
    CONF.register_cli_opt(cfg.SubCommandOpt(
        'category', title='Commands', handler=add_command_parsers))
    service.prepare(sys.argv, 'nova-moves-manage')
    sys.exit(CONF.category.func(CONF.category))


def _register_commands():
    # Added here rather than next to COMMANDS so each command module stays
    # an independent, small edit.
    from nova_moves.cmd import manage_cells_cli
    from nova_moves.cmd import manage_image
    from nova_moves.cmd import manage_placement
    from nova_moves.cmd import manage_status
    COMMANDS['api_db'] = (manage_cells_cli.HELP_API_DB,
                          manage_cells_cli.setup_api_db)
    COMMANDS['cell_v2'] = (manage_cells_cli.HELP_CELL_V2,
                           manage_cells_cli.setup_cell_v2)
    COMMANDS['image'] = (manage_image.HELP, manage_image.setup)
    COMMANDS['placement'] = (manage_placement.HELP, manage_placement.setup)
    COMMANDS['status'] = (manage_status.HELP, manage_status.setup)


_register_commands()
