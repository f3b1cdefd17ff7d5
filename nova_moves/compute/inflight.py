"""Which move steps this compute is running right now.

The stuck-move sweep cannot tell a step that is only slow (a destination
busy in prep_resize, a handler waiting out a broker outage) from one whose
host died or whose message was lost: both just stop touching the
migration. Before it re-sends or rolls back a step it asks the host that
holds it (move_step_status, a short call); a step handler that is still
running answers for its move, so a slow move is left to finish."""
import collections
import functools
import threading


class StepsInFlight:

    def __init__(self):
        self._lock = threading.Lock()
        self._running = collections.Counter()

    def enter(self, migration_uuid):
        with self._lock:
            self._running[migration_uuid] += 1

    def leave(self, migration_uuid):
        with self._lock:
            self._running[migration_uuid] -= 1
            if self._running[migration_uuid] <= 0:
                del self._running[migration_uuid]

    def __contains__(self, migration_uuid):
        with self._lock:
            return migration_uuid in self._running


def tracked(fn):
    """Count the handler as running its move (``migration_uuid``) in the
    endpoint's ``in_flight`` (one per host, shared by every kind) until
    it returns. Outermost, so the whole handler counts."""
    @functools.wraps(fn)
    def wrapper(self, ctxt, *args, **kwargs):
        migration_uuid = kwargs.get('migration_uuid')
        if migration_uuid is None:
            return fn(self, ctxt, *args, **kwargs)
        self.in_flight.enter(migration_uuid)
        try:
            return fn(self, ctxt, *args, **kwargs)
        finally:
            self.in_flight.leave(migration_uuid)
    return wrapper
