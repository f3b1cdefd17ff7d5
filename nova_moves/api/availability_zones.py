"""os-availability-zone: the zones of the compute services, as Nova lists
them (``openstack availability zone list --compute``). A zone is
available while one of its compute services is enabled; ``detail``
(admin) adds each host's services, and the ``internal`` zone of the
conductors and schedulers."""
import collections

import flask

from nova_moves.api import cell_lists
from nova_moves.api import request as api_req
from nova_moves.api import service_names
from nova_moves.api import servicegroup_cache
from nova_moves.db import api as db_api
from nova_moves import timeutil

INTERNAL = 'internal'


def _zones():
    """zone -> its services, zones in name order (Nova sorts them)."""
    zones = collections.defaultdict(list)
    for _cell, service in cell_lists.gather_or_skip(db_api.service_get_all):
        zones[service_names.zone(service)].append(service)
    return dict(sorted(zones.items()))


def _state(services):
    return {'available': any(not s['disabled'] for s in services)}


def index():
    api_req.authorize('os_compute_api:os-availability-zone:list')
    return flask.jsonify({'availabilityZoneInfo': [
        {'zoneName': zone, 'zoneState': _state(services), 'hosts': None}
        for zone, services in _zones().items() if zone != INTERNAL]})


def _hosts(services):
    hosts = {}
    for service in services:
        up = servicegroup_cache.is_up(service)
        binary = service_names.api_binary(service['binary'])
        hosts.setdefault(service['host'], {})[binary] = {
            'available': up and not service['disabled'],
            'active': not service['disabled'],
            'updated_at': timeutil.api_time(service['updated_at']
                                            or service['last_seen_up'])}
    return hosts


def detail():
    api_req.authorize('os_compute_api:os-availability-zone:detail')
    return flask.jsonify({'availabilityZoneInfo': [
        {'zoneName': zone, 'zoneState': _state(services),
         'hosts': _hosts(services)}
        for zone, services in _zones().items()]})
