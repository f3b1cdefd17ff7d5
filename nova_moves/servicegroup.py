"""Is a service up, down or unknown? The database heartbeat always
counts; with a tooz membership backend, the service must also be a live
group member. "unknown": this process could not see heartbeats lately
(nova_moves.liveness), so a stale heartbeat proves nothing yet."""
import datetime
import threading
import time

from oslo_log import log as logging

from nova_moves import conf
from nova_moves import coordination
from nova_moves.db import api as db_api
from nova_moves import liveness

CONF = conf.CONF
LOG = logging.getLogger(__name__)
COMPUTE = 'nova-moves-compute'


class FleetWatch:
    """Opens the FLEET blind window when every compute's heartbeat went
    stale together. It closes once half of the hosts that were up when
    it opened have reported again: the first heartbeats after a broker
    outage do not mean the others can report yet (the conductors answer
    a backlog; measured up to 40 s after the broker was back), and a
    host shown down too early gets evacuated while it runs. A window
    whose hosts do not come back closes ``3 x service_down_time`` after
    the first heartbeat. Also closes a broker window whose reconnection
    the log level hid, once a heartbeat is recorded after it. Looked at
    on every verdict (at most once a second) and, in the long-running
    processes, by a thread every report_interval, so a silence is seen
    while it lasts, not only by the next request."""

    def __init__(self, observer):
        self.observer = observer
        self._checked = None
        self._lock = threading.Lock()
        self._thread = None
        self._stop = threading.Event()
        self._first_back = None  # monotonic: first heartbeat after a cut

    def check(self, force=False):
        with self._lock:
            now = time.monotonic()
            if not force and self._checked is not None and \
                    now - self._checked < 1.0:
                return
            self._checked = now
        beats = db_api.service_heartbeats(COMPUTE)
        if not beats:
            return
        window = CONF.service_down_time
        utcnow = db_api.utcnow()
        newest = max(beats)
        if (utcnow - newest).total_seconds() > window:
            self._first_back = None
            self.observer.cut(liveness.FLEET, since=newest)
            return
        since = self.observer.blind_since(liveness.FLEET)
        if since is not None and not self._back_enough(beats, since):
            return
        self._first_back = None
        self.observer.back(liveness.FLEET)
        since = self.observer.blind_since(liveness.BROKER)
        if since is not None and newest > since:
            # A heartbeat went through the broker after our cut.
            self.observer.back(liveness.BROKER)

    def _back_enough(self, beats, since):
        if self._first_back is None:
            self._first_back = time.monotonic()
        were_up = [b for b in beats if b >= since - datetime.timedelta(
            seconds=CONF.service_down_time)]
        back = [b for b in beats if b > since]
        return 2 * len(back) >= len(were_up) or \
            time.monotonic() - self._first_back > \
            3 * CONF.service_down_time

    def reset(self):
        """Tests: stop watching, forget every window and look again."""
        self.stop()
        self._thread = None
        self._checked = self._first_back = None
        self.observer.reset()

    def start(self):
        """Watch in a thread (a scheduler, a conductor, an API worker)."""
        if self._thread is not None and self._thread.is_alive():
            return
        # One event per thread: a stopped one never runs on.
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True,
                                        name='liveness-watch',
                                        args=(self._stop,))
        self._thread.start()

    def _loop(self, stop):
        interval = max(0.5, min(CONF.report_interval,
                                CONF.service_down_time / 4.0))
        while not stop.wait(interval):
            try:
                self.check(force=True)
            except Exception:  # the database away: the heartbeat says it
                LOG.debug('Liveness watch could not read heartbeats',
                          exc_info=True)

    def stop(self):
        self._stop.set()


class ServiceGroup:
    """This process's view of liveness: it owns the process's blind
    window (``observer``, which the Service marks when its own heartbeat
    fails), the broker log watch that feeds it, and the fleet watch."""

    def __init__(self, coordinator=None, cache_seconds=1.0):
        self.observer = liveness.Observer()
        self.fleet_watch = FleetWatch(self.observer)
        # Installed before the process builds its transport (the
        # scheduler and conductor build their group first).
        self._broker_watch = liveness.BrokerLogWatch(self.observer)
        self._broker_watch.install()
        self._coordinator = coordinator
        self._cache_seconds = cache_seconds
        self._cache = {}
        self._lock = threading.Lock()

    @classmethod
    def for_process(cls):
        if not coordination.membership_enabled():
            return cls()
        coordinator = coordination.Coordinator()
        coordinator.start()
        return cls(coordinator)

    def _members(self, binary):
        with self._lock:
            cached = self._cache.get(binary)
            if cached and time.monotonic() - cached[0] < self._cache_seconds:
                return cached[1]
        members = self._coordinator.members(binary)
        with self._lock:
            self._cache[binary] = (time.monotonic(), members)
        return members

    def start(self):
        """Watch the fleet's heartbeats in a thread (idempotent)."""
        self.fleet_watch.start()

    def stop(self):
        self.fleet_watch.stop()
        self._broker_watch.remove()

    def _heartbeat_state(self, service):
        """up, down or unknown from the database heartbeat alone."""
        try:
            self.fleet_watch.check()
        except Exception:
            pass  # the verdict below still reads what the service row says
        return self.observer.state_of(
            db_api._parse_time(service['last_seen_up']),
            service['forced_down'], db_api.utcnow())

    def state(self, service):
        verdict = self._heartbeat_state(service)
        if verdict != liveness.UP or self._coordinator is None:
            return verdict
        if service['host'] in self._members(service['binary']):
            return liveness.UP
        return liveness.DOWN

    def is_up(self, service):
        return self.state(service) == liveness.UP
