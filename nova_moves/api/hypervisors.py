"""os-hypervisors: compute nodes with their usage from the allocations."""
import datetime
import json

import flask

from nova_moves.api import app as api_app
from nova_moves.api import servicegroup_cache
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import timeutil


def _usage(usages, node):
    """Used and capacity per resource class over the node's providers."""
    used = {'VCPU': 0, 'MEMORY_MB': 0, 'DISK_GB': 0}
    for entry in usages.values():
        if entry['root'] != node['host']:
            continue
        for rc in used:
            used[rc] += entry['usages'].get(rc, 0)
    return used


def _view(node, detail, services, usages, instances):
    version = api_app.version()
    service = services.get(node['host'])
    body = {'id': node['uuid'] if version >= '2.53' else node['id'],
            'hypervisor_hostname': node['hypervisor_hostname'],
            'state': 'up' if service and servicegroup_cache.is_up(service)
            else 'down',
            'status': 'disabled' if service and service['disabled']
            else 'enabled'}
    if not detail:
        return body
    body.update({'hypervisor_type': node['hypervisor_type'],
                 'hypervisor_version': node['hypervisor_version'],
                 'host_ip': node['host_ip'],
                 'service': {'host': node['host'],
                             'id': (service['uuid'] if version >= '2.53'
                                    else service['id']) if service else None,
                             'disabled_reason': service['disabled_reason']
                             if service else None}})
    if version >= '2.88':
        body['uptime'] = _uptime(node, service)
        return body
    used = _usage(usages, node)
    running = sum(1 for i in instances if i['node'] == node['host'])
    cpu_info = {'model': node['cpu_model'], 'vendor': 'Intel',
                'arch': 'x86_64', 'features': [],
                'topology': {'cores': node['vcpus'], 'threads': 1,
                             'sockets': 1}}
    body.update({
        'vcpus': node['vcpus'], 'memory_mb': node['memory_mb'],
        'local_gb': node['local_gb'], 'vcpus_used': used['VCPU'],
        'memory_mb_used': used['MEMORY_MB'],
        'local_gb_used': used['DISK_GB'],
        'free_ram_mb': node['memory_mb'] - used['MEMORY_MB'],
        'free_disk_gb': node['local_gb'] - used['DISK_GB'],
        'current_workload': 0, 'running_vms': running,
        'disk_available_least': node['local_gb'] - used['DISK_GB'],
        'cpu_info': cpu_info if version >= '2.28' else json.dumps(cpu_info)})
    return body


def _uptime(node, service):
    """The fake hypervisor's ``uptime(1)`` line (what libvirt reports):
    up since its compute service registered; None when it is down."""
    if not service or not servicegroup_cache.is_up(service):
        return None
    now = timeutil.utcnow()
    since = datetime.datetime.fromisoformat(service['created_at'])
    minutes = max(0, int((now - since).total_seconds() // 60))
    days, minutes = divmod(minutes, 24 * 60)
    return ' %s up %s%d:%02d,  0 users,  load average: 0.00, 0.00, 0.00' % (
        now.strftime('%H:%M:%S'), '%d days, ' % days if days else '',
        minutes // 60, minutes % 60)


def _render(nodes, detail):
    services = {s['host']: s for s in
                db_api.service_get_all(binary='nova-moves-compute')}
    usages = db_api.provider_usages() if detail else {}
    instances = db_api.instance_get_all() if detail else []
    return [_view(n, detail, services, usages, instances) for n in nodes]


def _nodes():
    nodes = db_api.compute_node_get_all()
    pattern = flask.request.args.get('hypervisor_hostname_pattern')
    if pattern:
        nodes = [n for n in nodes if pattern in n['hypervisor_hostname']]
        if not nodes:
            raise exception.NotFound('No hypervisor matching %s could be '
                                     'found.' % pattern)
    return nodes


def index():
    api_app.authorize('os_compute_api:os-hypervisors:list')
    return flask.jsonify({'hypervisors': _render(_nodes(), False)})


def detail():
    api_app.authorize('os_compute_api:os-hypervisors:list-detail')
    return flask.jsonify({'hypervisors': _render(_nodes(), True)})


def _node(hypervisor_id):
    try:
        return db_api.compute_node_get(hypervisor_id)
    except exception.ComputeHostNotFound:
        raise exception.NotFound('Hypervisor with ID %s could not be found.'
                                 % hypervisor_id)


def show(hypervisor_id):
    api_app.authorize('os_compute_api:os-hypervisors:show')
    return flask.jsonify({'hypervisor': _render([_node(hypervisor_id)],
                                                True)[0]})


def uptime(hypervisor_id):
    """Below 2.88 only (from 2.88 ``uptime`` is in show and detail);
    python-openstackclient's ``hypervisor show`` asks for it."""
    if api_app.version() >= '2.88':
        raise exception.NotFound('The uptime API is removed in 2.88; read '
                                 'uptime from the hypervisor itself.')
    api_app.authorize('os_compute_api:os-hypervisors:uptime')
    node = _node(hypervisor_id)
    body = _render([node], False)[0]
    services = db_api.service_get_all(binary='nova-moves-compute',
                                      host=node['host'])
    body['uptime'] = _uptime(node, services[0] if services else None)
    return flask.jsonify({'hypervisor': body})


_TOTALS = ('vcpus', 'memory_mb', 'local_gb', 'vcpus_used', 'memory_mb_used',
           'local_gb_used', 'free_ram_mb', 'free_disk_gb', 'current_workload',
           'running_vms', 'disk_available_least')


def statistics():
    """Below 2.88 only, as in Nova: the sums over every hypervisor."""
    if api_app.version() >= '2.88':
        raise exception.NotFound('The statistics API is removed in 2.88; '
                                 'sum GET /os-hypervisors/detail instead.')
    api_app.authorize('os_compute_api:os-hypervisors:statistics')
    rows = _render(db_api.compute_node_get_all(), True)
    totals = {key: sum(row[key] for row in rows) for key in _TOTALS}
    return flask.jsonify({'hypervisor_statistics': dict(totals,
                                                        count=len(rows))})


def register(app):
    app.add_url_rule('/v2.1/os-hypervisors', 'hypervisors_index', index,
                     methods=['GET'])
    app.add_url_rule('/v2.1/os-hypervisors/detail', 'hypervisors_detail',
                     detail, methods=['GET'])
    app.add_url_rule('/v2.1/os-hypervisors/statistics',
                     'hypervisors_statistics', statistics, methods=['GET'])
    app.add_url_rule('/v2.1/os-hypervisors/<hypervisor_id>',
                     'hypervisors_show', show, methods=['GET'])
    app.add_url_rule('/v2.1/os-hypervisors/<hypervisor_id>/uptime',
                     'hypervisors_uptime', uptime, methods=['GET'])
