"""Where a move spent its time, from its instance action's events.

The API records the action when the request arrives; every step records
an event (``conductor_migrate_server``, ``compute_prep_resize``, ...) with
its start and finish. Each moment between the action's start and the
last event's finish is given to the innermost event running then (a
live migration's source calls ``pre_live_migration`` on the destination
inside its own ``live_migration`` event), and the moments no event covers
are **queue**: the request waiting in the broker (or for an RPC reply
or a database lock) between two steps. The phases of one move thus add
up to its span; **api** is the request's own round trip as the harness
timed it.

When the move's migration carries its per-phase timestamps (the
nova_moves-migration-phases extension), those are used instead: one
phase per migration status (accepted, queued, preparing, running,
post-migrating, pre-migrating, migrating...), each lasting until the next
status began, up to the status that ends the move's work (finished,
done, completed, confirmed, reverted, error...). **request** is the time
from the action's start to the migration's first status (a resize's
migration is created by the conductor)."""
import datetime

from nova_moves.harness import stats as nm_stats

# api/extensions.py: the request header that asks for migration phases.
EXT_HEADER = 'Nova-Moves-Extensions'
EXT_PHASES = 'nova_moves-migration-phases'

PHASES = ('api', 'queue', 'scheduling', 'prep', 'transfer', 'finish',
          'other')
# From the migration's timestamps, in the order they happen.
STATUS_PHASES = ('request', 'accepted', 'queued', 'preparing',
                 'pre-migrating', 'running', 'migrating', 'post-migrating',
                 'confirming', 'reverting')
# Entering one of these ends the move's work (a resize then waits for
# its confirm, an evacuation for its source to come back).
END_STATUSES = ('finished', 'done', 'completed', 'confirmed', 'reverted',
                'error', 'failed', 'cancelled')
ALL_PHASES = PHASES + STATUS_PHASES
MOVES = ('resize', 'migrate', 'live-migrate', 'evacuate')
# Event name without its conductor_/compute_ prefix -> phase.
EVENT_PHASE = {
    'migrate_server': 'scheduling', 'live_migrate_instance': 'scheduling',
    'rebuild_instance@conductor': 'scheduling',
    'check_can_live_migrate_destination': 'scheduling',
    'check_can_live_migrate_source': 'scheduling',
    'prep_resize': 'prep', 'pre_live_migration': 'prep',
    'resize_instance': 'transfer', 'live_migration': 'transfer',
    'rebuild_instance@compute': 'transfer',
    'finish_resize': 'finish', 'post_live_migration_at_destination': 'finish',
}
# Breakdowns read per run at most (one GET each): enough for percentiles.
MAX_ACTIONS = 400


def _time(text):
    return datetime.datetime.fromisoformat(text.rstrip('Z')).timestamp() \
        if text else None


def phase_of(event_name):
    service, _, step = event_name.partition('_')
    return EVENT_PHASE.get('%s@%s' % (step, service)) or \
        EVENT_PHASE.get(step, 'other')


def breakdown(action):
    """{phase: seconds} for one instance action (API view, 2.51+ with
    events), without 'api'; None when it has no timed events."""
    start = _time(action.get('start_time'))
    events = []
    for event in action.get('events') or []:
        begin = _time(event.get('start_time'))
        if begin is None:
            continue
        events.append((begin, _time(event.get('finish_time')),
                       phase_of(event['event'])))
    if start is None or not events:
        return None
    end = max([b for b, _, _ in events] +
              [f for _, f, _ in events if f is not None])
    # An event that never finished (its process died) lasts to the end.
    events = [(b, f if f is not None else end, p) for b, f, p in events]
    cuts = sorted({start, end} | {t for b, f, _ in events for t in (b, f)
                                  if start <= t <= end})
    out = dict.fromkeys(PHASES[1:], 0.0)
    for left, right in zip(cuts, cuts[1:]):
        covering = [(b, p) for b, f, p in events if b <= left and f >= right]
        # The innermost step is the one that started last.
        phase = max(covering)[1] if covering else 'queue'
        out[phase] += right - left
    return {k: round(v, 4) for k, v in out.items()}


def from_timestamps(action, migration):
    """{phase: seconds} from the migration's ``phases`` (API view), or
    None when it has none."""
    stamps = [(p['phase'], _time(p['started_at']))
              for p in migration.get('phases') or []]
    if not stamps:
        return None
    out = {}
    start = _time(action.get('start_time'))
    if start is not None:
        out['request'] = max(0.0, stamps[0][1] - start)
    for (phase, begin), (_, end) in zip(stamps, stamps[1:]):
        if phase in END_STATUSES:
            break
        out[phase] = out.get(phase, 0.0) + (end - begin)
    return {k: round(v, 4) for k, v in out.items()}


def migration_for(action, migrations):
    """The migration this action started: the first one whose first
    status began at or after the action (None without timestamps)."""
    start = _time(action.get('start_time'))
    candidates = []
    for migration in migrations:
        stamps = migration.get('phases') or []
        if stamps and start is not None:
            first = _time(stamps[0]['started_at'])
            if first >= start - 0.001:
                candidates.append((first, migration['id'], migration))
    return min(candidates)[2] if candidates else None


def _migrations(client, server, cache):
    if server not in cache:
        try:
            cache[server] = client.get(
                '/os-migrations', version='2.80',
                params={'instance_uuid': server},
                headers={EXT_HEADER: EXT_PHASES},
                expect=200).json()['migrations']
        except Exception:
            cache[server] = []
    return cache[server]


def collect(records, client, limit=MAX_ACTIONS):
    """Read the instance action of every accepted move and store its
    breakdown in the record (``phases``), at most ``limit`` of them,
    spread evenly over the run: from the migration's per-phase
    timestamps when it has them (``phases_from`` 'timestamps'), else
    from the action's events ('events')."""
    cache = {}
    moves = [r for r in records if r['operation'] in MOVES and
             r.get('request_id') and r.get('server') and
             r['outcome'] in ('ok', 'failed', 'timeout')]
    step = max(1.0, len(moves) / float(limit))
    for i in range(min(len(moves), limit)):
        rec = moves[int(i * step)]
        try:
            action = client.action_detail(rec['server'], rec['request_id'])
        except Exception:
            continue  # deleted server, or a token that may not see events
        migration = migration_for(action, _migrations(client, rec['server'],
                                                      cache))
        phases = migration and from_timestamps(action, migration)
        rec['phases_from'] = 'timestamps' if phases else 'events'
        if not phases:
            phases = breakdown(action)
        if phases is not None:
            phases['api'] = round(rec['api_s'], 4)
            rec['phases'] = phases


def summarize(records):
    """{phase: {n, p50_s, p95_s}} over the records that have a breakdown."""
    with_phases = [r['phases'] for r in records if r.get('phases')]
    if not with_phases:
        return {}
    out = {}
    for phase in ALL_PHASES:
        values = [p[phase] for p in with_phases if phase in p]
        if not values:
            continue
        if phase not in ('api', 'queue') and not any(values):
            continue  # a step this kind of move does not have
        out[phase] = {'n': len(values),
                      'p50_s': nm_stats.percentile(values, 50),
                      'p95_s': nm_stats.percentile(values, 95)}
    return out


def render(operations):
    """Lines: one row per operation and microversion with p50 (p95) of
    each phase in seconds."""
    rows = [r for r in operations if r.get('breakdown')]
    if not rows:
        return []
    phases = [p for p in ALL_PHASES
              if any(p in r['breakdown'] for r in rows)]
    table = []
    for row in rows:
        cells = ['%s %s' % (row['operation'], row['microversion']),
                 str(row['breakdown'][phases[0]]['n'])]
        for phase in phases:
            stat = row['breakdown'].get(phase)
            cells.append('-' if stat is None else '%.2f (%.2f)' % (
                stat['p50_s'], stat['p95_s']))
        table.append(cells)
    return ['Where the moves spent their time, seconds p50 (p95), from '
            'the migrations\' per-phase timestamps (statuses) or, without '
            'them, the instance action events (queue ... other):',
            nm_stats.table(['move', 'n'] + phases, table)]
