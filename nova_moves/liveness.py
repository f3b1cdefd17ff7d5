"""What this process can know of the compute hosts' heartbeats.

A compute's heartbeat reaches the database through the broker (compute
-> conductor call). When the broker blinks, or when this process was cut
off from it, every host goes silent at once; that is not evidence that
the hosts died. Nova reads such a silence as "down" (the moves scheduled
right after the broker came back fail with NoValidHost; the evacuation
checks let a live host be evacuated). Here this process keeps a "blind
window":

- it opens when this process's own broker connection fails (oslo.
  messaging has no public callback for it: its RabbitMQ driver logs
  "... is unreachable" and "Reconnected to AMQP server", and a filter on
  that logger sees them), when its own heartbeat cannot be recorded, or
  when every compute's heartbeat went stale together (servicegroup.py
  watches the newest one);
- it closes when that source recovers, and then gives every host
  ``service_down_time`` to report again.

A stale host is then "unknown" rather than "down" while the window is
open or in its grace, unless it had already been silent for
``service_down_time`` when the window opened (it was down before).

No database access here: computes import this (nova_moves.service).
"""
import datetime
import logging
import threading

from nova_moves import conf

CONF = conf.CONF

UP = 'up'
DOWN = 'down'
UNKNOWN = 'unknown'

BROKER = 'broker'  # this process's own broker connection
REPORT = 'report'  # this process's own heartbeat
FLEET = 'fleet'    # every compute heartbeat stale together

# oslo_log names the driver's logger with a dot (oslo.messaging...).
_RABBIT_LOGGER = 'oslo.messaging._drivers.impl_rabbit'
# The format strings oslo.messaging's RabbitMQ driver logs with.
_CUT_MARKS = ('is unreachable', 'closed the connection',
              'Connection failed')
_BACK_MARK = 'Reconnected to AMQP server'


class Observer:
    """The blind window of one process: owned by its ServiceGroup
    (nova_moves.servicegroup), told by its Service and its broker log
    watch."""

    def __init__(self):
        self._lock = threading.Lock()
        self._blind = {}        # source -> since (UTC, naive)
        self._start = None      # when the current/last window opened
        self._resumed = None    # when it closed (None: open or never)

    def cut(self, source, since=None):
        """``source`` cannot see heartbeats since ``since`` (now)."""
        since = since or _utcnow()
        with self._lock:
            if source in self._blind:
                return
            if not self._blind and not self._in_grace():
                self._start = since
            elif self._start is None or since < self._start:
                self._start = since
            self._blind[source] = since
            self._resumed = None

    def back(self, source):
        """``source`` sees heartbeats again."""
        with self._lock:
            if self._blind.pop(source, None) is not None and \
                    not self._blind:
                self._resumed = _utcnow()

    def blind_since(self, source):
        with self._lock:
            return self._blind.get(source)

    def _in_grace(self, now=None):
        if self._resumed is None:
            return False
        now = now or _utcnow()
        return (now - self._resumed).total_seconds() < \
            CONF.service_down_time

    def unknown_since(self, now=None):
        """The opening of the window a stale host may be unknown in, or
        None when this process sees heartbeats and had its grace."""
        with self._lock:
            if self._blind or self._in_grace(now):
                return self._start
            return None

    def state_of(self, last_seen_up, forced_down, now=None):
        """up, down or unknown for a service that last reported at
        ``last_seen_up`` (naive UTC datetime or None)."""
        if forced_down or last_seen_up is None:
            return DOWN
        now = now or _utcnow()
        window = CONF.service_down_time
        if abs((now - last_seen_up).total_seconds()) <= window:
            return UP
        start = self.unknown_since(now)
        if start is not None and last_seen_up >= start - \
                datetime.timedelta(seconds=window):
            return UNKNOWN
        return DOWN

    def reset(self):
        """Tests: forget every window."""
        with self._lock:
            self._blind.clear()
            self._start = self._resumed = None


def _utcnow():
    # The clock service heartbeats are written with (db.session.utcnow).
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


class BrokerLogWatch(logging.Filter):
    """Sees the RabbitMQ driver's connection-lost and reconnected lines
    and tells ``observer``; never drops a record. The logger is
    process-wide; each observer installs its own watch."""

    def __init__(self, observer):
        super().__init__()
        self.observer = observer

    def filter(self, record):
        text = str(record.msg)
        if record.levelno >= logging.ERROR and any(
                mark in text for mark in _CUT_MARKS):
            self.observer.cut(BROKER)
        elif _BACK_MARK in text:
            self.observer.back(BROKER)
        return True

    def install(self):
        """Follow this process's own RabbitMQ connections (idempotent)."""
        logger = logging.getLogger(_RABBIT_LOGGER)
        if self not in logger.filters:
            logger.addFilter(self)

    def remove(self):
        logging.getLogger(_RABBIT_LOGGER).removeFilter(self)
