"""os-simple-tenant-usage (Nova's): what each project's servers used in
a period, from the servers' rows (deleted ones too) and the flavors
they carry.

GET /os-simple-tenant-usage (admin; ``detailed=1`` adds each server)
and GET /os-simple-tenant-usage/{tenant_id} (the project's readers).
``start`` and ``end`` in Nova's formats (``2024-01-31T12:00:00``, with
``.%f``, or ``2024-01-31 12:00:00.%f``; absent: now); ``end`` past now
is now; ``start`` must be before ``end`` (400). From 2.40 ``limit`` and
``marker`` (a server's uuid) page the servers, with a ``next`` link when
a page is full; from 2.75 an unknown query parameter is a 400.

A server counts for the hours between max(start, launched_at) and
min(end, terminated_at); usages are those hours times its flavor's
vcpus, memory_mb and root + ephemeral disk.
"""
import datetime
from urllib import parse

import flask

from nova_moves.api import cell_lists
from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves.api import input_guard
from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves.db import mappings
from nova_moves import exception
from nova_moves import timeutil

RULE = 'os_compute_api:os-simple-tenant-usage:%s'
FORMATS = ('%Y-%m-%dT%H:%M:%S', '%Y-%m-%dT%H:%M:%S.%f',
           '%Y-%m-%d %H:%M:%S.%f')
COLLECTION = 'os-simple-tenant-usage'


def _naive(value):
    if value is None or isinstance(value, datetime.datetime):
        return value
    return datetime.datetime.fromisoformat(value)


def parse_time(text):
    """One of Nova's three formats; '' or absent is now."""
    if not text:
        return timeutil.utcnow()
    for fmt in FORMATS:
        try:
            return datetime.datetime.strptime(text, fmt)
        except ValueError:
            continue
    raise exception.ValidationError(
        detail='Invalid datetime string: Datetime is in invalid format: %s'
               % input_guard.excerpt(text))


def hours_for(instance, start, stop):
    """Nova's _hours_for: the hours of the period the server was up."""
    launched = _naive(instance['launched_at'])
    terminated = _naive(instance['terminated_at'])
    if launched is None or (terminated and terminated < start) or \
            launched > stop:
        return 0
    end = min(stop, terminated) if terminated else stop
    return (end - max(launched, start)).total_seconds() / 3600.0


def server_usage(instance, start, stop, now):
    flavor = instance['flavor'] or {}
    launched = _naive(instance['launched_at'])
    terminated = _naive(instance['terminated_at'])
    uptime = (terminated or now) - launched
    return {'hours': hours_for(instance, start, stop),
            'flavor': flavor.get('name', ''),
            'instance_id': instance['uuid'],
            'name': instance['display_name'] or '',
            'tenant_id': instance['project_id'],
            'memory_mb': flavor.get('memory_mb', 0),
            'local_gb': (flavor.get('root_gb', 0) +
                         flavor.get('ephemeral_gb', 0)),
            'vcpus': flavor.get('vcpus', 0),
            'started_at': timeutil.api_time(launched),
            'ended_at': timeutil.api_time(terminated),
            'state': 'terminated' if terminated else instance['vm_state'],
            'uptime': int(uptime.total_seconds())}


def summarize(servers, start, stop, detailed):
    """The per-project totals of ``servers`` (server_usage dicts), in
    the order their projects first appear."""
    projects = {}
    for server in servers:
        summary = projects.get(server['tenant_id'])
        if summary is None:
            summary = projects[server['tenant_id']] = {
                'tenant_id': server['tenant_id'],
                'total_local_gb_usage': 0, 'total_vcpus_usage': 0,
                'total_memory_mb_usage': 0, 'total_hours': 0,
                'start': timeutil.api_time(start),
                'stop': timeutil.api_time(stop)}
            if detailed:
                summary['server_usages'] = []
        hours = server['hours']
        summary['total_local_gb_usage'] += server['local_gb'] * hours
        summary['total_vcpus_usage'] += server['vcpus'] * hours
        summary['total_memory_mb_usage'] += server['memory_mb'] * hours
        summary['total_hours'] += hours
        if detailed:
            summary['server_usages'].append(server)
    return list(projects.values())


def _check_query(allowed):
    if api_req.version() < '2.75':
        return
    input_guard.refuse_unknown_query(flask.request.args, allowed)


def _usages(project_id, detailed, allowed):
    """(project summaries, servers, limit) of the request's period."""
    paged = api_req.version() >= '2.40'
    _check_query(allowed + (('limit', 'marker') if paged else ()))
    args = flask.request.args
    start = parse_time(args.get('start'))
    stop = parse_time(args.get('end'))
    now = timeutil.utcnow()
    if not start < stop:
        raise exception.ValidationError(
            detail='Invalid start time. The start time cannot occur after '
                   'the end time.')
    stop = min(stop, now)

    def fetch(limit, marker):
        return db_api.instance_get_active_by_window(
            start, stop, project_id=project_id, limit=limit, marker=marker)

    targets = cell_lists.targets()
    if targets is not None:
        instances, limit = _across_cells(targets, fetch, paged)
    elif paged:
        instances, limit = common.page(fetch)
    else:  # Nova's first page, without links
        instances, limit = fetch(conf.CONF.api.max_limit, None), None
    servers = [server_usage(i, start, stop, now) for i in instances]
    return summarize(servers, start, stop, detailed), servers, limit


def _fetch_in(cell, fetch, limit, markers):
    return fetch(limit, markers.get(cell.uuid))


def _across_cells(targets, fetch, paged):
    """Nova's usage across cells: the cells' servers in cell order, each
    cell's in its own order; a marker's page goes on in the marker's cell
    (found by its instance mapping), then the cells after it. The cells
    are read in parallel; a down cell's servers are left out (or 500, by
    [api] list_records_by_skipping_down_cells)."""
    limit, marker = common.limit_and_marker() if paged else (
        conf.CONF.api.max_limit, None)
    markers = {}
    if marker:
        mapping = mappings.instance_mapping_get(marker)
        uuids = [cell.uuid for cell in targets]
        if mapping is None or mapping['cell_uuid'] not in uuids:
            raise exception.MarkerNotFound(
                marker=input_guard.excerpt(marker))
        targets = targets[uuids.index(mapping['cell_uuid']):]
        markers[mapping['cell_uuid']] = marker
    results, down = cell_lists.scatter(targets, _fetch_in, fetch,
                                       max(limit, 1), markers)
    cell_lists.skip_or_fail(down)
    if marker and targets[0].uuid in down:
        raise exception.MarkerNotFound(marker=input_guard.excerpt(marker))
    instances = [i for cell in targets for i in results.get(cell.uuid, ())]
    return instances[:limit], (limit if paged else None)


def _links(servers, limit, path):
    # The link keeps start, end and detailed (common.next_links).
    return common.next_links(servers, limit, path,
                             key=lambda s: s['instance_id'])


def index():
    if flask.request.path.endswith('/'):
        # An empty tenant id (GET .../os-simple-tenant-usage/): Nova
        # routes no such path; the app otherwise ignores trailing slashes.
        raise exception.NotFound('The resource could not be found.')
    api_req.authorize(RULE % 'list', {})
    detailed = flask.request.args.get('detailed', '0') == '1'
    usages, servers, limit = _usages(None, detailed,
                                     ('start', 'end', 'detailed'))
    body = {'tenant_usages': usages}
    links = _links(servers, limit, COLLECTION) if limit else None
    if links:
        body['tenant_usages_links'] = links
    return flask.jsonify(body)


def show(tenant_id):
    api_req.authorize(RULE % 'show', {'project_id': tenant_id})
    usages, servers, limit = _usages(tenant_id, True, ('start', 'end'))
    body = {'tenant_usage': usages[0] if usages else {}}
    links = _links(servers, limit, '%s/%s' % (
        COLLECTION, parse.quote(tenant_id, safe=''))) if limit else None
    if links:
        body['tenant_usage_links'] = links
    return flask.jsonify(body)
