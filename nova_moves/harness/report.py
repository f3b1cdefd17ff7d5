"""The run's report: a JSON-able dict and a readable table.

API latency is the time from sending a request to its response, as the
harness saw it; end-to-end is from sending to the first poll that shows
the server settled (no task_state); RPC numbers come from the processes
themselves (rpcstats)."""
import collections
import json

from nova_moves import rpcstats
from nova_moves.harness import cost as nm_cost
from nova_moves.harness import phases as nm_phases
from nova_moves.harness import processes as nm_processes
from nova_moves.harness import reconnects as nm_reconnects
from nova_moves.harness import real_guests
from nova_moves.harness.stats import percentile, table  # noqa: F401


def _ms(seconds):
    return None if seconds is None else round(seconds * 1000.0, 2)


def operation_rows(records):
    groups = collections.OrderedDict()
    for rec in records:
        key = (rec['operation'], rec['microversion'])
        groups.setdefault(key, []).append(rec)
    rows = []
    for (op, version), recs in groups.items():
        sent = [r for r in recs if r.get('api_s') is not None]
        api = [r['api_s'] for r in sent]
        e2e = [r['e2e_s'] for r in recs if r.get('e2e_s') is not None]
        span = (max(r['sent'] + r['api_s'] for r in sent) -
                min(r['sent'] for r in sent)) if sent else 0
        outcomes = collections.Counter(r['outcome'] for r in recs)
        statuses = collections.Counter(str(r.get('http_status'))
                                       for r in recs)
        rows.append({
            'operation': op, 'microversion': version, 'requests': len(recs),
            'http_status': dict(statuses),
            'api_p50_ms': _ms(percentile(api, 50)),
            'api_p95_ms': _ms(percentile(api, 95)),
            'api_p99_ms': _ms(percentile(api, 99)),
            'api_max_ms': _ms(max(api) if api else None),
            'requests_per_s': round(len(sent) / span, 2) if span else None,
            'e2e_p50_s': None if not e2e else round(percentile(e2e, 50), 3),
            'e2e_p95_s': None if not e2e else round(percentile(e2e, 95), 3),
            'e2e_p99_s': None if not e2e else round(percentile(e2e, 99), 3),
            'outcomes': dict(outcomes),
            'breakdown': nm_phases.summarize(recs),
            'reasons': dict(collections.Counter(
                '%s: %s' % (r['outcome'], r.get('detail') or '?')
                for r in recs if r['outcome'] != 'ok').most_common(5))})
    return rows


def build(runner, problems, merged_rpc, processes, wall_start,
          workload_start, workload_end):
    return {
        'scenario': runner.scenario['name'],
        'description': runner.scenario.get('description', ''),
        'started_at': wall_start,
        'endpoint': runner.endpoint,
        'topology': {
            'compute_processes': len(
                runner.scenario['topology']['compute_processes']),
            'hosts': len(runner.hosts),
            'conductors': runner.scenario['topology']['conductors'],
            'schedulers': runner.scenario['topology']['schedulers']},
        'servers': len(runner.servers),
        'workload_seconds': round(workload_end - workload_start, 3),
        'phases': runner.phases,
        'operations': operation_rows(runner.records),
        'rpc': rpcstats.summarize(merged_rpc),
        'rpc_processes': processes,
        'cost': runner.cost,
        'faults': runner.faults,
        'reconnects': getattr(runner, 'reconnects', []),
        'cleanup': runner.cleanup_result,
        'invariants': {'ok': not problems, 'problems': problems,
                       'counts': getattr(runner, 'invariant_counts', {})},
        'poller': {'polls': runner.poller.polls,
                   'errors': runner.poller.errors},
        'records': runner.records,
        'timeline': {sid: hist for sid, hist in
                     runner.poller.history.items()},
        'server_names': {s['id']: s['name'] for s in runner.servers},
    }


def write_json(report, path):
    with open(path, 'w') as f:
        json.dump(report, f, indent=1, sort_keys=True, default=str)


def _fmt(value, digits=1):
    if value is None:
        return '-'
    if isinstance(value, float):
        return '%.*f' % (digits, value)
    return str(value)


def render(report):
    """The report as text for a terminal."""
    out = ['Scenario %s: %d servers on %d hosts (%d compute processes), '
           'workload %.1fs' % (report['scenario'], report['servers'],
                               report['topology']['hosts'],
                               report['topology']['compute_processes'],
                               report['workload_seconds']), '']
    rows = []
    for r in report['operations']:
        rows.append([r['operation'], r['microversion'], r['requests'],
                     ' '.join('%s:%d' % kv for kv in
                              sorted(r['http_status'].items())),
                     _fmt(r['api_p50_ms']), _fmt(r['api_p95_ms']),
                     _fmt(r['api_p99_ms']), _fmt(r['requests_per_s']),
                     _fmt(r['e2e_p50_s'], 2), _fmt(r['e2e_p99_s'], 2),
                     ' '.join('%s:%d' % kv for kv in
                              sorted(r['outcomes'].items()))])
    out.append(table(['operation', 'mv', 'n', 'http', 'api p50 ms',
                       'p95', 'p99', 'req/s', 'e2e p50 s', 'p99',
                       'outcomes'], rows))
    reasons = [(r['operation'], r['microversion'], why, n)
               for r in report['operations']
               for why, n in r.get('reasons', {}).items()]
    if reasons:
        out.append('')
        out.append('Why not ok (most frequent first):')
        for op, version, why, n in reasons:
            out.append('  %s %s x%d %s' % (op, version, n, why))
    from nova_moves.harness import drain_phase
    drains = drain_phase.render(report.get('phases') or [])
    if drains:
        out += [''] + drains
    guests = real_guests.render(report.get('real_guests'))
    if guests:
        out += [''] + guests
    breakdown = nm_phases.render(report['operations'])
    if breakdown:
        out += [''] + breakdown
    out.append('')
    if report['rpc']:
        rows = []
        for r in report['rpc']:
            call, cast, handle = (r.get('call') or {}, r.get('cast') or {},
                                  r.get('handle') or {})
            rows.append([r['method'], call.get('count', '-'),
                         _fmt(call.get('p50_ms')), _fmt(call.get('p99_ms')),
                         cast.get('count', '-'), _fmt(cast.get('p50_ms')),
                         handle.get('count', '-'),
                         _fmt(handle.get('p50_ms')),
                         _fmt(handle.get('p99_ms')),
                         (call.get('errors', 0) + handle.get('errors', 0))])
        out.append(table(['rpc method', 'calls', 'call p50 ms', 'p99',
                           'casts', 'cast p50 ms', 'handled', 'handle p50 ms',
                           'p99', 'errors'], rows))
        out.append('(from %d process files)' % len(report['rpc_processes']))
        out += nm_processes.render(report['rpc_processes'])
    else:
        out.append('RPC: no per-process stats (attach with --rpc-stats-dir '
                   'to the directory set as [DEFAULT] rpc_stats_dir)')
    out.append('')
    out += nm_cost.render(report.get('cost'))
    out.append('')
    for fault in report['faults']:
        out.append('fault at %6.2fs: %s %s -> %s' % (
            fault['t'], fault['action'], fault['target'], fault['result']))
    out += nm_reconnects.render(report.get('reconnects') or [])
    cleanup = report.get('cleanup')
    if cleanup:
        out.append('Cleanup: deleted %d servers and %d flavors the run '
                   'created%s' % (cleanup['servers_deleted'],
                                  cleanup['flavors_deleted'],
                                  '; LEFT %s' % cleanup['servers_left']
                                  if cleanup['servers_left'] else ''))
    inv = report['invariants']
    counts = inv.get('counts') or {}
    labels = {'rolled_back_lost_message': 'rolled back for a lost message'}
    numbers = ' (%s)' % ', '.join(
        '%s %s' % (labels.get(key, key.replace('_', ' ')), counts[key])
        for key in ('moves', 'terminal', 'leaked', 'misplaced',
                    'duplicate_copies', 'rolled_back_lost_message')
        if key in counts) if counts else ''
    if inv['ok']:
        out.append('Invariants: OK%s' % numbers)
    else:
        out.append('Invariants: %d FAILED%s' % (len(inv['problems']),
                                                numbers))
        out += ['  - %s' % p for p in inv['problems']]
    return '\n'.join(out)
