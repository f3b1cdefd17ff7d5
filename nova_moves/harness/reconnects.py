"""How long each service took to get back to the broker after a broker
node was killed or stopped, read from the services' own logs.

oslo.messaging's rabbit driver logs, per connection, an ERROR naming the
connection when it loses it ("[<id>] AMQP server on h:p is unreachable",
"... closed the connection") and an INFO when that connection is back
("[<id>] Reconnected to AMQP server on h:p"). A service is back when every
connection it lost after the fault is back; a service that lost none was
connected elsewhere (another cluster node) and is reported unaffected."""
import datetime
import os
import re

BROKER_FAULTS = ('kill', 'terminate')
_LINE = re.compile(r'^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) .*?'
                   r'\[(?P<conn>[0-9a-f-]{36})\] (?P<what>AMQP server .*'
                   r'(?:is unreachable|closed the connection)|'
                   r'Reconnected to AMQP server)')


def _events(path):
    """(wall time, connection id, lost?) from one service log."""
    if not os.path.exists(path):
        return
    with open(path, errors='replace') as f:
        for line in f:
            if 'AMQP server' not in line:
                continue
            match = _LINE.match(line)
            if match is None:
                continue
            # oslo.log writes local time; time.time() is comparable.
            when = datetime.datetime.strptime(
                match.group(1), '%Y-%m-%d %H:%M:%S.%f').timestamp()
            yield when, match.group('conn'), \
                not match.group('what').startswith('Reconnected')


def measure(log_paths, faults, broker_processes, wall_start):
    """One row per (broker fault, service): ``lost_t`` and ``back_t``
    (seconds since the run's start), ``seconds`` from the fault to the
    service's last lost connection being back, ``state`` reconnected /
    unaffected / not reconnected. ``log_paths``: service name -> log."""
    kills = [f for f in faults if f['action'] in BROKER_FAULTS
             and f.get('target') in broker_processes]
    events = {name: sorted(_events(path)) for name, path in
              sorted(log_paths.items())}
    rows = []
    for i, fault in enumerate(kills):
        start = wall_start + fault['t']
        end = wall_start + kills[i + 1]['t'] if i + 1 < len(kills) \
            else float('inf')
        for name, evs in events.items():
            lost, back = {}, {}
            for when, conn, is_loss in evs:
                if not start <= when < end:
                    continue
                if is_loss:
                    lost.setdefault(conn, when)
                elif conn in lost and conn not in back:
                    back[conn] = when
            row = {'fault': '%s %s' % (fault['action'], fault['target']),
                   'fault_t': fault['t'], 'service': name,
                   'connections_lost': len(lost), 'lost_t': None,
                   'back_t': None, 'seconds': None}
            if not lost:
                row['state'] = 'unaffected'
            elif len(back) < len(lost):
                row['state'] = 'not reconnected'
                row['lost_t'] = round(min(lost.values()) - wall_start, 2)
            else:
                row['state'] = 'reconnected'
                row['lost_t'] = round(min(lost.values()) - wall_start, 2)
                row['back_t'] = round(max(back.values()) - wall_start, 2)
                row['seconds'] = round(max(back.values()) - start, 2)
            rows.append(row)
    return rows


def render(rows):
    """Text lines for the report: one line per broker fault, the services
    it disturbed with their reconnect time."""
    lines = []
    faults = []
    for row in rows:
        if row['fault'] not in faults:
            faults.append(row['fault'])
    for fault in faults:
        mine = [r for r in rows if r['fault'] == fault]
        hit = [r for r in mine if r['state'] != 'unaffected']
        parts = ['%s %s' % (r['service'], '%.1fs' % r['seconds']
                            if r['seconds'] is not None else r['state'])
                 for r in hit]
        lines.append('Reconnect after %s at %.2fs: %s%s' % (
            fault, mine[0]['fault_t'], ', '.join(parts) or 'no service '
            'lost a connection', '; %d unaffected' % (len(mine) - len(hit))
            if len(mine) > len(hit) else ''))
    return lines


def for_stack(stack, faults, wall_start):
    """Per broker-node fault, each service's time back on the broker,
    from the logs of the processes the harness started (none when
    attached to a stack elsewhere)."""
    if stack is None:
        return []
    procs = stack.processes
    brokers = {n for n, p in procs.items() if getattr(p, 'backend', 0)}
    logs = {n: p.log_path for n, p in procs.items()
            if n not in brokers and getattr(p, 'log_path', None)}
    return measure(logs, faults, brokers, wall_start)
