"""os-quota-sets and quota enforcement, as Nova has them for what this API
creates: instances, cores and ram per project, counted from the servers.

Boot counts and creates the server in one transaction under the
project's quota lock (db/quotas.py: racing boots queue, so the limit
holds exactly). Resize to a larger flavor checks the difference in cores
and ram.
"""
import functools

import flask

from nova_moves.api import request as api_req
from nova_moves.api import microversion
from nova_moves.api import validation
from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves import exception

CONF = conf.CONF
ENFORCED = ('instances', 'cores', 'ram')
# Nova's other quota-set fields: shown with Nova's defaults, stored when
# set, never enforced here (nothing in this API creates those things).
_OTHER = {'key_pairs': 100, 'metadata_items': 128, 'server_groups': 10,
          'server_group_members': 10}
_BEFORE_2_57 = {'injected_files': 5, 'injected_file_content_bytes': 10240,
                'injected_file_path_bytes': 255}
_BEFORE_2_36 = {'fixed_ips': -1, 'floating_ips': 10, 'security_groups': 10,
                'security_group_rules': 20}
MAX_INT = 2 ** 31 - 1
DEFAULT_CLASS = 'default'


class QuotaExceeded(exception.NovaMovesException):
    code = 403
    msg_fmt = ('Quota exceeded for %(overs)s: Requested %(req)s, but '
               'already used %(used)s of %(allowed)s %(overs)s')


def _config_defaults(version):
    values = {name: getattr(CONF.quota, name) for name in ENFORCED}
    values.update(_OTHER)
    if version < '2.57':
        values.update(_BEFORE_2_57)
    if version < '2.36':
        values.update(_BEFORE_2_36)
    return values


def _defaults(version):
    """Every project's defaults: the [quota] options, overridden by the
    ``default`` quota class where it is set (as Nova)."""
    values = _config_defaults(version)
    values.update({k: v for k, v in db_api.quota_class_get(
        DEFAULT_CLASS).items() if k in values})
    return values


def limits(project_id, version='2.95'):
    values = _defaults(version)
    overrides = db_api.quota_get_project(project_id)
    values.update({k: v for k, v in overrides.items() if k in values})
    return values


def check(project_id, deltas):
    """403 when adding ``deltas`` goes over a limit; -1 is unlimited."""
    enforce(limits(project_id), deltas, db_api.quota_usage(project_id))


def enforce(allowed, deltas, used):
    for name in ENFORCED:
        delta = deltas.get(name, 0)
        if delta <= 0 or allowed[name] < 0:
            continue
        if used[name] + delta > allowed[name]:
            raise QuotaExceeded(overs=name, req=delta, used=used[name],
                                allowed=allowed[name])


def create_instance(project_id, deltas, values):
    """The new server's row, if ``deltas`` fit the project's quota."""
    return db_api.instance_create_in_quota(
        values, functools.partial(enforce, limits(project_id), deltas))


def flavor_deltas(flavor, old_flavor=None):
    old = old_flavor or {}
    return {'cores': flavor['vcpus'] - old.get('vcpus', 0),
            'ram': flavor['memory_mb'] - old.get('memory_mb', 0)}


def project(project_id):
    # The path segment is the project; ids longer than the column cannot
    # have a quota (and must not reach the database).
    if not project_id or len(project_id) > 255:
        raise exception.NotFound('Project %s could not be found.'
                                 % project_id[:64])
    return project_id


def _body(project_id, values):
    return flask.jsonify({'quota_set': dict(values, id=project_id)})


def show(project_id):
    project(project_id)
    api_req.authorize('os_compute_api:os-quota-sets:show',
                      {'project_id': project_id})
    return _body(project_id, limits(project_id, api_req.version()))


def detail(project_id):
    project(project_id)
    api_req.authorize('os_compute_api:os-quota-sets:detail',
                      {'project_id': project_id})
    used = db_api.quota_usage(project_id)
    return _body(project_id, {
        name: {'limit': limit, 'in_use': used.get(name, 0), 'reserved': 0}
        for name, limit in limits(project_id, api_req.version()).items()})


def defaults(project_id):
    project(project_id)
    api_req.authorize('os_compute_api:os-quota-sets:defaults',
                      {'project_id': project_id})
    return _body(project_id, _defaults(api_req.version()))


def _field_names(version):
    names = list(ENFORCED) + list(_OTHER)
    if version < '2.57':
        names += list(_BEFORE_2_57)
    if version < '2.36':
        names += list(_BEFORE_2_36)
    return names


def _update_schema(version):
    value = {'type': ['integer', 'string'], 'pattern': '^-?[0-9]{1,10}$',
             'minimum': -1, 'maximum': MAX_INT}
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
    project(project_id)
    api_req.authorize('os_compute_api:os-quota-sets:update',
                      {'project_id': project_id})
    version = api_req.version()
    body = validation.body()['quota_set']
    force = validation.to_bool(body.pop('force', False))
    values = {}
    for name, value in body.items():
        value = int(value)
        if not -1 <= value <= MAX_INT:
            raise exception.ValidationError(
                detail="Invalid input for field '%s'. It must be between -1 "
                       "and %d." % (name, MAX_INT))
        values[name] = value
    used = db_api.quota_usage(project_id)
    for name, value in values.items():
        if not force and 0 <= value < used.get(name, 0):
            raise exception.ValidationError(
                detail='Quota limit %d for %s must be greater than or equal '
                       'to already used and reserved %d.'
                       % (value, name, used[name]))
    for name, value in values.items():
        db_api.quota_set(project_id, name, value)
    # Nova's update answer carries no id (show, detail and defaults do).
    return flask.jsonify({'quota_set': limits(project_id, version)})


def delete(project_id):
    project(project_id)
    api_req.authorize('os_compute_api:os-quota-sets:delete',
                      {'project_id': project_id})
    db_api.quota_delete_project(project_id)
    return flask.Response(status=202)
