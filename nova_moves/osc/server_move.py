"""openstack server move cold|live|show|unshelve.

Named apart from OSC's own ``server migrate`` / ``server migration
show``, whose options and arguments these extend, so the two never
clash. Each command sends the compute microversion its fields need
(more with --os-compute-api-version): cold 2.56 (host, force, check),
live 2.34 (the asynchronous checks; the SDK behind OSC sends 2.30),
unshelve 2.91 (host)."""
import datetime
import time

from osc_lib.command import command

from nova_moves.osc import common

COLD_VERSION = '2.56'
LIVE_VERSION = '2.34'
UNSHELVE_VERSION = '2.91'
MIGRATION_VERSION = '2.80'


def _check_result(body):
    return (('valid', 'reasons'),
            (body.get('valid'), '\n'.join(body.get('reasons') or ())))


def _server_row(server):
    return (('id', 'name', 'status', 'task_state', 'host'),
            (server['id'], server['name'], server['status'],
             server.get('OS-EXT-STS:task_state'),
             server.get('OS-EXT-SRV-ATTR:host')))


def _wait(api, server_id, statuses, timeout):
    deadline = time.monotonic() + timeout
    while True:
        server = api.server(server_id, version='2.47')
        if server['status'] in statuses and \
                server.get('OS-EXT-STS:task_state') is None:
            return server
        if time.monotonic() > deadline:
            raise common.exceptions.CommandError(
                'Server %s still %s/%s after %ss' % (
                    server_id, server['status'],
                    server.get('OS-EXT-STS:task_state'), timeout))
        time.sleep(1.0)


class _MoveCommand(command.ShowOne):
    ACTION = None
    MINIMUM = None
    DONE = ()

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('server', metavar='<server>',
                            help='Server (name or ID)')
        parser.add_argument('--host', metavar='<host>',
                            help='Destination host (checked by the '
                                 'scheduler unless forced)')
        parser.add_argument('--check', action='store_true',
                            help='Dry run: only say whether the move to '
                                 '--host would pass, and why not')
        parser.add_argument('--wait', action='store_true',
                            help='Wait for the move to end')
        parser.add_argument('--timeout', type=float, default=600)
        return parser

    def body(self, args):
        raise NotImplementedError

    def take_action(self, args):
        api = common.client(self.app)
        if args.check and not args.host:
            raise common.exceptions.CommandError('--check needs --host')
        server = common.find_server(api, args.server)
        source = server.get('OS-EXT-SRV-ATTR:host')
        version = common.microversion(self.app, self.MINIMUM)
        response = api.action(server['id'], {self.ACTION: self.body(args)},
                              version=version)
        if args.check:
            return _check_result(common.check(response, 200).json())
        common.check(response, 202)
        if not args.wait:
            return _server_row(api.server(server['id'], version='2.47'))
        shown = _wait(api, server['id'], self.DONE + ('ERROR',),
                      args.timeout)
        if shown['status'] == 'ERROR' or \
                shown.get('OS-EXT-SRV-ATTR:host') == source:
            raise common.exceptions.CommandError(
                'Server %s did not move (status %s on %s); see '
                '"openstack server event list %s"' % (
                    server['id'], shown['status'], source, server['id']))
        return _server_row(shown)


class ColdMigrate(_MoveCommand):
    """Cold-migrate a server (microversion 2.56+: --host, --force,
    --check); --wait stops at VERIFY_RESIZE."""
    ACTION = 'migrate'
    MINIMUM = COLD_VERSION
    DONE = ('VERIFY_RESIZE', 'ACTIVE', 'SHUTOFF')

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--force', action='store_true',
                            help='Skip the scheduler: claim on --host '
                                 'directly')
        return parser

    def body(self, args):
        if args.force and not args.host:
            raise common.exceptions.CommandError('--force needs --host')
        body = {}
        if args.host:
            body['host'] = args.host
        if args.force:
            body['force'] = True
        if args.check:
            body['check'] = True
        return body or None


class LiveMigrate(_MoveCommand):
    """Live-migrate a server at microversion 2.34+ (asynchronous
    pre-checks; their failures are in the server's events)."""
    ACTION = 'os-migrateLive'
    MINIMUM = LIVE_VERSION
    DONE = ('ACTIVE', 'PAUSED')

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--block-migration',
                            choices=('auto', 'true', 'false'),
                            default='auto')
        return parser

    def body(self, args):
        block = {'auto': 'auto', 'true': True, 'false': False}[
            args.block_migration]
        body = {'host': args.host, 'block_migration': block}
        if args.check:
            body['check'] = True
        return body


def _parse_time(text):
    return datetime.datetime.fromisoformat(text.rstrip('Z'))


def phases_text(phases):
    """One line per phase: when it began and how long it lasted."""
    lines = []
    for n, phase in enumerate(phases):
        began = _parse_time(phase['started_at'])
        if n + 1 < len(phases):
            took = (_parse_time(phases[n + 1]['started_at']) -
                    began).total_seconds()
            lasted = '%.3fs' % took
        else:
            lasted = '-'
        lines.append('%-15s %s  %s' % (phase['phase'], phase['started_at'],
                                       lasted))
    return '\n'.join(lines)


class ShowMigration(command.ShowOne):
    """Show one migration of a server, any status, with when each of its
    phases began and how long it lasted."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('server', metavar='<server>')
        parser.add_argument('migration', metavar='<migration>',
                            help='Migration ID or UUID')
        return parser

    def take_action(self, args):
        api = common.client(self.app)
        server = common.find_server(api, args.server)
        migration = common.check(api.get(
            '/os-migrations/%s' % args.migration,
            version=common.microversion(self.app, MIGRATION_VERSION)),
            200).json()['migration']
        if migration['instance_uuid'] != server['id']:
            raise common.exceptions.CommandError(
                'Migration %s is not a migration of server %s' % (
                    args.migration, server['id']))
        columns = ('id', 'uuid', 'migration_type', 'status',
                   'source_compute', 'dest_compute', 'old_instance_type_id',
                   'new_instance_type_id', 'created_at', 'updated_at',
                   'user_id', 'project_id')
        columns = tuple(c for c in columns if c in migration)
        return (columns + ('phases',),
                tuple(migration[c] for c in columns) +
                (phases_text(migration.get('phases') or []),))


class Unshelve(command.ShowOne):
    """Unshelve a server onto a given host (microversion 2.91)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('server', metavar='<server>')
        parser.add_argument('--host', metavar='<host>', required=True)
        parser.add_argument('--wait', action='store_true')
        parser.add_argument('--timeout', type=float, default=600)
        return parser

    def take_action(self, args):
        api = common.client(self.app)
        server = common.find_server(api, args.server)
        common.check(api.action(server['id'], {'unshelve': {
            'host': args.host}}, version=common.microversion(
                self.app, UNSHELVE_VERSION)), 202)
        if args.wait:
            return _server_row(_wait(api, server['id'], ('ACTIVE', 'ERROR'),
                                     args.timeout))
        return _server_row(api.server(server['id'], version='2.47'))
