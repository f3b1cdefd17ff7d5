"""nova-moves-manage host drain: create an os-host-drains drain and, with
--wait, follow it like openstackclient follows a long action: one
progress line while it runs, a table of the servers at the end."""
import sys
import time

from nova_moves.cmd import tables

BAR = 30


def _bar(counts):
    total = counts['total'] or 1
    done = counts['done'] + counts['failed']
    filled = int(BAR * done / total)
    return '[%s%s] %3d%%' % ('#' * filled, '.' * (BAR - filled),
                             100 * done // total)


def progress_line(drain, elapsed):
    counts = drain['counts']
    return ('%s %s %-10s %d/%d done, %d moving (%d queued), %d pending, '
            '%d failed  %5.0fs' % (
                drain['host'], _bar(counts), drain['status'],
                counts['done'], counts['total'], counts['moving'],
                counts['queued'], counts['pending'], counts['failed'],
                elapsed))


def table(drain):
    return tables.render(
        ('Server', 'State', 'Action', 'Destination', 'Attempts', 'Reason'),
        [(server['server_uuid'], server['state'], server['action'],
          server['dest_compute'], server['attempts'], server['reason'])
         for server in drain.get('servers') or ()])


def drain(client, args, out=sys.stdout):
    body = {'host': args.compute_host, 'mode': args.mode,
            'force_down_if_dead': bool(args.force_down_if_dead)}
    if args.targets:
        body['target_hosts'] = args.targets
    response = client.post('/os-host-drains', body)
    if response.status_code != 202:
        out.write('Drain refused (%d): %s\n' % (response.status_code,
                                                 response.text[:300]))
        return 1
    created = response.json()['host_drain']
    out.write('Host drain %s of %s created (mode %s)\n' % (
        created['id'], created['host'], created['mode']))
    if not args.wait:
        return 0
    started = time.monotonic()
    tty = out.isatty()
    last = None
    while True:
        shown = client.get('/os-host-drains/%s' % created['id'],
                           expect=200).json()['host_drain']
        line = progress_line(shown, time.monotonic() - started)
        if tty:
            out.write('\r' + line)
        elif line.split('  ')[0] != last:
            out.write(line + '\n')  # a log gets one line per change
        last = line.split('  ')[0]
        out.flush()
        if shown['status'] in ('completed', 'cancelled'):
            break
        if time.monotonic() - started > args.timeout:
            out.write('\nStill %s after %ss\n' % (shown['status'],
                                                 args.timeout))
            return 2
        time.sleep(1.0)
    out.write(('\n' if tty else '') + table(shown) + '\n')
    out.write('Drain %s %s in %.0fs: %d done, %d failed\n' % (
        shown['id'], shown['status'], time.monotonic() - started,
        shown['counts']['done'], shown['counts']['failed']))
    return 0 if shown['status'] == 'completed' and \
        not shown['counts']['failed'] else 1
