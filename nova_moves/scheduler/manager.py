"""The scheduler: allocation candidates from the database, filters,
weighers, and an atomic claim for the chosen host."""
import contextlib
import itertools
import random

from oslo_log import log as logging
import oslo_messaging as messaging

from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import liveness
from nova_moves.scheduler import filters as scheduler_filters
from nova_moves.scheduler import hints as scheduler_hints
from nova_moves import servicegroup

CONF = conf.CONF
LOG = logging.getLogger(__name__)
# Hosts whose services one query reads while walking the candidates.
_CHUNK = 50


def _with_hint_hosts(spec):
    """``spec`` plus, for its ``same_host``/``different_host`` hints, the
    hosts the servers named are on (where they or an unsettled migration
    of theirs hold an allocation, as for a server group's members)."""
    hints = spec.get('scheduler_hints')
    if not hints:
        return spec
    resolved = {}
    for name, servers in hints.items():
        if name in scheduler_hints.HOST_HINTS:
            resolved[name] = {'servers': servers, 'hosts': set(
                db_api.server_group_member_hosts({'members': servers}))}
    return dict(spec, hint_hosts=resolved) if resolved else spec


def _then(ordered, more):
    """``ordered``, then each of ``more``, appended to ``ordered`` as it
    is tried (so the alternates are taken from every host tried)."""
    yield from list(ordered)
    for state in more:
        ordered.append(state)
        yield state


class SchedulerManager:
    target = messaging.Target(version='1.2')

    def __init__(self, service_group=None, coordinator=None):
        self.servicegroup = service_group or servicegroup.ServiceGroup()
        # Serialises placing members of one hard-policy server group
        # across schedulers (tooz); None in tests without one.
        self.coordinator = coordinator
        self.filters = scheduler_filters.get_filters(
            CONF.scheduler.enabled_filters)
        # Host resources in memory, refreshed from provider generations
        # per request instead of re-reading every provider's rows.
        self.placement = db_api.PlacementView()

    def endpoints(self):
        return [self]

    def load_placement(self):
        """Read every provider into the view before taking requests, so
        the first request does not pay for it (~1 s at 10,000 hosts);
        if the database is not there yet, the first request will."""
        try:
            self.placement.refresh()
        except Exception:
            LOG.warning('Could not load the placement view at start-up',
                        exc_info=True)

    def post_start_hook(self):
        # Sees an outage of the heartbeats while it lasts, not only at
        # the next request.
        self.servicegroup.start()

    def cleanup_host(self):
        self.servicegroup.stop()

    def _host_states(self, candidates):
        """Host states of ``candidates`` (an iterable, maybe lazy), in
        chunks: services are read and liveness checked only for the hosts
        the request actually looks at."""
        candidates = iter(candidates)
        while True:
            chunk = list(itertools.islice(candidates, _CHUNK))
            if not chunk:
                return
            services = {s['host']: s for s in db_api.service_get_all(
                binary='nova-moves-compute',
                hosts=[c['host'] for c in chunk])}
            for candidate in chunk:
                service = services.get(candidate['host'])
                state = (self.servicegroup.state(service) if service
                         else liveness.DOWN)
                yield dict(candidate, service=service,
                           up=state == liveness.UP, liveness=state)

    def _passing(self, states, spec, unknown):
        """The states that pass the filters; ``unknown`` collects those
        that would pass if their host's liveness were known up."""
        for state in states:
            if not scheduler_filters.reject_reasons(state, spec,
                                                    self.filters):
                yield state
            elif state['liveness'] == liveness.UNKNOWN and \
                    not scheduler_filters.reject_reasons(
                        dict(state, up=True), spec, self.filters):
                unknown.append(state['host'])

    def _weighed(self, states):
        mult = CONF.scheduler.ram_weight_multiplier
        return sorted(states, key=lambda s: -mult * s['free'].get(
            'MEMORY_MB', 0))

    def _ordered_candidates(self, resources, spec):
        """Candidates in weighed order, lazily where the view keeps that
        order (a positive RAM multiplier and no host list): the first
        hosts that pass the filters are then found without looking at
        every host."""
        hosts = self._hosts_filter(spec)
        group = spec.get('group')
        if group and group['policy'].startswith('soft-'):
            return self._soft_group_order(self._weighed(
                self.placement.candidates(resources, hosts)), group)
        if hosts is None and CONF.scheduler.ram_weight_multiplier > 0:
            return self.placement.most_free_ram_first(resources)
        return self._weighed(self.placement.candidates(resources, hosts))

    @staticmethod
    def _soft_group_order(states, group):
        """Soft (anti-)affinity weighs, never filters: hosts with fewer
        (soft-anti-affinity) or more (soft-affinity) members first, the
        RAM order kept among equals."""
        sign = 1 if group['policy'] == 'soft-anti-affinity' else -1
        return sorted(states, key=lambda s: sign * group['hosts'].get(
            s['host'], 0))

    @staticmethod
    def _with_group(spec, instance_uuid, planned=None, group=False):
        """``spec`` plus the server group of ``instance_uuid`` and where
        its other members are, for the group filters and weighers;
        ``planned`` ({instance: host}) adds members a plan already
        placed; ``group``: the group, when the caller read it. The
        hosts of its host hints too (``_with_hint_hosts``)."""
        spec = _with_hint_hosts(spec)
        if group is False:
            group = db_api.server_group_of_instance(instance_uuid)
        if group is None:
            return spec
        hosts = db_api.server_group_member_hosts(
            group, exclude_instance=instance_uuid)
        for member, host in (planned or {}).items():
            if member in group['members'] and member != instance_uuid \
                    and host:
                hosts[host] = hosts.get(host, 0) + 1
        return dict(spec, group={
            'uuid': group['uuid'], 'policy': group['policy'],
            'max_server_per_host': group['rules'].get(
                'max_server_per_host'),
            'hosts': hosts})

    def plan_destinations(self, ctxt, request_specs):
        """1.1: the host each request would get now (the first that
        passes the filters in weighed order), claiming nothing."""
        planned = {}
        result = {}
        for spec in request_specs:
            uuid = spec['instance_uuid']
            spec = self._with_group(spec, uuid, planned)
            resources = db_api.resources_from_flavor(spec['flavor'])
            host = next((s['host'] for s in self._host_states(
                self._ordered_candidates(resources, spec))
                if not scheduler_filters.reject_reasons(
                    s, spec, self.filters)), None)
            planned[uuid] = host
            result[uuid] = {'host': host, 'reasons': [] if host else [
                'No valid host: no host passes the filters with room '
                'for the flavor now.']}
        return result

    def _group_lock(self, group):
        """Placing a member of a hard-policy ``group`` reads where the
        others are and claims in one critical section per group, so two
        members placed at once by two schedulers cannot both take the
        same host (Nova's late affinity check, done before the claim
        here)."""
        if group is None or group['policy'].startswith('soft-') or \
                self.coordinator is None:
            return contextlib.nullcontext()
        return self.coordinator.lock('server-group-%s' % group['uuid'])

    @staticmethod
    def _selection(state):
        return {'host': state['host'], 'nodename': state['host'],
                'compute_node_uuid': state['root_uuid'],
                'allocation_request': state['allocations']}

    def _hosts_filter(self, spec):
        wanted = (spec.get('requested_destination') or {}).get('host')
        return [wanted] if wanted else (spec.get('target_hosts') or None)

    # Unknown hosts are waited on by the caller: no traceback logged.
    @messaging.expected_exceptions(exception.HostsUnknown)
    def select_destinations(self, ctxt, request_spec, instance_uuids,
                            return_alternates=True):
        resources = db_api.resources_from_flavor(request_spec['flavor'])
        results = []
        for instance_uuid in instance_uuids:
            # Read once for a server in no group or a soft one; a hard
            # group's members are read again inside its lock.
            group = db_api.server_group_of_instance(instance_uuid)
            hard = group is not None and \
                not group['policy'].startswith('soft-')
            with self._group_lock(group):
                results.append(self._select_one(
                    resources, self._with_group(
                        request_spec, instance_uuid,
                        group=False if hard else group),
                    instance_uuid, return_alternates))
        return results

    def _select_one(self, resources, request_spec, instance_uuid,
                    return_alternates):
        unknown = []
        passing = self._passing(self._host_states(
            self._ordered_candidates(resources, request_spec)),
            request_spec, unknown)
        # Enough hosts for the random subset and the alternates; more
        # are pulled only if every claim on these is lost.
        ordered = list(itertools.islice(passing, max(
            CONF.scheduler.host_subset_size,
            CONF.scheduler.max_attempts)))
        if not ordered and unknown:
            # Not "no host": hosts that could not report while this
            # service (or the broker) was away. The conductor waits.
            raise exception.HostsUnknown(hosts=', '.join(sorted(unknown)))
        if not ordered:
            raise exception.NoValidHost(
                reason='There are not enough hosts available.')
        subset = max(1, min(CONF.scheduler.host_subset_size,
                            len(ordered)))
        first = random.randrange(subset)
        ordered.insert(0, ordered.pop(first))
        chosen = None
        for state in _then(ordered, passing):
            try:
                # A move's claim states the consumer generation its
                # conductor read: if the move was rolled back while
                # this request waited, the claim fails (and the
                # ConsumerGenerationConflict reaches the caller)
                # instead of moving the server's allocation.
                db_api.allocations_replace(
                    instance_uuid, state['allocations'],
                    consumer_generation=request_spec.get(
                        'consumer_generation'),
                    checked=self.placement.checked(state['root_id'],
                                                   state['allocations']))
            except exception.ConsumerGenerationConflict:
                LOG.warning('Not claiming for %s: its move was rolled '
                            'back meanwhile', instance_uuid)
                raise
            except exception.AllocationFailed as exc:
                # Another claim got there first; try the next host.
                LOG.debug('Claim on %s lost: %s', state['host'], exc)
                continue
            chosen = state
            break
        if chosen is None:
            raise exception.NoValidHost(
                reason='Every candidate host was claimed concurrently.')
        selections = [self._selection(chosen)]
        if return_alternates:
            alternates = [s for s in ordered if s is not chosen]
            selections += [self._selection(s) for s in
                           alternates[:CONF.scheduler.max_attempts - 1]]
        LOG.info('Selected %s for %s (alternates: %s)', chosen['host'],
                 instance_uuid, [s['host'] for s in selections[1:]])
        return selections

    def check_destination(self, ctxt, request_spec, host):
        resources = db_api.resources_from_flavor(request_spec['flavor'])
        services = db_api.service_get_all(binary='nova-moves-compute',
                                          host=host)
        if not services:
            return {'valid': False,
                    'reasons': ['Compute host %s could not be found.' % host]}
        service = services[0]
        verdict = self.servicegroup.state(service)
        state = {'host': host, 'service': service,
                 'up': verdict == liveness.UP, 'liveness': verdict}
        if request_spec.get('instance_uuid'):
            request_spec = self._with_group(request_spec,
                                            request_spec['instance_uuid'])
        reasons = scheduler_filters.reject_reasons(state, request_spec,
                                                   self.filters)
        reasons += db_api.explain_unfit(resources, host)
        # unknown: the host may only be unable to report (liveness.py).
        return {'valid': not reasons, 'reasons': reasons,
                'unknown': verdict == liveness.UNKNOWN}
