"""A move whose only possible hosts are "unknown" waits for them; a
scheduler call whose reply a broker outage lost is asked again.

After a broker outage every compute heartbeat is stale until the hosts
report again; the scheduler then answers HostsUnknown rather than "no
host" (nova_moves.liveness). Nova fails such a move with NoValidHost;
here the conductor asks again, every report_interval, for at most
``[conductor] unknown_hosts_wait`` seconds (and half of the stuck-move
timeout, so the sweep never takes a waiting move for a stuck one), then
fails it as before.

The select_destinations call of a move caught by a broker kill times
out although its request (a durable queue) is handled once the broker
is back: the reply queue died with the node. It is asked again within
the same bound. A request claims with the server's consumer generation,
so of the two only one claim lands; when the second finds the claim
already made (ConsumerGenerationConflict) and the server holds an
allocation on a host the request allows, that host is the answer.

The wait holds the thread that runs the move: an RPC handler or the
move gate's pool, as a queued move's start does.
"""
import time

from oslo_log import log as logging
import oslo_messaging as messaging

from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves import exception

CONF = conf.CONF
LOG = logging.getLogger(__name__)


def wait_bound():
    bound = float(CONF.conductor.unknown_hosts_wait)
    if CONF.stuck_move_timeout > 0:
        bound = min(bound, CONF.stuck_move_timeout / 2.0)
    return bound


def _claimed(spec, instance_uuids):
    """The selection an earlier call of this request claimed, or None."""
    if len(instance_uuids) != 1 or spec.get('consumer_generation') is None:
        return None
    uuid = instance_uuids[0]
    roots = db_api.allocation_root_hosts(uuid)
    if len(roots) != 1:
        return None
    (host, root_uuid), = roots.items()
    wanted = (spec.get('requested_destination') or {}).get('host')
    if host in (spec.get('ignore_hosts') or ()) or \
            (wanted and host != wanted) or \
            (spec.get('target_hosts') and host not in spec['target_hosts']):
        return None  # the server's own allocation: the move went back
    return {'host': host, 'nodename': host, 'compute_node_uuid': root_uuid,
            'allocation_request': db_api.allocations_get(uuid)}


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
        timed_out = False
        while True:
            try:
                return self._scheduler.select_destinations(
                    ctxt, request_spec, instance_uuids,
                    return_alternates=return_alternates)
            except messaging.MessagingTimeout:
                if time.monotonic() > deadline:
                    raise
                LOG.warning('select_destinations for %s timed out (a '
                            'broker outage loses replies); asking again',
                            instance_uuids)
                timed_out = True
            except exception.ConsumerGenerationConflict:
                claimed = timed_out and _claimed(request_spec,
                                                 instance_uuids)
                if not claimed:
                    raise
                LOG.info('The claim for %s of a call whose reply was lost '
                         'landed on %s', instance_uuids, claimed['host'])
                return [[claimed]]
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
