"""Cold migrate + confirm in a loop on every server, timed end to end,
while one poller (GET /servers/detail at 2.69) keeps every server's last
record: the load of the ``cells-outage`` scenario and of
tools/bench_cells_moves.py.

One poller instead of a GET per server per step: twelve movers polling
their own server would triple the API's requests on a 2-core machine and
measure the polling. At 2.69 a down cell's servers come back as partial
records (``status: UNKNOWN``), which the poller counts: that is how the
scenario sees the API answer while a cell's database is down."""
import threading
import time

from nova_moves import apiclient as api_client

LIST_VERSION = '2.69'


def percentile(values, q):
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, int(round(q * (len(ordered) - 1)))))
    return ordered[index]


class Poller(threading.Thread):
    """Polls every ``interval`` s; ``views`` {id: the last full record},
    ``polls`` [(t, http status, seconds, {id: 'full'|'partial'})]."""

    def __init__(self, endpoint, token, t0, interval=0.25):
        super().__init__(daemon=True, name='cell-load-poller')
        self.client = api_client.Client(endpoint, token)
        self.t0 = t0
        self.interval = interval
        self.views = {}
        self.polls = []
        self.lock = threading.Condition()
        self.stopping = threading.Event()

    def poll_once(self):
        started = time.monotonic()
        kinds = {}
        try:
            response = self.client.get('/servers/detail',
                                       version=LIST_VERSION)
            status = response.status_code
            servers = response.json()['servers'] if status == 200 else []
        except Exception:
            status, servers = None, []
        with self.lock:
            for server in servers:
                # A partial record has no flavor (Nova's 2.69 shape).
                full = 'flavor' in server
                kinds[server['id']] = 'full' if full else 'partial'
                if full:
                    server['_seen'] = started - self.t0
                    self.views[server['id']] = server
            self.polls.append((started - self.t0, status,
                               time.monotonic() - started, kinds))
            self.lock.notify_all()

    def run(self):
        while not self.stopping.is_set():
            self.poll_once()
            self.stopping.wait(self.interval)

    def wait_for(self, server_id, predicate, after, timeout):
        """The first full record seen after ``after`` (s since t0) that
        satisfies ``predicate``, or None."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                view = self.views.get(server_id)
                if view is not None and view['_seen'] > after and \
                        predicate(view):
                    return view
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.lock.wait(min(left, 1.0))


def _settled(view):
    return view.get('OS-EXT-STS:task_state') is None and view['status'] in (
        'ACTIVE', 'VERIFY_RESIZE', 'ERROR', 'SHUTOFF')


class Movers:
    """One thread per server: migrate, wait, confirm, wait, until
    ``stop_at`` (s since t0); a move begun goes on to its end. Each move
    is a record {cell, server, start, end, e2e_s, outcome}: ``ok``
    (confirmed on another host), ``rolled-back`` (ACTIVE on its old host,
    the move undone), ``error``, ``refused`` (the migrate not accepted,
    e.g. a 500 while its cell's database is down), ``timeout``."""

    def __init__(self, client_factory, poller, servers, move_timeout=120):
        self.client_factory = client_factory
        self.poller = poller
        self.servers = servers  # [{'id', 'cell'}]
        self.move_timeout = move_timeout
        self.records = []
        self._lock = threading.Lock()

    def now(self):
        return time.monotonic() - self.poller.t0

    def run(self, stop_at):
        """``stop_at``: s since t0, or a callable giving it (None while
        not known yet)."""
        stop = stop_at if callable(stop_at) else (lambda: stop_at)
        threads = [threading.Thread(target=self._loop, args=(s, stop),
                                    daemon=True) for s in self.servers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def _loop(self, server, stop):
        client = self.client_factory()
        while stop() is None or self.now() < stop():
            record = self._move(client, server)
            with self._lock:
                self.records.append(record)
            if record['outcome'] in ('refused', 'error', 'timeout'):
                time.sleep(1.0)  # do not hammer a cell that is down

    def _post(self, client, server_id, body):
        try:
            return client.action(server_id, body).status_code
        except Exception:
            return None

    def _move(self, client, server):
        sid = server['id']
        before = self.poller.views.get(sid) or {}
        host = before.get('OS-EXT-SRV-ATTR:host')
        record = {'cell': server['cell'], 'server': sid, 'start': self.now(),
                  'outcome': None}
        status = self._post(client, sid, {'migrate': None})
        if status != 202:
            record.update(outcome='refused', http=status, end=self.now())
            return record
        # Polls begun after the 202 only: the API set the task_state
        # before answering.
        view = self.poller.wait_for(sid, _settled, self.now(),
                                    self.move_timeout)
        if view is None:
            record.update(outcome='timeout', end=self.now())
            return record
        if view['status'] != 'VERIFY_RESIZE':
            moved = view.get('OS-EXT-SRV-ATTR:host') != host
            record.update(outcome='error' if view['status'] == 'ERROR' or
                          moved else 'rolled-back', end=view['_seen'],
                          why=_why(client, sid))
            return record
        # The confirm is retried while its cell cannot take it (a 500
        # with the database down, a 409 while a step lands).
        deadline = time.monotonic() + self.move_timeout
        while self._post(client, sid, {'confirmResize': None}) not in (
                202, 204):
            if time.monotonic() > deadline:
                record.update(outcome='timeout', end=self.now())
                return record
            time.sleep(0.5)
        sent = self.now()
        view = self.poller.wait_for(
            sid, lambda v: _settled(v) and v['status'] != 'VERIFY_RESIZE',
            sent, self.move_timeout)
        if view is None:
            record.update(outcome='timeout', end=self.now())
            return record
        record.update(end=view['_seen'], e2e_s=view['_seen'] -
                      record['start'],
                      outcome='ok' if view['status'] == 'ACTIVE' else
                      'error')
        return record


def _why(client, server_id):
    """What the server's newest action says went wrong (its failed
    events' names and the last line of each traceback): a report that
    counts a move as undone also says why."""
    try:
        newest = client.actions(server_id)[0]
        detail = client.action_detail(server_id, newest['request_id'])
    except Exception as exc:
        return 'unknown (%s)' % exc
    failed = ['%s: %s' % (e['event'], (e.get('traceback') or '').strip()
                          .splitlines()[-1:] or e.get('result'))
              for e in detail.get('events', ())
              if e.get('result') != 'Success']
    return '%s %s' % (newest['action'], '; '.join(failed) or 'no failed event')


def start(stack, servers, t0):
    """A started poller of ``stack``'s API and the movers of
    ``servers`` it feeds (times from ``t0``)."""
    poller = Poller(stack.endpoint, stack.admin_token, t0)
    poller.start()
    movers = Movers(
        lambda: api_client.Client(stack.endpoint, stack.admin_token),
        poller, servers)
    return poller, movers


def summary(records, cell=None, start=None, end=None):
    """Counts and end-to-end p50/p99 (s) of the moves of ``cell`` begun
    in [start, end)."""
    chosen = [r for r in records if (cell is None or r['cell'] == cell)
              and (start is None or r['start'] >= start)
              and (end is None or r['start'] < end)]
    outcomes = {}
    for r in chosen:
        outcomes[r['outcome']] = outcomes.get(r['outcome'], 0) + 1
    e2e = [r['e2e_s'] for r in chosen if r['outcome'] == 'ok']
    return {'moves': len(chosen), 'outcomes': outcomes,
            'completed_pct': round(100.0 * len(e2e) / len(chosen), 1)
            if chosen else None,
            'p50_s': percentile(e2e, 0.5), 'p99_s': percentile(e2e, 0.99)}
