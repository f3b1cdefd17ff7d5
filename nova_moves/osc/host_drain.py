"""openstack host drain create|list|show|delete: /os-host-drains."""
import sys
import time

from osc_lib.command import command

from nova_moves.cmd import manage_drain
from nova_moves.osc import common

COLUMNS = ('id', 'host', 'mode', 'status', 'conductor', 'target_hosts',
           'force_down_if_dead', 'counts', 'created_at', 'started_at',
           'finished_at')
ENDED = ('completed', 'cancelled')


def _counts(counts):
    return ', '.join('%s=%s' % (k, counts[k]) for k in (
        'total', 'done', 'moving', 'queued', 'pending', 'failed'))


def _row(drain, columns):
    values = []
    for column in columns:
        value = drain.get(column)
        if column == 'counts' and value:
            value = _counts(value)
        elif column == 'target_hosts' and value:
            value = ', '.join(value)
        values.append(value)
    return tuple(values)


def _servers(drain):
    return '\n'.join('%s %s %s%s%s' % (
        s['server_uuid'], s['state'], s['action'] or '-',
        ' -> %s' % s['dest_compute'] if s['dest_compute'] else '',
        ' (%s)' % s['reason'] if s['reason'] else '')
        for s in drain.get('servers') or ())


def _show(drain):
    columns = COLUMNS + ('servers',)
    data = _row(drain, COLUMNS) + (_servers(drain),)
    if drain.get('estimate'):
        # The plan's estimate kept by a real drain, and once it ended
        # the actual time against it.
        columns += ('estimate',)
        data += (', '.join('%s=%s' % item for item in sorted(
            drain['estimate'].items())),)
    return columns, data


PLAN_COLUMNS = ('host', 'mode', 'host_up', 'concurrency', 'live_concurrency',
                'eta_seconds', 'estimated_finish', 'movable', 'unmovable')


def _plan(plan):
    lines = []
    for server in plan.get('servers') or ():
        line = '%s %s %s' % (server['id'], server.get('name') or '',
                             server.get('kind') or '-')
        if server.get('destination'):
            line += ' -> %s' % server['destination']
        if server.get('estimate_seconds') is not None:
            line += ' ~%ss' % server['estimate_seconds']
        if server.get('reasons'):
            line += ' (%s)' % '; '.join(server['reasons'])
        lines.append(line)
    return (PLAN_COLUMNS + ('servers',),
            tuple(plan.get(c) for c in PLAN_COLUMNS) + ('\n'.join(lines),))


class CreateHostDrain(command.ShowOne):
    """Empty a compute host, server side (nova_moves os-host-drains)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('host', metavar='<host>',
                            help='Compute host to empty')
        parser.add_argument('--mode', choices=('auto', 'live', 'cold'),
                            default='auto',
                            help='auto: live-migrate ACTIVE/PAUSED, '
                                 'cold-migrate SHUTOFF (default)')
        parser.add_argument('--target', metavar='<host>', action='append',
                            dest='targets',
                            help='Allowed destination (repeatable)')
        parser.add_argument('--force-down-if-dead', action='store_true',
                            help='If the host is down, force its service '
                                 'down and evacuate (only once fenced!)')
        parser.add_argument('--check', action='store_true',
                            help='Only show the plan: each server\'s move, '
                                 'destination and estimate, and the ETA '
                                 '(nothing changes)')
        parser.add_argument('--wait', action='store_true',
                            help='Show progress until the drain ends')
        parser.add_argument('--timeout', type=float, default=3600,
                            help='Seconds --wait waits (default 3600)')
        return parser

    def take_action(self, args):
        api = common.client(self.app)
        body = {'host': args.host, 'mode': args.mode,
                'force_down_if_dead': args.force_down_if_dead}
        if args.targets:
            body['target_hosts'] = args.targets
        if args.check:
            body['check'] = True
            return _plan(common.check(api.post('/os-host-drains', body),
                                      200).json()['host_drain_plan'])
        drain = common.check(api.post('/os-host-drains', body),
                             202).json()['host_drain']
        if args.wait:
            drain = wait(api, drain['id'], args.timeout, sys.stderr)
        return _show(drain)


def wait(api, drain_id, timeout, out):
    """Poll until the drain ends; one progress line per change (a
    carriage-return line on a terminal), on ``out`` (stderr: stdout is
    the formatter's)."""
    started = time.monotonic()
    last = None
    tty = out.isatty()
    while True:
        drain = common.check(api.get('/os-host-drains/%s' % drain_id),
                             200).json()['host_drain']
        line = manage_drain.progress_line(drain, time.monotonic() - started)
        key = line.split('  ')[0]
        if tty:
            out.write('\r' + line)
        elif key != last:
            out.write(line + '\n')
        last = key
        out.flush()
        if drain['status'] in ENDED:
            if tty:
                out.write('\n')
            return drain
        if time.monotonic() - started > timeout:
            raise common.exceptions.CommandError(
                'Drain %s still %s after %ss' % (drain_id, drain['status'],
                                                timeout))
        time.sleep(1.0)


class ListHostDrain(command.Lister):
    """List host drains."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--host', metavar='<host>')
        parser.add_argument('--status', metavar='<status>',
                            choices=('running', 'cancelling', 'cancelled',
                                     'completed'))
        return parser

    def take_action(self, args):
        api = common.client(self.app)
        params = {k: v for k, v in (('host', args.host),
                                    ('status', args.status)) if v}
        drains = common.check(api.get('/os-host-drains', params=params),
                              200).json()['host_drains']
        columns = ('id', 'host', 'mode', 'status', 'counts', 'created_at')
        return (tuple(c.replace('_', ' ').title() for c in columns),
                [_row(d, columns) for d in drains])


class ShowHostDrain(command.ShowOne):
    """Show a host drain and the state of each of its servers."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('drain', metavar='<drain-id>')
        return parser

    def take_action(self, args):
        api = common.client(self.app)
        return _show(common.check(api.get('/os-host-drains/%s' % args.drain),
                                  200).json()['host_drain'])


class DeleteHostDrain(command.Command):
    """Cancel host drains (moves already started finish)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('drains', metavar='<drain-id>', nargs='+')
        return parser

    def take_action(self, args):
        api = common.client(self.app)
        errors = []
        for drain_id in args.drains:
            response = api.delete('/os-host-drains/%s' % drain_id)
            if response.status_code != 202:
                errors.append('%s: %s (HTTP %d)' % (
                    drain_id, common.fault(response), response.status_code))
        if errors:
            raise common.exceptions.CommandError('\n'.join(errors))
