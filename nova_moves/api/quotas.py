"""os-quota-sets: show, detail, defaults, update and delete a project's
quota (the rules it sets are quota_rules.py's)."""
import flask

from nova_moves.api import request as api_req
from nova_moves.api import microversion
from nova_moves.api import quota_rules
from nova_moves.api import validation
from nova_moves.db import api as db_api
from nova_moves import exception

def _body(project_id, values):
    return flask.jsonify({'quota_set': dict(values, id=project_id)})


def show(project_id):
    quota_rules.project(project_id)
    api_req.authorize('os_compute_api:os-quota-sets:show',
                      {'project_id': project_id})
    return _body(project_id,
                 quota_rules.limits(project_id, api_req.version()))


def detail(project_id):
    quota_rules.project(project_id)
    api_req.authorize('os_compute_api:os-quota-sets:detail',
                      {'project_id': project_id})
    used = quota_rules.usage(project_id)
    return _body(project_id, {
        name: {'limit': limit, 'in_use': used.get(name, 0), 'reserved': 0}
        for name, limit in quota_rules.limits(
            project_id, api_req.version()).items()})


def defaults(project_id):
    quota_rules.project(project_id)
    api_req.authorize('os_compute_api:os-quota-sets:defaults',
                      {'project_id': project_id})
    return _body(project_id, quota_rules.defaults(api_req.version()))


def _field_names(version):
    names = list(quota_rules.ENFORCED) + list(quota_rules.OTHER)
    if version < '2.57':
        names += list(quota_rules.BEFORE_2_57)
    if version < '2.36':
        names += list(quota_rules.BEFORE_2_36)
    return names


def _update_schema(version):
    value = quota_rules.LIMIT_SCHEMA
    props = {name: value for name in _field_names(
        microversion.APIVersion(version))}
    props['force'] = validation.BOOLEAN
    return {'type': 'object', 'required': ['quota_set'],
            'additionalProperties': False,
            'properties': {'quota_set': {
                'type': 'object', 'properties': props,
                'additionalProperties': False}}}


@validation.schema(_update_schema('2.1'), max_version='2.35')
@validation.schema(_update_schema('2.36'), '2.36', '2.56')
@validation.schema(_update_schema('2.57'), min_version='2.57')
def update(project_id):
    quota_rules.project(project_id)
    api_req.authorize('os_compute_api:os-quota-sets:update',
                      {'project_id': project_id})
    version = api_req.version()
    body = validation.body()['quota_set']
    force = validation.to_bool(body.pop('force', False))
    values = quota_rules.limit_values(body)
    used = quota_rules.usage(project_id)
    for name, value in values.items():
        if not force and 0 <= value < used.get(name, 0):
            raise exception.ValidationError(
                detail='Quota limit %d for %s must be greater than or equal '
                       'to already used and reserved %d.'
                       % (value, name, used[name]))
    for name, value in values.items():
        db_api.quota_set(project_id, name, value)
    # Nova's update answer carries no id (show, detail and defaults do).
    return flask.jsonify({'quota_set': quota_rules.limits(project_id,
                                                          version)})


def delete(project_id):
    quota_rules.project(project_id)
    api_req.authorize('os_compute_api:os-quota-sets:delete',
                      {'project_id': project_id})
    db_api.quota_delete_project(project_id)
    return flask.Response(status=202)
