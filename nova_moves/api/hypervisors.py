"""os-hypervisors: compute nodes with their usage from the allocations."""
import datetime
import json

import flask
from oslo_utils import strutils

from nova_moves.api import cell_lists
from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves.api import input_guard
from nova_moves.api import service_names
from nova_moves.api import servicegroup_cache
from nova_moves import cells
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import timeutil

# The database's name of a compute service (its console script's).


def _usage(usages, node):
    return common.host_usage(usages, node['host'])


def _view(node, detail, services, usages, instances, servers=None):
    """``servers``: the node's servers when the request asked for them
    (None: not asked)."""
    version = api_req.version()
    service = services.get(node['host'])
    body = {'id': node['uuid'] if version >= '2.53' else node['id'],
            'hypervisor_hostname': node['hypervisor_hostname'],
            'state': 'up' if service and servicegroup_cache.is_up(service)
            else 'down',
            'status': 'disabled' if service and service['disabled']
            else 'enabled'}
    if servers:
        body['servers'] = [{'name': 'instance-%08x' % i['id'],
                            'uuid': i['uuid']} for i in servers]
    elif servers is not None and version >= '2.75':
        # Nova's 2.75: asked for, the key is there even when empty.
        body['servers'] = []
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


def _render(nodes, detail, with_servers=False):
    services = {s['host']: s for s in
                db_api.service_get_all(binary=service_names.COMPUTE_BINARY)}
    usages = db_api.provider_usages() if detail else {}
    instances = (db_api.instance_get_all()
                 if detail or with_servers else [])
    return [_view(n, detail, services, usages, instances,
                  [i for i in instances if i['host'] == n['host']]
                  if with_servers else None) for n in nodes]


def _nodes():
    """[(cell, node)] of every cell (cell_lists.gather)."""
    return cell_lists.gather_or_skip(db_api.compute_node_get_all)


def _render_pairs(pairs, detail, with_servers=False):
    """_render of each cell's nodes, in its cell."""
    return cell_lists.render_in_cells(
        pairs, lambda nodes: _render(nodes, detail, with_servers))


def _matching(pattern):
    """[(cell, node)] whose hypervisor_hostname contains ``pattern``
    (Nova's LIKE '%pattern%'); none is a 404."""
    nodes = [(c, n) for c, n in _nodes()
             if pattern in n['hypervisor_hostname']]
    if not nodes:
        raise exception.NotFound('No hypervisor matching %s could be '
                                 'found.' % input_guard.excerpt(pattern))
    return nodes


def _with_servers():
    """2.53's ``with_servers`` (a strict boolean, as Nova)."""
    if api_req.version() < '2.53':
        return False
    value = flask.request.args.get('with_servers', 'false')
    try:
        return strutils.bool_from_string(value, strict=True)
    except ValueError:
        raise exception.ValidationError(
            detail='Invalid input for query parameters with_servers. '
                   'Value: %s. It must be a boolean.'
                   % input_guard.excerpt(value))


def _list(detail):
    api_req.authorize('os_compute_api:os-hypervisors:list-detail' if detail
                      else 'os_compute_api:os-hypervisors:list')
    version = api_req.version()
    args = flask.request.args
    pattern = args.get('hypervisor_hostname_pattern') \
        if version >= '2.53' else None
    with_servers = _with_servers()
    if pattern is not None:
        if 'limit' in args or args.get('marker'):
            raise exception.ValidationError(
                detail='Paging over hypervisors with the '
                       'hypervisor_hostname_pattern query parameter is not '
                       'supported.')
        return flask.jsonify({'hypervisors': _render_pairs(
            _matching(pattern), detail, with_servers)})
    nodes = _nodes()
    body = {}
    if version >= '2.33':
        # Nova pages hypervisors from 2.33, by id (uuid from 2.53); the
        # cells' nodes in cell order.
        node_key = _id_key(version)
        def key(pair):
            return node_key(pair[1])
        nodes, limit = common.page(nodes, key=key)
        links = common.next_links(
            nodes, limit, 'os-hypervisors/detail' if detail
            else 'os-hypervisors', key=key)
        if links:
            body['hypervisors_links'] = links
    body['hypervisors'] = _render_pairs(nodes, detail, with_servers)
    return flask.jsonify(body)


def _id_key(version):
    return (lambda node: node['uuid']) if version >= '2.53' else \
        (lambda node: node['id'])


def index():
    return _list(False)


def detail():
    return _list(True)


def _before_2_53(what):
    if api_req.version() >= '2.53':
        raise exception.NotFound(
            'The %s API is removed in 2.53; use GET /os-hypervisors?'
            'hypervisor_hostname_pattern=...%s instead.'
            % (what, '&with_servers=true' if what == 'servers' else ''))


def search(pattern):
    """GET /os-hypervisors/{pattern}/search, below 2.53 as in Nova."""
    _before_2_53('search')
    api_req.authorize('os_compute_api:os-hypervisors:search')
    return flask.jsonify({'hypervisors': _render_pairs(_matching(pattern),
                                                       False)})


def servers(pattern):
    """GET /os-hypervisors/{pattern}/servers, below 2.53 as in Nova."""
    _before_2_53('servers')
    api_req.authorize('os_compute_api:os-hypervisors:servers')
    return flask.jsonify({'hypervisors': _render_pairs(
        _matching(pattern), False, with_servers=True)})


def _node(hypervisor_id):
    """(cell, node) of whichever cell has it."""
    try:
        return cell_lists.find(db_api.compute_node_get, hypervisor_id)
    except exception.ComputeHostNotFound:
        raise exception.NotFound('Hypervisor with ID %s could not be found.'
                                 % hypervisor_id)


def show(hypervisor_id):
    api_req.authorize('os_compute_api:os-hypervisors:show')
    with_servers = _with_servers()
    cell, node = _node(hypervisor_id)
    with cells.target(cell):
        return flask.jsonify({'hypervisor': _render([node], True,
                                                    with_servers)[0]})


def uptime(hypervisor_id):
    """Below 2.88 only (from 2.88 ``uptime`` is in show and detail);
    python-openstackclient's ``hypervisor show`` asks for it."""
    if api_req.version() >= '2.88':
        raise exception.NotFound('The uptime API is removed in 2.88; read '
                                 'uptime from the hypervisor itself.')
    api_req.authorize('os_compute_api:os-hypervisors:uptime')
    cell, node = _node(hypervisor_id)
    with cells.target(cell):
        body = _render([node], False)[0]
        services = db_api.service_get_all(
            binary=service_names.COMPUTE_BINARY, host=node['host'])
    body['uptime'] = _uptime(node, services[0] if services else None)
    return flask.jsonify({'hypervisor': body})


_TOTALS = ('vcpus', 'memory_mb', 'local_gb', 'vcpus_used', 'memory_mb_used',
           'local_gb_used', 'free_ram_mb', 'free_disk_gb', 'current_workload',
           'running_vms', 'disk_available_least')


def statistics():
    """Below 2.88 only, as in Nova: the sums over every hypervisor."""
    if api_req.version() >= '2.88':
        raise exception.NotFound('The statistics API is removed in 2.88; '
                                 'sum GET /os-hypervisors/detail instead.')
    api_req.authorize('os_compute_api:os-hypervisors:statistics')
    rows = _render_pairs(_nodes(), True)
    totals = {key: sum(row[key] for row in rows) for key in _TOTALS}
    return flask.jsonify({'hypervisor_statistics': dict(totals,
                                                        count=len(rows))})
