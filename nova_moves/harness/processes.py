"""Which processes lived and died during a run, from their RPC stats
files (nova_moves.rpcstats) and the faults the harness applied.

A process rewrites its file every 0.2 s while busy and every
couple of seconds while idle, and marks it ``closed`` on a clean exit. So
a file that is not closed and has not been rewritten lately belongs to a
process that died; its counts are those up to its death, and its
``in_flight`` handlers are what it took from the broker and never
finished (oslo.messaging acknowledged them before the handler ran)."""
from nova_moves import rpcstats

# A file older than this (seconds) at the end of the run: the process is
# gone (a few heartbeats missed).
STALE = 3 * rpcstats.HEARTBEAT


def states(entries, faults, wall_start, wall_end):
    """The report's ``processes``: one dict per process file, times in
    seconds since the run's start, ``state`` running / exited / died."""
    killed = {f['pid']: f for f in faults if f.get('pid')}
    out = []
    for entry in entries:
        if entry.get('written') is not None and \
                entry['written'] < wall_start - STALE:
            continue  # gone before this run began (attached runs)
        fault = killed.get(entry['pid'])
        last = _rel(entry.get('written'), wall_start)
        if entry['closed']:
            state, died = 'exited', last
        elif fault is not None:
            state, died = 'died', fault['t']
        elif entry.get('written') is not None and \
                entry['written'] < wall_end - STALE:
            state, died = 'died', last
        else:
            state, died = 'running', None
        out.append({
            'process': entry['process'], 'pid': entry['pid'],
            'state': state, 'started_t': _rel(entry.get('started'),
                                              wall_start),
            'last_seen_t': last, 'died_t': died,
            'cause': ('%s fault' % fault['action']) if fault else None,
            'handled': sum(entry['counts'].get('handle', {}).values()),
            'handled_by_method': entry['counts'].get('handle', {}),
            'in_flight': entry['in_flight']})
    return out


def _rel(wall, wall_start):
    return None if wall is None else round(wall - wall_start, 2)


def render(processes):
    """Lines for the text report: every process that did not keep running,
    with what it had done and what it was doing."""
    lines = []
    for proc in processes:
        if proc['state'] == 'running':
            continue
        when = '-' if proc['died_t'] is None else '%.2fs' % proc['died_t']
        what = '%s (pid %s) %s at %s' % (proc['process'], proc['pid'],
                                         proc['state'], when)
        if proc['cause']:
            what += ' (%s)' % proc['cause']
        what += ', handled %d' % proc['handled']
        if proc['handled_by_method']:
            what += ' (%s)' % ', '.join(
                '%s %d' % kv for kv in sorted(
                    proc['handled_by_method'].items()))
        if proc['in_flight']:
            what += '; in flight at its end: %s' % ', '.join(
                '%s x%d' % kv for kv in sorted(proc['in_flight'].items()))
        lines.append('  ' + what)
    running = sum(1 for p in processes if p['state'] == 'running')
    head = 'Processes: %d running at the end' % running
    if lines:
        head += '; counts below are up to each one\'s end:'
    return [head] + lines
