"""os-host-drains (a nova_moves extension, admin only): empty a compute
host for maintenance, server side. POST creates the drain and returns at
once; the conductors run it (conductor/drain.py), so it survives the API
and the operator's terminal. GET shows per-server progress, DELETE
cancels what has not started."""
import json

import flask

from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves.api import drain_plans
from nova_moves.api import service_names
from nova_moves.api import validation
from nova_moves.db import api as db_api
from nova_moves.db import drains as d
from nova_moves import exception
from nova_moves import states
from nova_moves import timeutil

MODES = ('live', 'cold', 'auto')

CREATE_SCHEMA = {
    'type': 'object', 'additionalProperties': False, 'required': ['host'],
    'properties': {
        'host': validation.HOSTNAME,
        'mode': {'type': 'string', 'enum': list(MODES)},
        'target_hosts': {'type': ['array', 'null'],
                         'items': validation.HOSTNAME, 'uniqueItems': True},
        'force_down_if_dead': validation.BOOLEAN,
        'check': validation.BOOLEAN}}


def _time(value):
    return timeutil.api_time(value) if value else None


def _counts(servers):
    counts = {state: 0 for state in (d.PENDING, d.MOVING, d.DONE,
                                     d.FAILED)}
    for server in servers:
        counts[server['state']] = counts.get(server['state'], 0) + 1
    counts['total'] = len(servers)
    return counts


def _server_view(server, migrations, queue):
    migration = migrations.get(server['migration_uuid']) or {}
    entry = queue.get(server['migration_uuid']) or {}
    return {'server_uuid': server['instance_uuid'],
            'state': server['state'],
            'action': server['action'],
            'attempts': server['attempts'],
            'reason': server['reason'],
            'migration_uuid': server['migration_uuid'],
            'migration_status': migration.get('status'),
            'dest_compute': migration.get('dest_compute'),
            'queued_at': _time(entry.get('created_at')),
            'admitted_at': _time(entry.get('admitted_at')),
            'released_at': _time(entry.get('released_at')),
            'updated_at': _time(server['updated_at'])}


def view(drain, detail=True):
    servers = drain.get('servers') or []
    body = {'id': drain['uuid'], 'host': drain['host'],
            'mode': drain['mode'], 'target_hosts': drain['target_hosts'],
            'force_down_if_dead': drain['force_down_if_dead'],
            'status': drain['status'], 'conductor': drain['owner'],
            'created_at': _time(drain['created_at']),
            'started_at': _time(drain['started_at']),
            'finished_at': _time(drain['finished_at']),
            'updated_at': _time(drain['updated_at']),
            'estimate': drain_plans.compared(
                json.loads(drain.get('estimate') or 'null'), drain)}
    if 'servers' in drain:
        counts = _counts(servers)
        uuids = [s['migration_uuid'] for s in servers if s['migration_uuid']]
        migrations = {m['uuid']: m for m in
                      db_api.migration_get_all(uuids=uuids)} if uuids else {}
        counts['queued'] = sum(1 for m in migrations.values()
                               if m['status'] == states.M_QUEUED and any(
                                   s['migration_uuid'] == m['uuid'] and
                                   s['state'] == d.MOVING for s in servers))
        body['counts'] = counts
        if detail:
            queue = {q['migration_uuid']: q for q in
                     db_api.move_queue_get_all(migration_uuids=uuids)}
            body['servers'] = [_server_view(s, migrations, queue)
                               for s in servers]
    return body


@validation.schema(CREATE_SCHEMA)
def create():
    api_req.authorize('nova_moves:os-host-drains:create')
    body = validation.body()
    host = body['host']
    if not db_api.service_get_all(binary=service_names.COMPUTE_BINARY,
                                  host=host):
        raise exception.ComputeHostNotFound(host=host)
    targets = body.get('target_hosts') or None
    for target in targets or ():
        if target == host:
            raise exception.ValidationError(
                detail='target_hosts cannot include the drained host.')
        if not db_api.service_get_all(
                binary=service_names.COMPUTE_BINARY, host=target):
            raise exception.Invalid(
                reason='Target host %s is not a compute host.' % target)
    ctxt = api_req.context()
    mode = body.get('mode') or 'auto'
    force = validation.to_bool(body.get('force_down_if_dead', False))
    service = db_api.service_get_by_host_and_binary(
        host, service_names.COMPUTE_BINARY)
    if validation.to_bool(body.get('check', False)):
        # The plan only: nothing is written, no host is disabled.
        return flask.jsonify({'host_drain_plan': drain_plans.build(
            host, mode, force, targets, service)})
    plan = drain_plans.build(host, mode, force, targets, service,
                             destinations=False)
    drain = db_api.drain_create(
        host, mode, target_hosts=targets, force_down_if_dead=force,
        user_id=ctxt.user_id, project_id=ctxt.project_id)
    drain = db_api.drain_update(drain['uuid'], {'estimate': json.dumps({
        key: plan[key] for key in ('eta_seconds', 'estimated_finish',
                                   'concurrency', 'movable')})})
    return common.accepted({'host_drain': view(drain)})


def index():
    api_req.authorize('nova_moves:os-host-drains:index')
    args = flask.request.args
    drains, limit = common.page(
        db_api.drain_get_all(status=args.get('status'),
                             host=args.get('host')),
        key=lambda drain: drain['uuid'])
    return common.list_body(
        'host_drains', [view(db_api.drain_get(x['uuid']), detail=False)
                        for x in drains],
        drains, limit, 'os-host-drains', key=lambda drain: drain['uuid'])


def show(drain_id):
    api_req.authorize('nova_moves:os-host-drains:show')
    return flask.jsonify({'host_drain': view(db_api.drain_get(drain_id))})


def delete(drain_id):
    """Cancel: moves under way finish, pending servers stay."""
    api_req.authorize('nova_moves:os-host-drains:delete')
    drain = db_api.drain_get(drain_id)
    if drain['status'] == d.CANCELLING:
        return common.accepted()
    try:
        db_api.drain_update(drain['uuid'], {'status': d.CANCELLING},
                            expected_status=[d.RUNNING])
    except exception.Conflict:
        raise exception.Conflict(
            reason='host drain %s is already %s' % (
                drain['uuid'], db_api.drain_get(drain_id)['status']))
    return common.accepted()
