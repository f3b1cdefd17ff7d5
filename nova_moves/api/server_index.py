"""GET /servers and /servers/detail (Nova's servers index and detail):
the request's filters, one page of servers from this process's database
or, with cells, from every cell merged (api/server_lists.py), and the
next link."""
import functools
import re

import flask

from nova_moves.api import cell_lists
from nova_moves.api import common
from nova_moves.api import input_guard
from nova_moves.api import query_params
from nova_moves.api import request as api_req
from nova_moves.api import server_lists
from nova_moves.api import server_sort
from nova_moves.api import validation
from nova_moves.api import views
from nova_moves.db import api as db_api
from nova_moves import exception


def _all_tenants(args):
    """Nova's is_all_tenants: present and empty, or a boolean."""
    if 'all_tenants' not in args:
        return False
    value = args.get('all_tenants')
    if value == '':
        return True
    if value.lower() not in validation.BOOLEAN['enum']:
        raise exception.ValidationError(
            detail='Invalid all_tenants value %s: it must be a boolean.'
            % input_guard.excerpt(value))
    return validation.to_bool(value)


# The statuses of Nova's _STATE_MAP: a status filter names some of them.
STATUSES = ('ACTIVE', 'BUILD', 'CONFIRMING_RESIZE', 'DELETED', 'ERROR',
            'HARD_REBOOT', 'MIGRATING', 'PASSWORD', 'PAUSED', 'REBOOT',
            'REBUILD', 'RESCUE', 'RESIZE', 'REVERT_RESIZE', 'SHELVED',
            'SHELVED_OFFLOADED', 'SHUTOFF', 'SOFT_DELETED', 'SUSPENDED',
            'VERIFY_RESIZE')


def refuse_invalid_filters(args):
    """Nova's 400 for a filter on a joined table or a private field, at
    every microversion."""
    for name in sorted(args):
        if name in query_params.JOINED_TABLE_FILTERS or \
                name.startswith('_'):
            raise exception.ValidationError(
                detail='Invalid filter field: %s.' % input_guard.excerpt(name))


def _status_matcher(args):
    """The servers in any of the ``status`` values (case-insensitive);
    none known: nothing below 2.38, a 400 from 2.38 (Nova's)."""
    wanted = {s.upper() for s in args.getlist('status') if s} & set(STATUSES)
    if not wanted:
        if api_req.version() >= '2.38':
            raise exception.ValidationError(detail='Invalid status value')
        return lambda i: False
    return lambda i: views.server_status(i) in wanted


def _matchers(args):
    """The filters applied here rather than in the database: ``status``,
    ``name`` (a regular expression searched in the name, case-sensitive,
    as Nova on PostgreSQL/SQLite), ``reservation_id``, ``image``,
    ``changes-since`` and ``flavor`` (a flavor id)."""
    matchers = []
    if 'status' in args:
        matchers.append(_status_matcher(args))
    name = args.get('name')
    if name:
        try:
            pattern = re.compile(name[:255])
        except re.error:
            raise exception.ValidationError(
                detail='Invalid name filter %s: not a regular expression.'
                % input_guard.excerpt(name))
        matchers.append(
            lambda i: pattern.search(i['display_name'] or '') is not None)
    for arg, column in (('reservation_id', 'reservation_id'),
                        ('image', 'image_ref')):
        if args.get(arg):
            matchers.append(functools.partial(
                lambda column, value, i: i.get(column) == value, column,
                args[arg]))
    since = common.time_arg('changes-since')
    if since:
        matchers.append(lambda i: (i['updated_at'] or i['created_at'])
                        >= since)
    flavor = args.get('flavor')
    if flavor:
        matchers.append(lambda i: str(i['flavor'].get('flavorid')) == flavor)
    return matchers


def _list_instances():
    """One page of the servers the request names, and its limit."""
    ctxt = api_req.context()
    # Nova has a rule per list: /servers and /servers/detail.
    rule = 'os_compute_api:servers:' + (
        'detail' if flask.request.path.endswith('/detail') else 'index')
    api_req.authorize(rule)
    args = flask.request.args
    refuse_invalid_filters(args)
    project = ctxt.project_id
    if _all_tenants(args):
        api_req.authorize(rule + ':get_all_tenants')
        project = args.get('project_id') or args.get('tenant_id')
    host = args.get('host')
    if host and not ctxt.is_admin:
        host = None
    query = dict(project_id=project, host=host,
                 read_deleted=validation.to_bool(args.get('deleted', False))
                 and ctxt.is_admin)
    matchers = _matchers(args)
    order = server_sort.order()
    targets = cell_lists.server_targets(project)
    if targets is not None:
        # Several cells: each read in parallel, merged (api/server_lists).
        # Nova lists no partial records of a sorted list.
        partial_ok = not (matchers or host or query['read_deleted']
                          or server_sort.requested())
        return server_lists.page(targets, query, matchers, partial_ok,
                                 order) + (targets,)
    fetch = functools.partial(db_api.instance_get_all, order=order, **query)
    def key(instance):
        return instance['uuid']
    if matchers:
        instances, limit = common.page(
            [i for i in fetch() if all(match(i) for match in matchers)],
            key=key)
    else:
        instances, limit = common.page(fetch, key=key)
    return instances, (), limit, None, None


def _list_body(items, limit, servers, path):
    # The next page keeps the filters and the sort, as Nova's link.
    return common.list_body('servers', servers, items, limit, path,
                            key=lambda item: item['uuid'])


def index():
    instances, partials, limit, _cells, _targets = _list_instances()
    return _list_body(server_lists.paged(instances, partials), limit,
                      [views.server_brief(i) for i in instances] +
                      [cell_lists.partial_server_brief(p) for p in partials],
                      'servers')


def detail():
    instances, partials, limit, cell_of, targets = _list_instances()
    if targets is not None:
        servers = server_lists.details(targets, instances, cell_of)
    else:
        servers = server_lists.render_details(instances)
    servers += [cell_lists.partial_server_detail(p) for p in partials]
    return _list_body(server_lists.paged(instances, partials), limit, servers,
                      'servers/detail')
