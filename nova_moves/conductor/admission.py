"""The concurrency gate, conductor side ([conductor]
max_concurrent_migrations_per_cluster, max_outbound_migrations_per_host).

Every move enters the gate once its migration row exists and before its
conductor does any work (db move_queue_enter decides under one lock).
Admitted at once, the flow runs as before in the thread that delivered
it. Otherwise its migration waits in ``queued`` with the request stored
next to it, and whichever conductor's pass finds a free slot runs it in a
small thread pool: the request survives the conductor that received it.
A pass runs every queue_poll_interval and at once when a move handled by
this conductor settles (wake()), so a freed slot is not left idle for a
poll interval: with the default limits that idle time was most of a
queued move's wait.
"""
import concurrent.futures
import json
import threading

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
        self._wake = threading.Event()
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
        self._wake.set()

    def _loop(self):
        while not self._stopped.is_set():
            self._wake.wait(CONF.conductor.queue_poll_interval)
            self._wake.clear()
            if self._stopped.is_set():
                return
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
        """Admit what fits and run it here."""
        rows = db_api.move_queue_admit(*_limits(), CONF.host,
                                       waiting=self._waiting)
        self._waiting = bool(rows)
        self._spawn(rows)

    def _spawn(self, rows):
        for row in rows:
            request = json.loads(row['request'])
            ctxt = nm_context.RequestContext.from_dict(request['context'])
            LOG.info('Starting queued move %s of %s', row['migration_uuid'],
                     row['instance_uuid'])
            self.submit(self._run, row['kind'], ctxt, row['instance_uuid'],
                        row['migration_uuid'], request['kwargs'])

    @staticmethod
    def _safe(fn, *args):
        try:
            return fn(*args)
        except Exception:
            LOG.exception('Queued move %s failed', args[:4])

    def stop(self):
        self._stopped.set()
        self._wake.set()
        self._pool.shutdown(wait=False)
