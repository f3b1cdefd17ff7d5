"""The harness's ``drain`` phase: one POST /os-host-drains, then the
drain is followed until it ends (``wait: false`` lets the next phases run
meanwhile; the run's settle step then waits for it). Every server of the
drain becomes a record (operation ``drain``), and the phase entry gets a
``drain`` summary: duration, counts, and the most moves the drain had
admitted at once (from the move queue's admission and release times), to
compare with ``[conductor] max_outbound_migrations_per_host``."""
import time

from nova_moves import conf

CONF = conf.CONF
# The drain and server states GET /os-host-drains/{id} reports (the
# harness reads the API, never the product's database modules).
DONE, FAILED = 'done', 'failed'
ENDED = ('completed', 'cancelled')


def max_overlap(intervals):
    """Most intervals [start, end) open at one instant."""
    events = sorted([(s, 1) for s, _ in intervals] +
                    [(e, -1) for _, e in intervals])
    best = current = 0
    for _, delta in events:  # an end sorts before a start at one instant
        current += delta
        best = max(best, current)
    return best


def limits(scenario):
    """The [conductor] limits the stack runs with."""
    section = ((scenario.get('topology') or {}).get('conf') or {}).get(
        'conductor') or {}
    return {'cluster': int(section.get(
                'max_concurrent_migrations_per_cluster',
                CONF.conductor.max_concurrent_migrations_per_cluster)),
            'per_host': int(section.get(
                'max_outbound_migrations_per_host',
                CONF.conductor.max_outbound_migrations_per_host))}


def start(runner, phase):
    """POST the drain; returns the pending drain (or None, recorded)."""
    params = phase['params']
    body = {'host': params['host'], 'mode': params.get('mode', 'auto'),
            'force_down_if_dead': bool(params.get('force_down_if_dead'))}
    if params.get('target_hosts'):
        body['target_hosts'] = list(params['target_hosts'])
    # The plan first (check: true changes nothing): what the operator
    # would read before draining, set against the drain's time at the end.
    plan = runner.client().post('/os-host-drains', dict(body, check=True))
    plan = plan.json().get('host_drain_plan') \
        if plan.status_code == 200 else None
    started = runner.now()
    runner._arm_faults(phase['name'])
    response = runner.client().post('/os-host-drains', body)
    api_s = runner.now() - started
    pending = {'phase': phase, 'started': started, 'api_s': api_s,
               'http_status': response.status_code, 'seen': {},
               'plan': _plan_summary(plan)}
    if response.status_code != 202:
        runner.records.append({
            'phase': phase['name'], 'operation': 'drain',
            'microversion': phase['microversion'], 'server': None,
            'sent': started, 'api_s': api_s,
            'http_status': response.status_code, 'outcome': 'rejected',
            'detail': response.text[:300]})
        _phase_entry(runner, pending, None)
        return None
    pending['id'] = response.json()['host_drain']['id']
    runner.log('phase %s: drain %s of %s (mode %s)' % (
        phase['name'], pending['id'], body['host'], body['mode']))
    return pending


def follow(runner, pending, timeout):
    """Poll the drain until it ends or ``timeout``; record every server
    (the first poll that saw it done or failed is its end)."""
    client = runner.client()
    deadline = time.monotonic() + timeout
    interval = max(0.2, runner.scenario['poll_interval'])
    drain = None
    while True:
        drain = client.get('/os-host-drains/%s' % pending['id'],
                           expect=200).json()['host_drain']
        now = runner.now()
        for server in drain['servers']:
            if server['state'] in (DONE, FAILED):
                pending['seen'].setdefault(server['server_uuid'], now)
        if drain['status'] in ENDED or \
                time.monotonic() > deadline:
            break
        time.sleep(interval)
    for server in drain['servers']:
        done = pending['seen'].get(server['server_uuid'])
        outcome = {DONE: 'ok', FAILED: 'failed'}.get(server['state'],
                                                         'timeout')
        record = {'phase': pending['phase']['name'], 'operation': 'drain',
                  'microversion': pending['phase']['microversion'],
                  'server': server['server_uuid'],
                  # One POST for the whole drain: its time is the
                  # phase's (drain.api_ms), not each server's.
                  'sent': pending['started'], 'api_s': None,
                  'http_status': pending['http_status'],
                  'outcome': outcome, 'detail': server['reason'] or (
                      '' if outcome != 'timeout' else
                      'still %s after %ss' % (server['state'], timeout)),
                  'host_before': drain['host'],
                  'host_after': server['dest_compute']}
        if done is not None:
            record['done'] = done
            record['e2e_s'] = done - pending['started']
        runner.records.append(record)
    _phase_entry(runner, pending, drain)
    return drain


def _plan_summary(plan):
    if not plan:
        return None
    samples = [(s.get('estimate_basis') or {}).get('samples', 0)
               for s in plan['servers'] if s.get('kind')]
    return {key: plan.get(key) for key in (
        'eta_seconds', 'concurrency', 'live_concurrency', 'movable')} | {
        'history_samples': min(samples) if samples else 0}


def summary(drain, seconds):
    slots = [(s['admitted_at'], s['released_at'] or '9999')
             for s in drain['servers'] if s['admitted_at']]
    return {'id': drain['id'], 'host': drain['host'],
            'status': drain['status'], 'seconds': round(seconds, 2),
            'counts': drain['counts'], 'conductor': drain['conductor'],
            'max_outbound_at_once': max_overlap(slots),
            # The drain plan's ETA when the drain was created, and how far
            # off it was (api/drain_plans.py).
            'estimate': drain.get('estimate')}


def _phase_entry(runner, pending, drain):
    end = runner.now()
    entry = {'name': pending['phase']['name'], 'operation': 'drain',
             'microversion': pending['phase']['microversion'],
             'servers': len(drain['servers']) if drain else 0,
             'start': pending['started'], 'end': end}
    if drain is not None:
        entry['drain'] = dict(summary(drain, end - pending['started']),
                              limits=limits(runner.scenario),
                              api_ms=round(pending['api_s'] * 1000, 1),
                              plan=pending.get('plan'))
    runner.phases.append(entry)


def render(phases):
    """Report lines for the drain phases."""
    out = []
    for phase in phases:
        drain = phase.get('drain')
        if not drain:
            continue
        counts, lim = drain['counts'], drain['limits']
        out.append(
            'Drain %s of %s: %s in %.1fs, %d/%d done, %d failed; at most %d '
            'moves out of %s at once (limit %d per host, %d per cluster)' % (
                drain['id'], drain['host'], drain['status'],
                drain['seconds'], counts['done'], counts['total'],
                counts['failed'], drain['max_outbound_at_once'],
                drain['host'], lim['per_host'], lim['cluster']))
        estimate = drain.get('estimate') or {}
        plan = drain.get('plan') or {}
        if estimate.get('actual_seconds') is not None:
            out.append('  planned %.1fs, took %.1fs (%+.0f%%)%s' % (
                estimate['eta_seconds'], estimate['actual_seconds'],
                estimate.get('error_percent') or 0,
                '; the plan (check) before it: ETA %.1fs on %s gate slots, '
                '%s live at once, %d past moves per estimate' % (
                    plan['eta_seconds'], plan['concurrency'],
                    plan.get('live_concurrency'), plan['history_samples'])
                if plan.get('eta_seconds') is not None else ''))
    return out
