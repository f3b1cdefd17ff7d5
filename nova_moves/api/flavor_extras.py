"""Flavor extra specs (/flavors/{id}/os-extra_specs[/{key}]) and flavor
access lists (/flavors/{id}/os-flavor-access, the addTenantAccess and
removeTenantAccess actions), as Nova's.

Extra specs: keys of 1-255 characters from [a-zA-Z0-9-_:. ], values
strings or numbers (stored as their string) of at most 255 characters.
Nova's 2.86 validation of known namespaces is not done: the fake
hypervisor reads none of them."""
import flask

from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves.api import input_guard
from nova_moves.api import validation
from nova_moves.db import api as db_api
from nova_moves import exception

KEY_PATTERN = '^[a-zA-Z0-9-_:. ]{1,255}$'
_SPECS = {'type': 'object', 'additionalProperties': False,
          'patternProperties': {KEY_PATTERN: {
              'type': ['string', 'number'], 'minLength': 0,
              'maxLength': 255}}}
_CREATE_SCHEMA = {'type': 'object', 'required': ['extra_specs'],
                  'additionalProperties': False,
                  'properties': {'extra_specs': _SPECS}}
_UPDATE_SCHEMA = dict(_SPECS, minProperties=1, maxProperties=1)
_TENANT = {'type': 'object', 'required': ['tenant'],
           'additionalProperties': False,
           'properties': {'tenant': {'type': 'string', 'minLength': 1,
                                     'maxLength': 255}}}
_ACTION_SCHEMA = {'type': 'object', 'minProperties': 1, 'maxProperties': 1,
                  'additionalProperties': False,
                  'properties': {'addTenantAccess': _TENANT,
                                 'removeTenantAccess': _TENANT}}
_POLICY = 'os_compute_api:os-flavor-extra-specs:%s'
_ACCESS_POLICY = 'os_compute_api:os-flavor-access'


def _strings(specs):
    """Numbers as their string, bounded as the strings are (JSON schema
    cannot bound a number's length)."""
    result = {}
    for key, value in specs.items():
        if isinstance(value, bool):
            raise exception.ValidationError(
                detail="Invalid input for field 'extra_specs/%s': a boolean "
                       "is not a string or a number." % key)
        text = value if isinstance(value, str) else str(value)
        if len(text) > 255:
            raise exception.ValidationError(
                detail='extra_specs value has more than 255 characters.')
        result[key] = text
    return result


def index(flavor_id):
    api_req.authorize(_POLICY % 'index')
    common.visible_flavor(flavor_id)
    return flask.jsonify(
        {'extra_specs': db_api.flavor_extra_specs_get(flavor_id)})


def show(flavor_id, key):
    api_req.authorize(_POLICY % 'show')
    common.visible_flavor(flavor_id)
    specs = db_api.flavor_extra_specs_get(flavor_id)
    if key not in specs:
        raise exception.NotFound(
            'Flavor %s does not have extra specs with key %s.'
            % (input_guard.excerpt(flavor_id), input_guard.excerpt(key)))
    return flask.jsonify({key: specs[key]})


@validation.schema(_CREATE_SCHEMA)
def create(flavor_id):
    """POST: merge into the flavor's extra specs; answers with the body."""
    api_req.authorize(_POLICY % 'create')
    body = validation.body()
    common.visible_flavor(flavor_id)
    db_api.flavor_extra_specs_update(flavor_id,
                                     _strings(body['extra_specs']))
    return flask.jsonify(body)


@validation.schema(_UPDATE_SCHEMA)
def update(flavor_id, key):
    api_req.authorize(_POLICY % 'update')
    body = validation.body()
    if key not in body:
        raise exception.ValidationError(detail='Request body and URI '
                                               'mismatch')
    common.visible_flavor(flavor_id)
    db_api.flavor_extra_specs_update(flavor_id, _strings(body))
    return flask.jsonify(body)


def delete(flavor_id, key):
    api_req.authorize(_POLICY % 'delete')
    common.visible_flavor(flavor_id)
    try:
        db_api.flavor_extra_spec_delete(flavor_id, key)
    except exception.NotFound:
        raise exception.NotFound(
            'Flavor %s does not have extra specs with key %s.'
            % (input_guard.excerpt(flavor_id), input_guard.excerpt(key)))
    # Nova answers 200, no body.
    return flask.Response(status=200)


def _access_body(flavor_id):
    return flask.jsonify({'flavor_access': [
        {'flavor_id': str(flavor_id), 'tenant_id': project}
        for project in db_api.flavor_access_get(flavor_id)]})


def access_index(flavor_id):
    api_req.authorize(_ACCESS_POLICY)
    flavor = common.visible_flavor(flavor_id)
    if flavor['is_public']:
        raise exception.NotFound('Access list not available for public '
                                 'flavors.')
    return _access_body(flavor['flavorid'])


@validation.schema(_ACTION_SCHEMA)
def action(flavor_id):
    """POST /flavors/{id}/action: addTenantAccess (409 on a public
    flavor or a project already listed) or removeTenantAccess (404 for a
    project not listed)."""
    body = validation.body()
    name, value = next(iter(body.items()))
    project = value['tenant']
    if name == 'addTenantAccess':
        api_req.authorize(_ACCESS_POLICY + ':add_tenant_access')
        flavor = common.visible_flavor(flavor_id)
        if flavor['is_public']:
            raise exception.Conflict(
                reason='Can not add access to a public flavor.')
        db_api.flavor_access_add(flavor['flavorid'], project)
    else:
        api_req.authorize(_ACCESS_POLICY + ':remove_tenant_access')
        flavor = common.visible_flavor(flavor_id)
        try:
            db_api.flavor_access_remove(flavor['flavorid'], project)
        except exception.NotFound:
            raise exception.NotFound(
                'Flavor access not found for %s / %s combination.'
                % (input_guard.excerpt(flavor_id),
                   input_guard.excerpt(project)))
    return _access_body(flavor['flavorid'])
