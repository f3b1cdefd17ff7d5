"""A move's start cast may wait for the broker (move_step_cast_wait):
meanwhile the request is held and nothing the conductor does touches the
move's rows. Without a sign of life the stuck-move sweep took such a
move for one whose conductor died and rolled it back, and the client
still got its 202 when the cast went through (a 40 s broker outage with
a 30 s stuck-move timeout: 16 of 80 clients, up to 18 s after the
rollback). While the cast is being sent the API touches the move's rows
(db move_keep_alive) often enough that the sweep never sees them stale,
so the 202 answers a move that is still there.

One thread per app (``Keeper``, on the app's Services) watches every
start being sent: a thread started per request cost each migrate ~0.16 ms
of CPU, for casts that take a millisecond and almost never need a touch.
It sleeps while nothing is sent and ends after a minute without any."""
import contextlib
import threading
import time

from oslo_log import log as logging

from nova_moves import cells
from nova_moves import conf
from nova_moves.db import api as db_api

CONF = conf.CONF
LOG = logging.getLogger(__name__)

# How long the keeper's thread waits without a start to watch before it
# ends (the next start begins another).
IDLE_EXIT = 60.0
_NEVER = float('inf')


def _interval():
    # A quarter of the shortest timeout the sweep applies.
    shortest = min([CONF.stuck_move_timeout or 120] + [
        float(v) for v in CONF.move_step_timeouts.values() if v])
    return max(0.5, shortest / 4.0)


class _Start:
    __slots__ = ('instance_uuid', 'task_state', 'migration', 'due', 'cell')

    def __init__(self, instance_uuid, task_state, migration, due):
        self.instance_uuid = instance_uuid
        self.task_state = task_state
        self.migration = migration
        self.due = due
        # The server's cell (cells.target): a context variable does not
        # follow the start to the keeper's thread, which re-targets.
        self.cell = cells.current()


class Keeper:
    """Keeps alive the moves whose start is being sent, one interval
    after the start began and every interval after, until the send ends
    or the move moved on."""

    def __init__(self):
        self._cond = threading.Condition()
        self._starts = {}
        self._thread = None

    @contextlib.contextmanager
    def sending(self, instance_uuid, task_state, migration=None):
        """Keep the move alive while the with-block sends its start."""
        start = _Start(instance_uuid, task_state, migration,
                       time.monotonic() + _interval())
        with self._cond:
            self._starts[id(start)] = start
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, daemon=True, name='move-sending')
                self._thread.start()
        try:
            yield
        finally:
            with self._cond:
                del self._starts[id(start)]

    def _run(self):
        idle_since = time.monotonic()
        with self._cond:
            while True:
                now = time.monotonic()
                if not self._starts:
                    if now - idle_since >= IDLE_EXIT:
                        self._thread = None
                        return
                    # Not woken by a new start (that would cost every
                    # request a thread switch): a start is due an
                    # interval after it began, so a look every half
                    # interval still finds it in time.
                    self._cond.wait(_interval() / 2)
                    continue
                idle_since = now
                due = [s for s in self._starts.values() if s.due <= now]
                if not due:
                    # (No longer than a look: a start that is not
                    # touched any more is due never.)
                    self._cond.wait(min([_interval() / 2] + [
                        s.due - now for s in self._starts.values()]))
                    continue
                for start in due:
                    start.due = now + _interval()
                self._cond.release()
                try:
                    for start in due:
                        if not self._touch(start):
                            start.due = _NEVER
                finally:
                    self._cond.acquire()

    @staticmethod
    def _touch(start):
        """False once the move moved on (or was undone)."""
        try:
            with cells.target(start.cell):
                return db_api.move_keep_alive(
                    start.instance_uuid, start.task_state, start.migration)
        except Exception:
            LOG.debug('Could not mark the move of %s as being sent',
                      start.instance_uuid, exc_info=True)
            return True
