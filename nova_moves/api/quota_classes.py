"""os-quota-class-sets: GET and PUT a quota class, Nova's field set per
microversion (the network fields go at 2.50, where server_groups and
server_group_members come; the injected-file fields go at 2.57). Only the
``default`` class is used: its limits are every project's defaults
(api/quota_rules.py). Other class names are stored and shown, as Nova."""
import flask

from nova_moves.api import request as api_req
from nova_moves.api import input_guard
from nova_moves.api import microversion
from nova_moves.api import quota_rules
from nova_moves.api import validation
from nova_moves.db import api as db_api
from nova_moves import exception

_NETWORK = ('fixed_ips', 'floating_ips', 'security_groups',
            'security_group_rules')
_INJECTED = ('injected_files', 'injected_file_content_bytes',
             'injected_file_path_bytes')
_GROUPS = ('server_groups', 'server_group_members')


def fields(version):
    names = set(quota_rules.ENFORCED) | {'metadata_items', 'key_pairs'}
    if version < '2.50':
        names |= set(_NETWORK)
    else:
        names |= set(_GROUPS)
    if version < '2.57':
        names |= set(_INJECTED)
    return names


def _class_name(class_name):
    if not class_name or len(class_name) > 255:
        raise exception.NotFound('Quota class %s could not be found.'
                                 % input_guard.excerpt(class_name))
    return class_name


def _values(class_name, version):
    """The class's limits over the defaults (every field shown)."""
    names = fields(version)
    values = quota_rules.config_defaults('2.1')
    values.update(quota_rules.OTHER)
    values.update(db_api.quota_class_get(quota_rules.DEFAULT_CLASS))
    if class_name != quota_rules.DEFAULT_CLASS:
        values.update(db_api.quota_class_get(class_name))
    return {name: values[name] for name in names}


def show(class_name):
    api_req.authorize('os_compute_api:os-quota-class-sets:show')
    class_name = _class_name(class_name)
    return flask.jsonify({'quota_class_set': dict(
        _values(class_name, api_req.version()), id=class_name)})


def _schema(version):
    value = quota_rules.LIMIT_SCHEMA
    return {'type': 'object', 'required': ['quota_class_set'],
            'additionalProperties': False,
            'properties': {'quota_class_set': {
                'type': 'object', 'additionalProperties': False,
                'properties': {name: value for name in fields(version)}}}}


@validation.schema(_schema(microversion.APIVersion('2.1')),
                   max_version='2.49')
@validation.schema(_schema(microversion.APIVersion('2.50')), '2.50', '2.56')
@validation.schema(_schema(microversion.APIVersion('2.57')),
                   min_version='2.57')
def update(class_name):
    api_req.authorize('os_compute_api:os-quota-class-sets:update')
    class_name = _class_name(class_name)
    version = api_req.version()
    body = validation.body()['quota_class_set']
    values = quota_rules.limit_values(body)
    db_api.quota_class_set(class_name, values)
    # Nova's update answer carries no id.
    return flask.jsonify({'quota_class_set': _values(class_name, version)})
