"""What the benchmarks wait with: servers' and migrations' states read
straight from the stack's database (polling the API would count as move
cost), and one reader thread for many clients that each wait on one
server."""
import collections
import datetime
import json
import threading
import time

import sqlalchemy as sa

FAILED = ('error', 'failed', 'cancelled')


class DB:
    def __init__(self, url):
        self.engine = sa.create_engine(url)
        meta = sa.MetaData()
        self.instances = sa.Table('instances', meta,
                                  autoload_with=self.engine)
        self.migrations = sa.Table('migrations', meta,
                                   autoload_with=self.engine)

    def states(self, ids):
        i = self.instances
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(i.c.uuid, i.c.vm_state,
                                          i.c.task_state, i.c.host))
            return {r.uuid: (r.vm_state, r.task_state, r.host)
                    for r in rows if r.uuid in ids}

    def migration_statuses(self, ids, migration_type):
        m = self.migrations
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(
                m.c.instance_uuid, m.c.status, m.c.id).where(
                m.c.migration_type == migration_type).order_by(m.c.id))
            return {r.instance_uuid: r.status for r in rows
                    if r.instance_uuid in ids}

    def phase_times(self, ids, migration_type):
        """Where the moves' wall time went, from their migrations'
        phase stamps (each status with the time it was written):
        {(status, next status): [seconds, ...]} over the latest
        migration of each server in ``ids``; a status entered twice
        (queued, then admitted back to pre-migrating) counts each
        time."""
        m = self.migrations
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(
                m.c.instance_uuid, m.c.phases).where(
                m.c.migration_type == migration_type).order_by(m.c.id))
            latest = {r.instance_uuid: r.phases for r in rows
                      if r.instance_uuid in ids}
        spans = collections.defaultdict(list)
        for phases in latest.values():
            stamps = [(name, datetime.datetime.fromisoformat(at))
                      for name, at in json.loads(phases or '[]')]
            for (a, ta), (b, tb) in zip(stamps, stamps[1:]):
                spans[(a, b)].append((tb - ta).total_seconds())
        return dict(spans)

    def wait(self, ids, vm_state, migration=None, timeout=600):
        """Until every server is ``vm_state`` with no task_state and its
        latest ``migration`` = (type, statuses) in statuses or failed.
        Returns the servers whose migration failed."""
        ids = set(ids)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            states = self.states(ids)
            errors = {k for k, v in states.items() if v[0] == 'error'}
            if errors:
                raise RuntimeError('servers in ERROR: %s' % sorted(errors))
            done = {k for k, v in states.items()
                    if v[0] == vm_state and v[1] is None}
            failed = set()
            if migration and done == ids:
                statuses = self.migration_statuses(ids, migration[0])
                failed = {k for k in done if statuses.get(k) in FAILED}
                done = {k for k in done if statuses.get(k) in migration[1]}
            if done | failed == ids:
                return failed
            time.sleep(0.2)
        raise TimeoutError('%d servers not %s' % (len(ids - done), vm_state))


class Watch:
    """Every server's state, read by one thread every 50 ms for clients
    that each wait on one server (one reader instead of one per client)."""

    def __init__(self, db, ids):
        self._db, self._ids = db, set(ids)
        self._states = {}
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            states = self._db.states(self._ids)
            with self._cond:
                self._states = states
                self._cond.notify_all()
            self._stop.wait(0.05)

    def until(self, server_id, vm_state, timeout=120):
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                state = self._states.get(server_id)
                if state and state[0] == 'error':
                    raise RuntimeError('%s in ERROR' % server_id)
                if state and state[0] == vm_state and state[1] is None:
                    # Not this state again at the next read.
                    self._states.pop(server_id)
                    return
                if not self._cond.wait(deadline - time.monotonic()):
                    raise TimeoutError('%s not %s' % (server_id, vm_state))

    def stop(self):
        self._stop.set()
        self._thread.join()

