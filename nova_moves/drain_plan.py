"""A host drain's plan: which move each server gets, how long each takes
by the record of past moves, and when the drain ends under the move
limits. Pure: the caller reads the database and the scheduler.

Durations come from the ``phases`` of finished migrations (db/phases.py):
a live migration from its first status to ``completed``, a cold one to
``finished`` plus its confirmation (``confirming`` to ``confirmed``, a
drain confirms at once), an evacuation to ``done``. The p50 of the same
kind and flavor is used when there are ``MIN_SAMPLES`` of them, else of
the kind, else ``DEFAULT_SECONDS`` (said so in the plan's basis).

The drain's moves all leave one host, so at most
``max_outbound_migrations_per_host`` run at once (and no more than the
cluster's free slots); the ETA is the makespan of the durations laid on
that many slots in the drain's order, plus one conductor pass per move
(a drain starts and follows its moves on ``queue_poll_interval`` passes).
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


def _seconds(entries, first, last):
    """Seconds from the first entry's time (or ``first``'s) to ``last``'s,
    or None when the migration never reached ``last``."""
    times = {}
    for status, at in entries:
        times.setdefault(status, at)
    if last not in times or not entries:
        return None
    start = times.get(first, entries[0][1])
    return (times[last] - start).total_seconds()


def duration(kind, entries):
    """How long one past migration of ``kind`` took (its phases as
    [status, datetime]), or None if it did not succeed."""
    if kind == LIVE:
        return _seconds(entries, None, states.M_COMPLETED)
    if kind == EVACUATE:
        return _seconds(entries, None, states.M_DONE)
    moved = _seconds(entries, None, states.M_FINISHED)
    confirmed = _seconds(entries, states.M_CONFIRMING, states.M_CONFIRMED)
    if moved is None or confirmed is None:
        return None
    return moved + confirmed


class History:
    """p50 durations by (kind, flavor) from past migrations:
    ``samples`` is [(kind, flavor_id, seconds)]."""

    def __init__(self, samples):
        self.by_flavor = {}
        self.by_kind = {}
        for kind, flavor_id, seconds in samples:
            self.by_flavor.setdefault((kind, flavor_id), []).append(seconds)
            self.by_kind.setdefault(kind, []).append(seconds)

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


def eta(estimates, slots, pass_seconds):
    """The drain's estimated seconds: the makespan plus one conductor
    pass per move on its slot."""
    return makespan([s + pass_seconds for s in estimates], slots)
