"""A move whose only possible hosts are "unknown" waits for them.

After a broker outage every compute heartbeat is stale until the hosts
report again; the scheduler then answers HostsUnknown rather than "no
host" (nova_moves.liveness). Nova fails such a move with NoValidHost;
here the conductor asks again, every report_interval, for at most
``[conductor] unknown_hosts_wait`` seconds (and half of the stuck-move
timeout, so the sweep never takes a waiting move for a stuck one), then
fails it as before.

The wait holds the thread that runs the move: an RPC handler or the
move gate's pool, as a queued move's start does.
"""
import time

from oslo_log import log as logging

from nova_moves import conf
from nova_moves import exception

CONF = conf.CONF
LOG = logging.getLogger(__name__)


def wait_bound():
    bound = float(CONF.conductor.unknown_hosts_wait)
    if CONF.stuck_move_timeout > 0:
        bound = min(bound, CONF.stuck_move_timeout / 2.0)
    return bound


class WaitingScheduler:
    """The scheduler client, with select_destinations retried while the
    hosts are unknown; every other method passes through."""

    def __init__(self, scheduler, sleep=time.sleep):
        self._scheduler = scheduler
        self._sleep = sleep

    def __getattr__(self, name):
        return getattr(self._scheduler, name)

    def select_destinations(self, ctxt, request_spec, instance_uuids,
                            return_alternates=True):
        deadline = time.monotonic() + wait_bound()
        interval = max(0.5, min(float(CONF.report_interval), 2.0))
        waited = 0
        while True:
            try:
                return self._scheduler.select_destinations(
                    ctxt, request_spec, instance_uuids,
                    return_alternates=return_alternates)
            except exception.HostsUnknown as exc:
                if time.monotonic() + interval > deadline:
                    LOG.warning('Hosts for %s still unknown after %ss: %s',
                                instance_uuids, waited, exc)
                    raise
                if not waited:
                    LOG.info('Hosts for %s unknown (heartbeats not seen '
                             'since an outage); waiting up to %ss',
                             instance_uuids, wait_bound())
                self._sleep(interval)
                waited += interval
