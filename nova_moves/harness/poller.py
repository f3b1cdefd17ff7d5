"""The harness's view of every server: one thread lists them all at a
fixed interval and wakes whoever waits for a server to reach a state."""
import threading
import time

from nova_moves.harness import invariants

SETTLED = invariants.SERVER_SETTLED


class StatusPoller(threading.Thread):
    """Polls GET /servers/detail every ``interval`` seconds and keeps, per
    server, the latest view and the history of its status changes.
    Waiters ask for a view taken after a given moment, so a request that
    was just accepted is never judged on a poll that started before it."""

    def __init__(self, client, t0, interval=0.1):
        super().__init__(daemon=True, name='status-poller')
        self.client = client
        self.t0 = t0
        self.interval = interval
        self.latest = {}        # id -> server view
        self.history = {}       # id -> [(t, status)]
        self.tracked = set()
        self.poll_started = 0.0
        self.polls = 0
        self.errors = 0
        self._cond = threading.Condition()
        self._halt = threading.Event()

    def track(self, server_ids, status=None):
        """Poll these servers from now on. ``status``: what the request
        that created them says they are now (a 202 boot: BUILD), the
        first entry of their history even if they leave it before the
        next poll."""
        with self._cond:
            self.tracked.update(server_ids)
            if status:
                now = time.monotonic() - self.t0
                for server_id in server_ids:
                    self.history.setdefault(server_id, [(now, status)])

    def _list(self):
        return invariants.listed(self.client, '/servers/detail', 'servers',
                                 '2.47', {'all_tenants': '1'})

    def poll_once(self):
        started = time.monotonic() - self.t0
        with self._cond:
            # Only servers tracked before the list was asked for: one
            # booted meanwhile is missing from it without being deleted.
            tracked = set(self.tracked)
        servers = {s['id']: s for s in self._list()}
        with self._cond:
            for server_id in tracked:
                view = servers.get(server_id)
                status = view['status'] if view else 'DELETED'
                if view is None:
                    view = {'id': server_id, 'status': 'DELETED',
                            'OS-EXT-STS:task_state': None,
                            'OS-EXT-SRV-ATTR:host': None}
                self.latest[server_id] = view
                hist = self.history.setdefault(server_id, [])
                if not hist or hist[-1][1] != status:
                    hist.append((started, status))
            self.poll_started = started
            self.polls += 1
            self._cond.notify_all()

    def run(self):
        while not self._halt.is_set():
            began = time.monotonic()
            try:
                self.poll_once()
            except Exception:
                self.errors += 1
            spent = time.monotonic() - began
            # Listing many servers is expensive for the API (py-spy showed
            # the poller at ~40% of the API's CPU in resize-storm): poll at
            # most a third of the time so the API is left to the workload.
            self._halt.wait(max(self.interval, 2 * spent))

    def stop(self):
        self._halt.set()

    def wait_for(self, server_id, predicate, after, timeout):
        """The first view of ``server_id`` from a poll started after
        ``after`` (seconds since t0) that satisfies ``predicate``; None on
        timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                view = self.latest.get(server_id)
                if self.poll_started > after and view is not None \
                        and predicate(view):
                    return view
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cond.wait(min(left, 1.0))

    def view(self, server_id):
        with self._cond:
            return self.latest.get(server_id)


def settled(view):
    return view['status'] == 'DELETED' or (
        view['OS-EXT-STS:task_state'] is None and view['status'] in SETTLED)
