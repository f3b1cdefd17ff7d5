"""POST /os-host-drains with ``"check": true``: the drain's plan, changing
nothing (nova_moves/drain_plan.py says how the figures are made). A real
drain keeps the same estimate (without destinations) so that its report
can set it against what happened."""
import datetime

from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves import drain_plan
from nova_moves import timeutil

CONF = conf.CONF


def _flavor_key(kind, instance):
    # Evacuations record the flavor's flavorid, the others its id.
    flavor = instance['flavor']
    return str(flavor.get('flavorid') if kind == drain_plan.EVACUATE
               else flavor.get('id'))


def _slots():
    return max(1, min(CONF.conductor.max_outbound_migrations_per_host,
                      CONF.conductor.max_concurrent_migrations_per_cluster))


def build(host, mode, force_down_if_dead, target_hosts, service,
          destinations=True):
    """The plan of draining ``host`` now (a dict, the API's body)."""
    host_up = service is not None and db_api.service_is_up(service)
    history = drain_plan.History(db_api.move_durations())
    instances = sorted(db_api.instance_get_all(host=host),
                       key=lambda i: i['created_at'])
    servers, moves, specs = [], [], []
    for instance in instances:
        kind, why = drain_plan.move_kind(mode, force_down_if_dead, host_up,
                                         instance['vm_state'], host)
        entry = {'id': instance['uuid'], 'name': instance['display_name'],
                 'vm_state': instance['vm_state'], 'kind': kind,
                 'destination': None, 'estimate_seconds': None,
                 'estimate_basis': None, 'reasons': [why] if why else []}
        if kind is not None:
            seconds, basis = history.estimate(kind, _flavor_key(kind,
                                                                instance))
            entry['estimate_seconds'] = round(seconds, 2)
            entry['estimate_basis'] = basis
            moves.append(history.move(kind, _flavor_key(kind, instance)))
            spec = common.request_spec(instance)
            spec['ignore_hosts'] = [host]
            spec['target_hosts'] = target_hosts
            specs.append(spec)
        servers.append(entry)
    planned = None
    if destinations and specs:
        scheduler = api_req.services().scheduler
        if scheduler.can_plan():
            planned = scheduler.plan_destinations(api_req.context(), specs)
    for entry in servers:
        if planned is not None and entry['id'] in planned:
            entry['destination'] = planned[entry['id']]['host']
            entry['reasons'] += planned[entry['id']]['reasons']
    slots = _slots()
    # A host sends this many live migrations at once (the computes'
    # option, read from the configuration the API shares with them).
    compute_slots = min(slots, CONF.max_concurrent_live_migrations or slots)
    eta = drain_plan.eta(moves, slots, compute_slots,
                         CONF.conductor.queue_poll_interval,
                         history.handoff())
    return {'host': host, 'mode': mode,
            'force_down_if_dead': force_down_if_dead, 'host_up': host_up,
            'concurrency': slots, 'live_concurrency': compute_slots,
            'eta_seconds': round(eta, 1),
            'estimated_finish': timeutil.api_time(
                timeutil.utcnow() + datetime.timedelta(seconds=eta)),
            'movable': len(moves),
            'unmovable': len(servers) - len(moves),
            'servers': servers}


def compared(estimate, drain):
    """The stored estimate of a drain with what happened once it ended:
    ``actual_seconds`` and ``error_percent`` (estimate vs actual)."""
    if not estimate:
        return None
    body = dict(estimate)
    if drain.get('started_at') and drain.get('finished_at'):
        started = datetime.datetime.fromisoformat(drain['started_at'])
        finished = datetime.datetime.fromisoformat(drain['finished_at'])
        actual = (finished - started).total_seconds()
        body['actual_seconds'] = round(actual, 1)
        if actual > 0:
            body['error_percent'] = round(
                100.0 * (estimate['eta_seconds'] - actual) / actual, 1)
    return body
