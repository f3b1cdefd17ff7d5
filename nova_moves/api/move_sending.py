"""A move's start cast may wait for the broker (move_step_cast_wait):
meanwhile the request is held and nothing the conductor does touches the
move's rows. Without a sign of life the stuck-move sweep took such a
move for one whose conductor died and rolled it back, and the client
still got its 202 when the cast went through (a 40 s broker outage with
a 30 s stuck-move timeout: 16 of 80 clients, up to 18 s after the
rollback). While the cast is being sent the API touches the move's rows
(db move_keep_alive) often enough that the sweep never sees them stale,
so the 202 answers a move that is still there."""
import contextlib
import threading

from oslo_log import log as logging

from nova_moves import conf
from nova_moves.db import api as db_api

CONF = conf.CONF
LOG = logging.getLogger(__name__)


def _interval():
    # A quarter of the shortest timeout the sweep applies.
    shortest = min([CONF.stuck_move_timeout or 120] + [
        float(v) for v in CONF.move_step_timeouts.values() if v])
    return max(0.5, shortest / 4.0)


@contextlib.contextmanager
def sending(instance_uuid, task_state, migration=None):
    """Keep the move alive while the with-block sends its start."""
    stop = threading.Event()

    def keep_alive():
        while not stop.wait(_interval()):
            try:
                if not db_api.move_keep_alive(instance_uuid, task_state,
                                              migration):
                    return  # the move moved on (or was undone)
            except Exception:
                LOG.debug('Could not mark the move of %s as being sent',
                          instance_uuid, exc_info=True)

    thread = threading.Thread(target=keep_alive, daemon=True,
                              name='move-sending-%s' % instance_uuid[:8])
    thread.start()
    try:
        yield
    finally:
        stop.set()
