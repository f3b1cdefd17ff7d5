"""os-instance-actions: what was asked of a server and how each step went.
Tracebacks and real hosts are admin-only; non-admins see events from 2.51."""
import functools

import flask

from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import faultinfo
from nova_moves import timeutil


def _action_view(action, version):
    body = {'action': action['action'],
            'instance_uuid': action['instance_uuid'],
            'message': action['message'],
            'project_id': action['project_id'],
            'request_id': action['request_id'],
            'start_time': timeutil.api_time(action['start_time']),
            'user_id': action['user_id']}
    if version >= '2.58':
        body['updated_at'] = timeutil.api_time(action['updated_at'])
    return body


def _event_view(event, version, project_id, show_details):
    body = {'event': event['event'],
            'start_time': timeutil.api_time(event['start_time']),
            'finish_time': timeutil.api_time(event['finish_time']),
            'result': event['result']}
    if show_details:
        body['traceback'] = event['traceback']
    if version >= '2.62':
        if show_details:
            body['host'] = event['host'] or ''
        body['hostId'] = api_req.host_id(project_id, event['host'])
    if version >= '2.84':
        # The owner's view of an Error event's message (rows written
        # before it was masked at write time included).
        body['details'] = event['details'] if show_details else \
            faultinfo.owner_text(event['details'], (event['host'],))
    return body


def index(server_id):
    version = api_req.version()
    instance = _instance(server_id, 'os_compute_api:os-instance-actions:list')
    fetch = functools.partial(
        db_api.actions_get, instance['uuid'],
        changes_since=common.time_arg('changes-since') if version >= '2.58'
        else None,
        changes_before=common.time_arg('changes-before')
        if version >= '2.66' else None)
    if version >= '2.58':
        actions, limit = common.page(fetch)
    else:
        actions, limit = fetch(), None
    # Nova (2.58+): a full page links to the next one by request id.
    return common.list_body(
        'instanceActions', [_action_view(a, version) for a in actions],
        actions, limit, 'servers/%s/os-instance-actions' % instance['uuid'],
        key=lambda action: action['request_id'], links_name='links')


def _instance(server_id, rule):
    # Deleted servers keep their actions visible (Nova does the same from
    # 2.21).
    try:
        instance = db_api.instance_get(server_id, read_deleted=True)
    except exception.InstanceNotFound:
        raise
    ctxt = api_req.context()
    if not ctxt.is_admin and instance['project_id'] != ctxt.project_id:
        raise exception.InstanceNotFound(instance_id=server_id)
    api_req.authorize(rule, {'project_id': instance['project_id']})
    return instance


def show(server_id, request_id):
    version = api_req.version()
    instance = _instance(server_id, 'os_compute_api:os-instance-actions:show')
    action = db_api.action_get_by_request_id(instance['uuid'], request_id)
    if action is None:
        raise exception.ActionNotFound(request_id=request_id,
                                       instance_uuid=server_id)
    body = _action_view(action, version)
    target = {'project_id': instance['project_id']}
    show_details = api_req.can(
        'os_compute_api:os-instance-actions:events:details', target)
    if version >= '2.51' or api_req.can(
            'os_compute_api:os-instance-actions:events', target):
        body['events'] = [
            _event_view(e, version, instance['project_id'], show_details)
            for e in db_api.action_events_get(action['id'])]
    return flask.jsonify({'instanceAction': body})
