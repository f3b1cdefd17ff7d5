"""The concurrency gate, conductor side ([conductor]
max_concurrent_migrations_per_cluster, max_outbound_migrations_per_host).

Every move enters the gate once its migration row exists and before its
conductor does any work (db move_queue_enter decides under one lock).
Admitted at once, the flow runs as before in the thread that delivered
it. Otherwise its migration waits in ``queued`` with the request stored
next to it, and whichever conductor's pass finds a free slot runs it in a
small thread pool: the request survives the conductor that received it.
A pass runs at least every queue_poll_interval and at once when a move
handled by this conductor settles (wake()), so a freed slot is not left
idle for a poll interval: with the default limits that idle time was
most of a queued move's wait. The woken pass runs in a pool thread,
which then runs the first move it admitted itself: one thread hand-off
per admitted move, not two (a gate thread woken, then a pool worker).
"""
import concurrent.futures
import json
import threading
import time

from oslo_log import log as logging

from nova_moves import conf
from nova_moves import context as nm_context
from nova_moves.db import api as db_api

CONF = conf.CONF
LOG = logging.getLogger(__name__)

LIVE = 'live'
COLD = 'cold'
EVACUATE = 'evacuate'


def _limits():
    return (CONF.conductor.max_concurrent_migrations_per_cluster,
            CONF.conductor.max_outbound_migrations_per_host)


class Gate:

    def __init__(self, run):
        """``run(kind, ctxt, instance_uuid, migration_uuid, kwargs)`` runs
        an admitted move's flow."""
        self._run = run
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=16, thread_name_prefix='queued-move')
        # A woken pass is asked for and not started yet: wakes meanwhile
        # are served by it (as an Event coalesced them for the gate
        # thread before).
        self._pass_lock = threading.Lock()
        self._pass_asked = False
        self._last_pass = time.monotonic()
        # Moves are known to wait (this conductor queued one, or its last
        # pass admitted one): the next pass goes straight to the locked
        # admission. Only a hint: a pass without it reads first.
        self._waiting = False
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True,
                                        name='move-gate')

    def start(self):
        self._thread.start()

    def wake(self):
        """A move settled here: its slot may admit a queued one now."""
        with self._pass_lock:
            if self._pass_asked:
                return
            self._pass_asked = True
        try:
            self._pool.submit(self._woken_pass)
        except RuntimeError:
            pass  # stopped: the conductor's successor's passes admit

    def _woken_pass(self):
        with self._pass_lock:
            # A wake from now on may have freed a slot this pass does not
            # see: it asks for a pass of its own.
            self._pass_asked = False
        try:
            rows = self._admit()
        except Exception:
            LOG.exception('Move queue pass failed')
            return
        if rows:
            self._spawn(rows[1:])
            self._safe(self._run, *self._start(rows[0]))

    def _due(self):
        """Seconds until the next poll is due (0: now)."""
        return max(0.0, self._last_pass + CONF.conductor.queue_poll_interval
                   - time.monotonic())

    def _loop(self):
        # The poll: other conductors' moves settle too. A woken pass
        # counts, so a busy gate is not polled on top of its passes.
        while not self._stopped.wait(self._due()):
            if self._due():
                continue  # a woken pass ran meanwhile
            try:
                self.tick()
            except Exception:
                LOG.exception('Move queue pass failed')

    def enter(self, ctxt, kind, instance_uuid, migration_uuid, source_host,
              from_status, kwargs):
        """True: run the move now. False: it waits in ``queued``. Raises
        MoveConflict when the migration moved on (a stale request)."""
        request = {'context': ctxt.to_dict(), 'kwargs': kwargs}
        result = db_api.move_queue_enter(
            migration_uuid, instance_uuid, source_host, kind, request,
            from_status, *_limits(), CONF.host)
        return self.entered(result, migration_uuid, instance_uuid)

    def ticket(self, ctxt, kind, kwargs):
        """What a move's start transaction needs to pass the gate in it
        (db cold_move_start's ``gate``); its answer goes to entered()."""
        return {'kind': kind, 'limits': _limits(), 'me': CONF.host,
                'request': {'context': ctxt.to_dict(), 'kwargs': kwargs}}

    def entered(self, result, migration_uuid, instance_uuid):
        """The gate's answer to a ticket: True: run the move now."""
        self._spawn(result['others'])
        if not result['admitted']:
            self._waiting = True
            LOG.info('Move %s of %s waits in queued (limits %s per '
                     'cluster, %s per host)', migration_uuid,
                     instance_uuid, *_limits())
        return result['admitted']

    def submit(self, fn, *args):
        """Run ``fn`` in the gate's pool (a drain starting a move)."""
        return self._pool.submit(self._safe, fn, *args)

    def tick(self):
        """Admit what fits and run it in the pool."""
        self._spawn(self._admit())

    def _admit(self):
        self._last_pass = time.monotonic()
        rows = db_api.move_queue_admit(*_limits(), CONF.host,
                                       waiting=self._waiting)
        self._waiting = bool(rows)
        return rows

    def _spawn(self, rows):
        for row in rows:
            self.submit(self._run, *self._start(row))

    @staticmethod
    def _start(row):
        """An admitted row's run() arguments."""
        request = json.loads(row['request'])
        ctxt = nm_context.RequestContext.from_dict(request['context'])
        LOG.info('Starting queued move %s of %s', row['migration_uuid'],
                 row['instance_uuid'])
        return (row['kind'], ctxt, row['instance_uuid'],
                row['migration_uuid'], request['kwargs'])

    @staticmethod
    def _safe(fn, *args):
        try:
            return fn(*args)
        except Exception:
            LOG.exception('Queued move %s failed', args[:4])

    def stop(self):
        self._stopped.set()
        self._pool.shutdown(wait=False)
