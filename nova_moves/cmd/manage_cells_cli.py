"""The argument parsers of nova-moves-manage api_db and cell_v2: Nova's
sub-command and option names (nova-manage api_db, cell_v2).

oslo.config's sub-command namespace answers ``name`` with the command's
own name and refuses a name that is also an option (transport_url), so
each argument is stored under a prefix and handed to the command as a
plain namespace without it (Nova's manage does the same with its
action_kwarg_ prefix)."""
import argparse

from nova_moves.cmd import manage_cell_v2 as setup_cmds
from nova_moves.cmd import manage_cells as cmds

HELP_API_DB = 'The cells v2 API database schema'
HELP_CELL_V2 = 'Cells v2: cell, host and instance mappings'
_PREFIX = 'cells_arg_'

_CELL_UUID = {'metavar': '<cell_uuid>', 'help': 'The uuid of the cell.'}
_TRANSPORT_URL = {'metavar': '<transport_url>',
                  'help': 'The transport url for the cell message queue'}
_VERBOSE = {'action': 'store_true'}

# (sub-command, help, function, [(option, dest, argparse keywords)])
API_DB = [
    ('sync', 'Upgrade the API database schema to head (or to VERSION)',
     cmds.api_db_sync,
     [('version', 'version', {'metavar': 'VERSION', 'nargs': '?',
                              'help': 'Database version'})]),
    ('version', 'Print the API database schema revision',
     cmds.api_db_version, []),
]

CELL_V2 = [
    ('map_cell0', 'Create a cell mapping for cell0 (servers that never got '
     'a host).', setup_cmds.map_cell0,
     [('--database_connection', 'database_connection', {
         'metavar': '<database_connection>',
         'help': 'The database connection url for cell0. This is optional. '
                 'If not provided, a standard database connection will be '
                 'used based on the main database connection from the '
                 'configuration.'})]),
    ('simple_cell_setup', 'One command for a one-cell deployment: cell0, '
     'this cell, its hosts and its servers mapped. 0 when done (or done '
     'before), 1 when no compute host reports.',
     setup_cmds.simple_cell_setup,
     [('--transport-url', 'transport_url', _TRANSPORT_URL)]),
    ('create_cell', 'Add a new cell to the API database. DB and MQ urls can '
     'be provided directly or can be taken from config. The result is cell '
     'uuid.', cmds.create_cell,
     [('--name', 'name', {'metavar': '<cell_name>',
                          'help': 'The name of the cell'}),
      ('--database_connection', 'database_connection', {
          'metavar': '<database_connection>',
          'help': 'The database url for the cell database'}),
      ('--transport-url', 'transport_url', _TRANSPORT_URL),
      ('--verbose', 'verbose', dict(_VERBOSE, help='Output the uuid of the '
                                    'created cell')),
      ('--disabled', 'disabled', {'action': 'store_true',
                                  'help': 'To create a pre-disabled cell.'})]),
    ('list_cells', 'Lists the v2 cells in the deployment (passwords '
     'masked).', cmds.list_cells,
     [('--verbose', 'verbose', dict(_VERBOSE, help='Show sensitive details, '
                                    'such as passwords'))]),
    ('discover_hosts', 'Searches cells, or a single cell, and maps found '
     'hosts.', cmds.discover_hosts,
     [('--cell_uuid', 'cell_uuid', dict(_CELL_UUID, help='If provided only '
       'this cell will be searched for new hosts to map.')),
      ('--verbose', 'verbose', dict(_VERBOSE, help='Provide detailed output '
                                    'when discovering hosts.')),
      ('--strict', 'strict', {'action': 'store_true', 'help': 'Considered '
       'successful (exit code 0) only when an unmapped host is '
       'discovered.'}),
      ('--by-service', 'by_service', {'action': 'store_true', 'help': (
          'Discover hosts by service (always the case here; accepted for '
          'Nova\'s scripts)')})]),
    ('list_hosts', 'Lists the hosts in one or all v2 cells.',
     cmds.list_hosts, [('--cell_uuid', 'cell_uuid', _CELL_UUID)]),
    ('delete_cell', 'Delete an empty cell by the given uuid.',
     cmds.delete_cell,
     [('--cell_uuid', 'cell_uuid', dict(_CELL_UUID, required=True)),
      ('--force', 'force', {'action': 'store_true', 'help': (
          'Delete hosts and instance_mappings that belong to the cell as '
          'well.')})]),
    ('update_cell', 'Updates the properties of a cell by the given uuid.',
     cmds.update_cell,
     [('--cell_uuid', 'cell_uuid', dict(_CELL_UUID, required=True)),
      ('--name', 'name', {'metavar': '<cell_name>',
                          'help': 'Set the cell name.'}),
      ('--transport-url', 'transport_url', {
          'metavar': '<transport_url>', 'help': 'Set the cell '
          'transport_url. NOTE that running nodes will not see the change '
          'until restart!'}),
      ('--database_connection', 'db_connection', {
          'metavar': '<database_connection>', 'help': 'Set the cell '
          'database_connection. NOTE that running nodes will not see the '
          'change until restart!'}),
      ('--disable', 'disable', {'action': 'store_true',
                                'help': 'Disables the cell.'}),
      ('--enable', 'enable', {'action': 'store_true',
                              'help': 'Enables the cell.'})]),
    ('map_instances', 'Map the servers of the cell\'s database into the '
     'cell.', setup_cmds.map_instances,
     [('--cell_uuid', 'cell_uuid', dict(_CELL_UUID, required=True))]),
    ('verify_instance', 'Verify instance mapping to a cell.',
     setup_cmds.verify_instance,
     [('--uuid', 'uuid', {'metavar': '<instance_uuid>', 'required': True,
                          'help': 'The instance UUID to verify'}),
      ('--quiet', 'quiet', {'action': 'store_true',
                            'help': 'Do not print anything'})]),
]


def _command(function, dests):
    def run(args):
        return function(argparse.Namespace(**{
            dest: getattr(args, _PREFIX + dest) for dest in dests}))
    return run


def _add(parser, table):
    sub = parser.add_subparsers(dest='action')
    sub.required = True
    for name, help_text, function, arguments in table:
        cmd = sub.add_parser(name, help=help_text)
        for option, dest, kwargs in arguments:
            if option.startswith('-'):
                cmd.add_argument(option, dest=_PREFIX + dest, **kwargs)
            else:
                cmd.add_argument(_PREFIX + dest, **kwargs)
        cmd.set_defaults(func=_command(function, [a[1] for a in arguments]))


def setup_api_db(parser):
    _add(parser, API_DB)


def setup_cell_v2(parser):
    _add(parser, CELL_V2)
