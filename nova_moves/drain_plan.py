"""A host drain's plan: which move each server gets, how long each takes
by the record of past moves, and when the drain ends under the move
limits. Pure: the caller reads the database and the scheduler.

A drain runs its moves the way any move runs (conductor/drain.py,
conductor/admission.py, compute/live_migration.py), and the ETA follows
that path rather than "N moves x S seconds":

- the gate admits at most ``max_outbound_migrations_per_host`` moves out
  of the host at once (and no more than the cluster's limit): the
  drain's **gate slots**;
- an admitted live migration is scheduled and pre-checked (its
  **lead**), then waits for one of the source compute's
  ``max_concurrent_live_migrations`` (**compute slots**, default 1: a
  host sends one live migration at a time) and transfers (its
  **serial** part, ``preparing`` to ``completed``); the next one starts
  a **handoff** after (the release, the next pass, its status writes);
- a cold migration or evacuation holds its gate slot from admission to
  ``finished`` / ``done`` (its **slot** time); a cold one is then
  confirmed by the drain's next pass;
- the drain notices the last move ended at its next pass (half a
  ``queue_poll_interval`` on average).

Each figure is the p50 over the recorded phases of past moves
(db/phases.py) that succeeded, of the same kind and flavor when there are
``MIN_SAMPLES`` of them, else of the kind, else ``DEFAULT_SECONDS`` for
the whole move (said so in the plan's basis). Waiting in a queue (the
gate's or the compute's) is not a move's own time: it depends on what ran
beside it, which the pipeline below accounts for.
"""
import heapq
import statistics

from nova_moves import states

LIVE, COLD, EVACUATE = 'live', 'cold', 'evacuate'
LIVE_VM_STATES = (states.ACTIVE, states.PAUSED)
COLD_VM_STATES = (states.ACTIVE, states.STOPPED)
EVACUATE_VM_STATES = (states.ACTIVE, states.STOPPED, states.ERROR)
ALLOWED = {LIVE: (LIVE_VM_STATES, 'live-migration'),
           COLD: (COLD_VM_STATES, 'migrate'),
           EVACUATE: (EVACUATE_VM_STATES, 'evacuate')}
MIGRATION_TYPES = {LIVE: (states.LIVE_MIGRATION,),
                   COLD: (states.MIGRATION, states.RESIZE),
                   EVACUATE: (states.EVACUATION,)}
MIN_SAMPLES = 3
DEFAULT_SECONDS = {LIVE: 5.0, COLD: 6.0, EVACUATE: 5.0}


def move_kind(mode, force_down_if_dead, host_up, vm_state, host=''):
    """(kind, None), or (None, why the server cannot be moved)."""
    if not host_up:
        if not force_down_if_dead:
            return None, ('host %s is down; drain it with '
                          'force_down_if_dead to evacuate' % host)
        kind = EVACUATE
    elif mode == 'live' or (mode == 'auto' and vm_state in LIVE_VM_STATES):
        kind = LIVE
    else:
        kind = COLD
    if vm_state not in ALLOWED[kind][0]:
        return None, 'cannot %s a server in vm_state %s' % (
            ALLOWED[kind][1], vm_state)
    return kind, None


def timings(kind, entries):
    """What one past migration of ``kind`` spent, from its phases
    ([status, datetime] in order), or None if it did not succeed:
    {'slot', 'lead', 'serial', 'confirm', 'source_queued', 'prep_at',
    'end_at'} in seconds (datetimes for the last two)."""
    if not entries:
        return None
    first_status = entries[0][0]
    admitted = entries[0][1]
    compute_queued = prep = None
    for (status, at), (after, at_after) in zip(entries, entries[1:]):
        if status == states.M_QUEUED and after == first_status:
            admitted = at_after  # the gate let it go: resumed
        if status == states.M_QUEUED and after == states.M_PREPARING:
            compute_queued = at  # waited for the compute's own slot
    times = {}
    for status, at in entries:
        times.setdefault(status, at)
        if status == states.M_PREPARING:
            prep = at
    end_status = {LIVE: states.M_COMPLETED, EVACUATE: states.M_DONE,
                  COLD: states.M_FINISHED}[kind]
    if end_status not in times:
        return None
    end = [at for status, at in entries if status == end_status][-1]
    out = {'slot': (end - admitted).total_seconds(), 'lead': None,
           'serial': None, 'confirm': None, 'prep_at': prep, 'end_at': end,
           'source_queued': compute_queued}
    if kind == COLD:
        if states.M_CONFIRMED not in times or \
                states.M_CONFIRMING not in times:
            return None
        out['confirm'] = (times[states.M_CONFIRMED] -
                          times[states.M_CONFIRMING]).total_seconds()
    if kind == LIVE and prep is not None:
        out['lead'] = ((compute_queued or prep) - admitted).total_seconds()
        out['serial'] = (end - prep).total_seconds()
        # The wait for the compute's own slot is the queue's, not the
        # move's.
        out['slot'] = out['lead'] + out['serial']
    if out['slot'] < 0:
        return None
    return out


def duration(kind, entries):
    """How long one past migration of ``kind`` took from its admission
    to its end, the waits in the gate's and the compute's queues
    excluded (a cold one's confirmation added), or None if it did not
    succeed."""
    t = timings(kind, entries)
    if t is None:
        return None
    return t['slot'] + (t['confirm'] or 0.0)


def handoffs(samples):
    """Seconds between a compute ending one live migration and starting
    the next that waited for it, from ``samples`` [(kind, flavor, source
    host, timings)]: consecutive moves out of one host where the later
    one was queued at the compute when the earlier one ended."""
    by_host = {}
    for kind, _, host, t in samples:
        if kind == LIVE and t.get('prep_at') is not None and host:
            by_host.setdefault(host, []).append(t)
    gaps = []
    for moves in by_host.values():
        moves.sort(key=lambda t: t['prep_at'])
        for before, after in zip(moves, moves[1:]):
            queued = after.get('source_queued')
            if queued is not None and queued <= before['end_at'] <= \
                    after['prep_at']:
                gaps.append((after['prep_at'] -
                             before['end_at']).total_seconds())
    return gaps


class History:
    """p50 figures by (kind, flavor) from past migrations: ``samples`` is
    [(kind, flavor_id, seconds)] or [(kind, flavor_id, source_host,
    timings)] (timings(): the parts the pipeline needs)."""

    def __init__(self, samples):
        self.by_flavor = {}
        self.by_kind = {}
        self.parts = {}
        full = []
        for sample in samples:
            if len(sample) == 3:
                kind, flavor_id, seconds = sample
                t = None
            else:
                kind, flavor_id, _, t = sample
                full.append(sample)
                seconds = t['slot'] + (t['confirm'] or 0.0)
            self.by_flavor.setdefault((kind, flavor_id), []).append(seconds)
            self.by_kind.setdefault(kind, []).append(seconds)
            if t is not None:
                for part in ('slot', 'lead', 'serial', 'confirm'):
                    if t[part] is not None:
                        self.parts.setdefault((kind, flavor_id, part),
                                              []).append(t[part])
                        self.parts.setdefault((kind, None, part),
                                              []).append(t[part])
        self.handoffs = handoffs(full)

    def estimate(self, kind, flavor_id):
        """(seconds, basis): basis names what the figure stands on."""
        same = self.by_flavor.get((kind, flavor_id), [])
        if len(same) >= MIN_SAMPLES:
            return statistics.median(same), {
                'flavor': flavor_id, 'samples': len(same), 'p50': True}
        any_flavor = self.by_kind.get(kind, [])
        if any_flavor:
            return statistics.median(any_flavor), {
                'flavor': None, 'samples': len(any_flavor), 'p50': True}
        return DEFAULT_SECONDS[kind], {'flavor': None, 'samples': 0,
                                       'p50': False}

    def part(self, kind, flavor_id, name, default):
        """The p50 of one part of a move (see timings())."""
        same = self.parts.get((kind, flavor_id, name), [])
        if len(same) >= MIN_SAMPLES:
            return statistics.median(same)
        pooled = self.parts.get((kind, None, name), [])
        return statistics.median(pooled) if pooled else default

    def move(self, kind, flavor_id):
        """{'slot', 'lead', 'serial', 'confirm'} seconds of one move of
        this kind and flavor for the pipeline; without parts, the whole
        estimate is the slot time."""
        whole, _ = self.estimate(kind, flavor_id)
        slot = self.part(kind, flavor_id, 'slot', None)
        if slot is None:
            return {'slot': whole, 'lead': None, 'serial': None,
                    'confirm': 0.0}
        move = {'slot': slot, 'lead': None, 'serial': None,
                'confirm': self.part(kind, flavor_id, 'confirm', 0.0)}
        if kind == LIVE:
            move['lead'] = self.part(kind, flavor_id, 'lead', None)
            move['serial'] = self.part(kind, flavor_id, 'serial', None)
        return move

    def handoff(self):
        return statistics.median(self.handoffs) if self.handoffs else 0.0


def makespan(durations, slots):
    """When the last of ``durations`` (in order) ends on ``slots``
    parallel slots, each move taking the first slot that frees."""
    if not durations:
        return 0.0
    ends = [0.0] * max(1, slots)
    for seconds in durations:
        start = heapq.heappop(ends)
        heapq.heappush(ends, start + seconds)
    return max(ends)


def pipeline(moves, gate_slots, compute_slots, handoff=0.0):
    """When the last of ``moves`` (in order, as History.move() gives
    them) ends: each takes the first free gate slot; a live one with a
    lead and a serial part then needs one of ``compute_slots`` for its
    serial part (plus the handoff), the rest hold the gate slot for their
    slot time."""
    if not moves:
        return 0.0
    gate = [0.0] * max(1, gate_slots)
    compute = [0.0] * max(1, compute_slots)
    last = 0.0
    for move in moves:
        start = heapq.heappop(gate)
        if move.get('lead') is not None and move.get('serial') is not None:
            ready = start + move['lead']
            free = heapq.heappop(compute)
            end = max(ready, free) + move['serial'] + handoff
            heapq.heappush(compute, end)
        else:
            end = start + move['slot'] + handoff
        heapq.heappush(gate, end)
        last = max(last, end + (move.get('confirm') or 0.0))
    return last


def eta(moves, gate_slots, compute_slots, pass_seconds, handoff=0.0):
    """The drain's estimated seconds, from its first pass to the pass
    that finds every move ended: the pipeline's makespan, plus half a
    pass on average for the drain to notice the end, plus (cold moves)
    half a pass before it confirms the last one."""
    span = pipeline(moves, gate_slots, compute_slots, handoff)
    if not moves:
        return 0.0
    confirms = any(m.get('confirm') for m in moves)
    return span + pass_seconds / 2.0 * (2 if confirms else 1)
