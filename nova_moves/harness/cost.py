"""What a run's moves cost: the CPU each process of a stack the harness
started used from the first phase to the settled end (read from /proc,
so Linux only), per accepted move, and the moves/s this machine's cores
could complete at that cost. tools/bench_cost.py is the benchmark that
isolates one kind of move; this is the same question asked of any
scenario, faults included.

The figures include what the processes do anyway during the run (service
reports, heartbeats, the harness's own polling of the API) and a
process restarted by a fault counts from its new start only: a process
that died keeps what it used before it died out of the sum (its row
says so).
"""
import os

# Operations that start a move; confirm, revert and abort are part of
# the move they settle, so their CPU is in the moves' cost.
MOVES = ('migrate', 'resize', 'live-migrate', 'evacuate')


def _stat(pid):
    """(ppid, own CPU seconds, reaped children's CPU seconds)."""
    with open('/proc/%d/stat' % pid) as f:
        # The command name (field 2) may hold spaces: split after it.
        fields = f.read().rsplit(')', 1)[1].split()
    tick = float(os.sysconf('SC_CLK_TCK'))
    return (int(fields[1]), (int(fields[11]) + int(fields[12])) / tick,
            (int(fields[13]) + int(fields[14])) / tick)


def _children():
    """{ppid: [pid]} of every process now (one pass over /proc)."""
    children = {}
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                children.setdefault(_stat(int(entry))[0], []).append(
                    int(entry))
            except (OSError, IndexError, ValueError):
                continue  # ended meanwhile
    return children


def process_cpu(pid, children=None):
    """CPU seconds of ``pid`` and its descendants (API workers), the
    children it reaped included (an API worker it replaced).
    ``children``: a _children() map to share between processes."""
    children = _children() if children is None else children
    total, todo = 0.0, [pid]
    while todo:
        member = todo.pop()
        todo.extend(children.get(member, []))
        try:
            _ppid, own, reaped = _stat(member)
        except (OSError, IndexError, ValueError):
            continue
        total += own + (reaped if member == pid else 0.0)
    return total


def snapshot(stack):
    """{name: [pid, CPU seconds]} of the stack's running processes (not
    the broker or database nodes a scenario's backends run)."""
    out = {}
    if stack is None:
        return out
    children = _children()
    for name, proc in stack.processes.items():
        if getattr(proc, 'backend', False) or not proc.alive():
            continue
        out[name] = [proc.popen.pid, process_cpu(proc.popen.pid, children)]
    return out


def accepted_moves(records):
    return sum(1 for r in records if r['operation'] in MOVES
               and r.get('http_status') in (200, 202))


def summarize(before, after, records, seconds, cores=None):
    """The report's ``cost``; None for a stack the harness did not start
    (its processes are not ours to read)."""
    if not after:
        return None
    cores = cores or os.cpu_count() or 1
    moves = accepted_moves(records)
    rows, total = [], 0.0
    for name in sorted(set(before) | set(after)):
        was, now = before.get(name), after.get(name)
        if now is None:
            rows.append({'process': name, 'cpu_s': None,
                         'ms_per_move': None, 'note': 'not running at the '
                         'end: not counted'})
            continue
        restarted = was is None or was[0] != now[0]
        used = now[1] - (0.0 if restarted else was[1])
        total += used
        rows.append({'process': name, 'cpu_s': round(used, 3),
                     'ms_per_move': round(1000.0 * used / moves, 2)
                     if moves else None,
                     'note': 'restarted: counted from its new start'
                     if restarted else ''})
    per_move = 1000.0 * total / moves if moves else None
    return {'moves': moves, 'seconds': round(seconds, 3), 'cores': cores,
            'cpu_s': round(total, 3), 'processes': rows,
            'ms_per_move': round(per_move, 2) if per_move else None,
            'busy_share': round(total / (seconds * cores), 3)
            if seconds > 0 else None,
            'ceiling_moves_per_s': round(1000.0 * cores / per_move, 1)
            if per_move else None}


def render(cost):
    if not cost:
        return ['Cost: not measured (attached to a stack the harness did '
                'not start)']
    out = ['Cost: %.2f CPU s over %.1f s in our processes (%.0f%% of %d '
           'cores), %d accepted moves' % (
               cost['cpu_s'], cost['seconds'],
               100.0 * (cost['busy_share'] or 0), cost['cores'],
               cost['moves'])]
    for row in cost['processes']:
        out.append('  %-14s %8s s %10s ms/move  %s' % (
            row['process'], '-' if row['cpu_s'] is None
            else '%.2f' % row['cpu_s'], '-' if row['ms_per_move'] is None
            else '%.1f' % row['ms_per_move'], row['note']))
    if cost['ms_per_move']:
        out.append('  %.1f CPU ms per move: at most %.1f moves/s on these '
                   '%d cores (tools/bench_cost.py isolates one kind)' % (
                       cost['ms_per_move'], cost['ceiling_moves_per_s'],
                       cost['cores']))
    return out
