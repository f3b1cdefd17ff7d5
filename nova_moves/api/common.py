"""Helpers shared by the API views: looking up servers the caller may
see, recording instance actions, links and paging."""
import datetime

import flask

from nova_moves.api import request as api_req
from nova_moves.api import input_guard
from nova_moves.api import query
from nova_moves import cells
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves.scheduler import hints as scheduler_hints


def get_instance(server_id, rule='os_compute_api:servers:show',
                 brief=False):
    """The server, or 404 when it does not exist or the caller's project
    does not own it (and they are not admin). ``brief``: only its
    db_api.INSTANCE_BRIEF columns, for a handler that needs no more."""
    try:
        instance = (db_api.instance_get_brief if brief
                    else db_api.instance_get)(server_id)
    except exception.InstanceNotFound:
        raise exception.InstanceNotFound(instance_id=server_id)
    ctxt = api_req.context()
    if not ctxt.is_admin and instance['project_id'] != ctxt.project_id:
        raise exception.InstanceNotFound(instance_id=server_id)
    api_req.authorize(rule, {'project_id': instance['project_id']})
    return instance


def action_of(instance, action):
    """The instance action of this request (db action_start's
    arguments)."""
    ctxt = api_req.context()
    return {'instance_uuid': instance['uuid'], 'action': action,
            'request_id': ctxt.request_id, 'user_id': ctxt.user_id,
            'project_id': ctxt.project_id}


def record_action(instance, action):
    """Record the instance action before any RPC, keyed by request id."""
    return db_api.action_start(**action_of(instance, action))


def check_state(instance, method, vm_states, task_states=(None,)):
    if instance['vm_state'] not in vm_states:
        raise exception.InstanceInvalidState(
            method=method, instance_uuid=instance['uuid'], attr='vm_state',
            state=instance['vm_state'])
    if instance['task_state'] not in task_states:
        raise exception.InstanceInvalidState(
            method=method, instance_uuid=instance['uuid'],
            attr='task_state', state=instance['task_state'])


def claim_task_state(instance, method, task_state, vm_states,
                     extra_values=None):
    """Compare-and-swap task_state None -> ``task_state`` (and vm_state
    still one of ``vm_states``): the one writer that wins starts the
    move, every other request gets 409."""
    values = {'task_state': task_state}
    values.update(extra_values or {})
    try:
        return db_api.instance_update(instance['uuid'], values,
                                      expected_task_state=[None],
                                      expected_vm_state=vm_states)
    except exception.UnexpectedTaskState as exc:
        raise exception.InstanceInvalidState(
            method=method, instance_uuid=instance['uuid'], attr='task_state',
            state=exc.kwargs.get('actual'))


def start_move(instance, method, task_state, vm_states, action,
               migration=None):
    """db move_start: task_state None -> ``task_state``, the instance
    action and the migration row (``migration`` values) in one
    transaction; losing the compare-and-swap is a 409 and writes nothing.
    Returns the migration (None without one)."""
    ctxt = api_req.context()
    if migration is not None:
        migration = dict(migration, user_id=ctxt.user_id,
                         project_id=ctxt.project_id)
    try:
        return db_api.move_start(
            instance['uuid'], task_state, vm_states, action,
            ctxt.request_id, ctxt.user_id, ctxt.project_id,
            migration=migration, read_back=False)['migration']
    except exception.UnexpectedTaskState as exc:
        raise exception.InstanceInvalidState(
            method=method, instance_uuid=instance['uuid'], attr='task_state',
            state=exc.kwargs.get('actual'))


def abandon_move(instance_uuid, task_state, migration=None,
                 instance_values=None):
    """The cast that starts a move failed, so nothing else ran: db
    move_failed (the one undo) puts the server back, without a fault."""
    try:
        if migration is not None:
            db_api.move_failed(migration['uuid'],
                               expected_status=[migration['status']],
                               instance_values=instance_values)
        else:
            db_api.move_failed(instance_uuid=instance_uuid,
                               task_states=[task_state])
    except exception.NovaMovesException:
        pass


def release_task_state(instance_uuid, task_state):
    """Undo claim_task_state when the request fails before any RPC."""
    try:
        db_api.instance_update(instance_uuid, {'task_state': None},
                               expected_task_state=[task_state])
    except exception.NovaMovesException:
        pass


def base_url():
    """[api] link_prefix when set: behind a proxy the request's Host
    header is whatever the client chose, and must not name our links."""
    from nova_moves import conf
    prefix = conf.CONF.api.link_prefix
    return (prefix or flask.request.host_url).rstrip('/')


def links(collection, ident):
    base = base_url()
    return [{'rel': 'self', 'href': '%s/v2.1/%s/%s' % (base, collection,
                                                        ident)},
            {'rel': 'bookmark', 'href': '%s/%s/%s' % (base, collection,
                                                      ident)}]


def limit_and_marker():
    """Nova's paging parameters: ``limit`` a non-negative integer capped
    by [api] max_limit (absent: max_limit; 0: an empty page, as Nova's
    min(max_limit, limit)), ``marker`` the last item of the page before
    ('' is no marker)."""
    args = flask.request.args
    limit = query.int_arg('limit')
    from nova_moves import conf
    max_limit = conf.CONF.api.max_limit
    limit = max_limit if limit is None else min(limit, max_limit)
    return limit, args.get('marker') or None


def page(source, key=lambda item: item['id']):
    """One page of a list, the one way every list the API serves is paged.

    ``source`` is the whole list, filtered and in order (paged here, the
    marker matched against ``key``), or ``fetch(limit, marker)`` paging in
    the database and raising MarkerNotFound (MigrationNotFound for
    migrations) for an unknown marker. Returns (items, limit); an unknown
    marker is a 400 naming a short prefix of it."""
    limit, marker = limit_and_marker()
    try:
        if callable(source):
            # limit 0 still looks the marker up, as Nova's query does.
            items = source(limit=max(limit, 1), marker=marker)
        else:
            items = _after_marker(source, key, marker)
    except (exception.MarkerNotFound, exception.MigrationNotFound):
        raise exception.MarkerNotFound(marker=input_guard.excerpt(marker))
    return list(items)[:limit], limit


def _after_marker(items, key, marker):
    if marker is None:
        return items
    for index, item in enumerate(items):
        if str(key(item)) == marker:
            return items[index + 1:]
    raise exception.MarkerNotFound(marker=marker)


def next_links(items, limit, path, key=lambda item: item['id'], query=None):
    """Nova's ``*_links``: a full page links to the next one. The link
    keeps the request's other parameters (filters, sort), as Nova's
    _get_next_link, unless ``query`` (encoded, each followed by '&')
    names what it keeps."""
    if not limit or len(items) < limit:
        return None
    from urllib import parse
    if query is None:
        kept = [(k, v) for k, v in flask.request.args.items(multi=True)
                if k not in ('limit', 'marker')]
        query = parse.urlencode(kept) + '&' if kept else ''
    return [{'rel': 'next', 'href': '%s/v2.1/%s?%slimit=%d&marker=%s' % (
        base_url(), path, query, limit,
        parse.quote(str(key(items[-1])), safe=''))}]


def list_body(name, shown, items, limit, path, key, links_name=None):
    """A paged list's response: ``{name: shown}`` and, when ``items``
    (the rows paged, in their order) fill the page, Nova's next link
    keyed by ``key`` under ``links_name`` (default ``<name>_links``)."""
    body = {name: shown}
    links = next_links(items, limit, path, key=key)
    if links:
        body[links_name or name + '_links'] = links
    return flask.jsonify(body)


def visible_flavor(flavor_id):
    """The flavor, or FlavorNotFound: a private flavor is the admin's
    and its access list's projects', as Nova hides one from projects
    without access."""
    try:
        flavor = db_api.flavor_get(flavor_id)
    except exception.FlavorNotFound:
        raise exception.FlavorNotFound(
            flavor_id=input_guard.excerpt(str(flavor_id)))
    ctxt = api_req.context()
    if not flavor['is_public'] and not ctxt.is_admin and \
            ctxt.project_id not in db_api.flavor_access_get(flavor_id):
        raise exception.FlavorNotFound(
            flavor_id=input_guard.excerpt(str(flavor_id)))
    return flavor


def flavor_ref(ref):
    """The flavor a body's ``flavorRef`` names, or a 400 quoting only a
    short prefix of it (a 100 KB ref is not echoed)."""
    # Flavors are API-level: the API's own database, also for a server
    # in another cell (a move carries the flavor it reads here).
    with cells.target(None):
        try:
            flavor = db_api.flavor_get(ref)
        except exception.FlavorNotFound:
            flavor = None
        # A private flavor is the admin's and its access list's
        # projects', as Nova hides it from projects without access.
        ctxt = api_req.context()
        if flavor is not None and not (flavor['is_public'] or ctxt.is_admin):
            if ctxt.project_id not in db_api.flavor_access_get(ref):
                flavor = None
    if flavor is None:
        raise exception.Invalid(reason='Flavor %s could not be found.'
                                % input_guard.excerpt(str(ref)))
    # The copy a server keeps (and a move carries) has no description:
    # no server view shows it, and 65535 bytes of it, JSON-escaped, did
    # not fit MySQL's TEXT column with the rest (the boot was a 400).
    flavor.pop('description', None)
    return flavor


def time_arg(name):
    """A changes-since/changes-before query parameter as naive UTC ISO
    8601, or None; anything unparsable is a 400 naming the parameter."""
    value = flask.request.args.get(name)
    if not value:
        return None
    try:
        parsed = datetime.datetime.fromisoformat(value.replace('Z', '+00:00'))
        if parsed.tzinfo is not None:
            # OverflowError: 9999-12-31T23:59:59-14:00 is past year 9999
            # in UTC.
            parsed = parsed.astimezone(datetime.timezone.utc).replace(
                tzinfo=None)
    except (ValueError, OverflowError):
        raise exception.ValidationError(
            detail="Invalid input for query parameters %s. Value: %s. It "
                   "must be an ISO 8601 date-time from year 1 to 9999 in "
                   "UTC." % (name, input_guard.excerpt(value)))
    return parsed.isoformat()


json_body = api_req.json_body


def host_usage(usages, host):
    """Used VCPU, MEMORY_MB and DISK_GB over the providers of ``host``'s
    tree (``usages``: db provider_usages()); os-hypervisors, os-hosts."""
    used = {'VCPU': 0, 'MEMORY_MB': 0, 'DISK_GB': 0}
    for entry in usages.values():
        if entry['root'] != host:
            continue
        for rc in used:
            used[rc] += entry['usages'].get(rc, 0)
    return used


def no_content():
    return flask.Response(status=204)


def accepted(body=None):
    if body is None:
        return flask.Response(status=202)
    response = flask.jsonify(body)
    response.status_code = 202
    return response


def request_spec(instance):
    """What the scheduler needs to place ``instance`` elsewhere (its
    current host ignored)."""
    return scheduler_hints.request_spec(
        instance, [instance['host']] if instance['host'] else [],
        user_id=instance['user_id'] or api_req.context().user_id)


def require_host_for(flag, host):
    if not host:
        raise exception.ValidationError(
            detail='The target host must be given when %s is true.' % flag)


def dry_run_verdict(instance, host, method, vm_states, reasons=()):
    """The ``check`` extension of every move (Nova blueprint "Check the
    destination host when migrating"): 200 with {valid, reasons}: the
    server's state (what would be a 409), then
    ``reasons`` the caller knows of, then the scheduler's filters and the
    host's free resources. No action, no state, no migration is written."""
    reasons = list(reasons)
    try:
        check_state(instance, method, vm_states)
    except exception.InstanceInvalidState as exc:
        reasons.insert(0, exc.message)
    verdict = api_req.services().scheduler.check_destination(
        api_req.context(), request_spec(instance), host)
    reasons += verdict['reasons']
    return flask.jsonify({'valid': bool(verdict['valid']) and not reasons,
                          'reasons': reasons})
