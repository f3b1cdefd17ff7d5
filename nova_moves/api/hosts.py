"""os-hosts (Nova's, deprecated in 2.43 for os-hypervisors and
os-services; 404 from 2.43): read-only views of the services and compute
nodes, admin only.

- GET /os-hosts[?zone=]: each enabled service but the API's, as
  ``{"host_name", "service" (compute, conductor, scheduler), "zone"}``.
- GET /os-hosts/{host}: the compute host's resources: ``(total)`` (the
  compute node), ``(used_now)`` (its allocations), ``(used_max)`` (the
  flavors of its servers) and one entry per project with servers there.
- PUT /os-hosts/{host} (status / maintenance_mode) and GET
  /os-hosts/{host}/startup|shutdown|reboot: 400 for a bad body, 404 for
  a host with no compute service, else 501 as Nova's libvirt driver
  (enabling a host is os-services' job).
"""
import flask

from nova_moves.api import cell_lists
from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves.api import service_names
from nova_moves.api import validation
from nova_moves import cells
from nova_moves.db import api as db_api
from nova_moves import exception

RULE = 'os_compute_api:os-hosts:%s'
_SWITCH = {'type': 'string', 'enum': ['enable', 'disable', 'Enable',
                                      'Disable', 'ENABLE', 'DISABLE']}
UPDATE_SCHEMA = {
    'type': 'object',
    'properties': {'status': _SWITCH, 'maintenance_mode': _SWITCH},
    'anyOf': [{'required': ['status']}, {'required': ['maintenance_mode']}],
    'additionalProperties': False}
LAST_VERSION = '2.42'


def _served():
    """404 from 2.43, where Nova removed the API."""
    if api_req.version() > LAST_VERSION:
        raise exception.NotFound(
            'The os-hosts API is removed in 2.43; use os-hypervisors and '
            'os-services instead.')


def _topic(service):
    return service_names.api_binary(service['binary']).split('nova-')[-1]


def index():
    _served()
    api_req.authorize(RULE % 'list', {})
    zone = flask.request.args.get('zone')
    hosts = []
    for _cell, service in cell_lists.gather_or_skip(db_api.service_get_all):
        if service['disabled'] or 'api' in _topic(service):
            continue
        entry = {'host_name': service['host'], 'service': _topic(service),
                 'zone': service_names.zone(service)}
        if not zone or entry['zone'] == zone:
            hosts.append(entry)
    return flask.jsonify({'hosts': hosts})


def _compute_host(host_name):
    """The cell of the host's compute service (None: this one), or
    Nova's 404."""
    try:
        cell, found = cell_lists.find(
            db_api.service_get_all, binary=service_names.COMPUTE_BINARY,
            host=host_name)
    except exception.NotFound:
        found = None
    if not found:
        raise exception.NotFound("Host '%s' is not mapped to any cell"
                                 % host_name[:255])
    return cell


def _resource(host, project, cpu, memory_mb, disk_gb):
    return {'resource': {'host': host, 'project': project, 'cpu': cpu,
                         'memory_mb': memory_mb, 'disk_gb': disk_gb}}


def show(host_name):
    _served()
    api_req.authorize(RULE % 'show', {})
    with cells.target(_compute_host(host_name)):
        return _show(host_name)


def _show(host_name):
    node = db_api.compute_node_get_by_host(host_name)
    used = common.host_usage(db_api.provider_usages(), host_name)
    by_project = {}
    for instance in db_api.instance_get_all(host=host_name):
        flavor = instance['flavor']
        totals = by_project.setdefault(instance['project_id'], [0, 0, 0])
        totals[0] += flavor['vcpus']
        totals[1] += flavor['memory_mb']
        totals[2] += flavor['root_gb'] + flavor.get('ephemeral_gb', 0)
    used_max = [sum(t[i] for t in by_project.values()) for i in range(3)]
    resources = [
        _resource(host_name, '(total)', node['vcpus'], node['memory_mb'],
                  node['local_gb']),
        _resource(host_name, '(used_now)', used['VCPU'], used['MEMORY_MB'],
                  used['DISK_GB']),
        _resource(host_name, '(used_max)', *used_max)]
    resources += [_resource(host_name, project, *totals)
                  for project, totals in by_project.items()]
    return flask.jsonify({'host': resources})


@validation.schema(UPDATE_SCHEMA, max_version=LAST_VERSION)
def update(host_name):
    _served()
    api_req.authorize(RULE % 'update', {})
    validation.body()
    _compute_host(host_name)
    raise exception.FeatureNotSupported(
        feature='Host status and maintenance mode (use os-services)',
        host=host_name[:255])


def _power_action(host_name, rule):
    _served()
    api_req.authorize(RULE % rule, {})
    _compute_host(host_name)
    raise exception.FeatureNotSupported(feature='Host power actions',
                                        host=host_name[:255])


def startup(host_name):
    return _power_action(host_name, 'start')


def shutdown(host_name):
    return _power_action(host_name, 'shutdown')


def reboot(host_name):
    return _power_action(host_name, 'reboot')
