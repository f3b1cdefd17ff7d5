"""os-services: list, enable/disable, force down (the evacuate gate)."""
import flask

from nova_moves.api import cell_lists
from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves.api import input_guard
from nova_moves.api import service_names
from nova_moves.api import servicegroup_cache
from nova_moves.api import validation
from nova_moves import cells
from nova_moves.db import api as db_api
from nova_moves.db import mappings
from nova_moves import exception
from nova_moves import timeutil

UPDATE_SCHEMA = {
    'type': 'object', 'additionalProperties': False, 'minProperties': 1,
    'properties': {
        'status': {'type': 'string', 'enum': ['enabled', 'disabled']},
        'disabled_reason': {'type': 'string', 'minLength': 1,
                            'maxLength': 255},
        'forced_down': validation.BOOLEAN}}

_LEGACY_SCHEMA = {
    'type': 'object', 'additionalProperties': False,
    'required': ['host', 'binary'],
    'properties': {'host': validation.HOSTNAME,
                   'binary': {'type': 'string', 'minLength': 1},
                   'disabled_reason': {'type': 'string', 'minLength': 1,
                                       'maxLength': 255},
                   'forced_down': validation.BOOLEAN}}


def view(service):
    version = api_req.version()
    up = servicegroup_cache.is_up(service)
    body = {'id': service['uuid'] if version >= '2.53' else service['id'],
            'binary': service_names.api_binary(service['binary']),
            'host': service['host'],
            'zone': service_names.zone(service),
            'status': 'disabled' if service['disabled'] else 'enabled',
            'state': 'up' if up else 'down',
            'updated_at': timeutil.api_time(service['updated_at']
                                            or service['last_seen_up']),
            'disabled_reason': service['disabled_reason']}
    if version >= '2.11':
        body['forced_down'] = service['forced_down']
    return body


def index():
    """Every cell's services, in cell order. A down cell's computes are
    listed, from 2.69, as Nova's partial records (from its host
    mappings); below, left out (or 500, by [api]
    list_records_by_skipping_down_cells)."""
    api_req.authorize('os_compute_api:os-services:list')
    args = flask.request.args
    binary = service_names.db_binary(args.get('binary'))
    pairs, down = cell_lists.gather(db_api.service_get_all, binary=binary,
                                    host=args.get('host'))
    body = [view(s) for _, s in pairs]
    if down and cell_lists.cell_down_support(api_req.version()):
        if binary in (None, service_names.COMPUTE_BINARY):
            body += [cell_lists.partial_service(mapping)
                     for mapping in mappings.host_mapping_list()
                     if mapping['cell_uuid'] in down and
                     args.get('host') in (None, mapping['host'])]
    else:
        cell_lists.skip_or_fail(down)
    return flask.jsonify({'services': body})


def _find(service_id):
    """(cell, service) by id or uuid, in whichever cell has it."""
    return cell_lists.find(db_api.service_get, service_id)


def _values_from(body):
    values = {}
    if 'status' in body:
        values['disabled'] = body['status'] == 'disabled'
        values['disabled_reason'] = (body.get('disabled_reason')
                                     if values['disabled'] else None)
    elif 'disabled_reason' in body:
        raise exception.ValidationError(
            detail='disabled_reason is only allowed with status disabled.')
    if 'forced_down' in body:
        values['forced_down'] = validation.to_bool(body['forced_down'])
    return values


@validation.schema(_LEGACY_SCHEMA, max_version='2.52')
@validation.schema(UPDATE_SCHEMA, min_version='2.53')
def update(service_id):
    """2.53+: PUT /os-services/{uuid}; older: PUT /os-services/{action}."""
    api_req.authorize('os_compute_api:os-services:update')
    version = api_req.version()
    body = common.json_body()
    if version < '2.53':
        return _legacy_update(service_id, body, version)
    validation.body()
    if body.get('status') != 'disabled' and 'disabled_reason' in body:
        raise exception.ValidationError(
            detail='Specifying a disabled_reason is only supported when the '
                   'status is disabled.')
    cell, service = _get_by_uuid(service_id)
    values = _values_from(body)
    if 'forced_down' in values and \
            service['binary'] != service_names.COMPUTE_BINARY:
        raise exception.ValidationError(
            detail='Updating a %s service is not supported; only '
                   'nova-compute services can be forced down.'
                   % service_names.api_binary(service['binary']))
    service = cell_lists.in_cell(cell, db_api.service_update, service['id'],
                                 values)
    return flask.jsonify({'service': view(service)})


def _get_by_uuid(service_id):
    try:
        return _find(service_id)
    except exception.ServiceNotFound:
        raise exception.ServiceNotFound(service_id=service_id)


def _legacy_update(action, body, version):
    actions = {'enable', 'disable', 'disable-log-reason'}
    if version >= '2.11':
        actions.add('force-down')
    if action not in actions:
        raise exception.NotFound('Unknown action %s' % action)
    validation.body()
    try:
        cell, services = cell_lists.find(
            db_api.service_get_all,
            binary=service_names.db_binary(body['binary']), host=body['host'])
    except exception.NotFound:
        services = []
    if not services:
        raise exception.NotFound('Service %s on host %s could not be found.'
                                 % (input_guard.excerpt(body['binary']),
                                    body['host']))
    service = services[0]
    if action == 'force-down':
        if 'forced_down' not in body:
            raise exception.ValidationError(
                detail="'forced_down' is a required property")
        forced = validation.to_bool(body['forced_down'])
        cell_lists.in_cell(cell, db_api.service_update, service['id'],
                           {'forced_down': forced})
        return flask.jsonify({'service': {
            'host': body['host'], 'binary': body['binary'],
            'forced_down': forced}})
    disabled = action != 'enable'
    reason = body.get('disabled_reason') if disabled else None
    if action == 'disable-log-reason' and not reason:
        raise exception.ValidationError(
            detail="'disabled_reason' is a required property")
    cell_lists.in_cell(cell, db_api.service_update, service['id'],
                       {'disabled': disabled, 'disabled_reason': reason})
    result = {'host': body['host'], 'binary': body['binary'],
              'status': 'disabled' if disabled else 'enabled'}
    if reason:
        result['disabled_reason'] = reason
    return flask.jsonify({'service': result})


def delete(service_id):
    api_req.authorize('os_compute_api:os-services:delete')
    cell, service = _find(service_id)
    with cells.target(cell):
        if service['binary'] == service_names.COMPUTE_BINARY and \
                db_api.instance_get_all(host=service['host'], limit=1):
            raise exception.Conflict(
                reason='Unable to delete compute service %s: it still hosts '
                       'servers.' % service['host'])
        db_api.service_delete(service['id'])
    return common.no_content()
