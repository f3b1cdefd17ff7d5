"""Server metadata: /servers/{id}/metadata[/{key}], within Nova's limits
(api/server_rules.py, which boot checks too): keys of 1-255 characters
from [a-zA-Z0-9-_:. ], string values of at most 255, at most the
project's metadata_items quota (maxServerMeta, 128 by default) items in
all; going over is a 403, as Nova's OverQuota."""
import flask

from nova_moves.api import common
from nova_moves.api import guards
from nova_moves.api import server_rules
from nova_moves.api import validation
from nova_moves.db import api as db_api
from nova_moves import exception

_SET_SCHEMA = {'type': 'object', 'required': ['metadata'],
               'additionalProperties': False,
               'properties': {'metadata': server_rules.METADATA}}
_ITEM_SCHEMA = {'type': 'object', 'required': ['meta'],
                'additionalProperties': False,
                'properties': {'meta': dict(server_rules.METADATA,
                                            minProperties=1,
                                            maxProperties=1)}}


def _instance(server_id, action):
    instance = common.get_instance(
        server_id, 'os_compute_api:server-metadata:%s' % action)
    if action not in ('index', 'show'):
        # Nova's check_instance_lock on metadata writes: 409 unless admin.
        guards.check_not_locked(instance)
    return instance


def index(server_id):
    instance = _instance(server_id, 'index')
    return flask.jsonify({'metadata': db_api.instance_metadata_get(
        instance['uuid'])})


def _update(server_id, action, replace):
    instance = _instance(server_id, action)
    body = validation.body()
    metadata = db_api.instance_metadata_update(
        instance['uuid'], body['metadata'], replace=replace,
        check=server_rules.metadata_checker(instance['project_id']))
    return flask.jsonify({'metadata': metadata})


@validation.schema(_SET_SCHEMA)
def create(server_id):
    """POST: merge into the server's metadata."""
    return _update(server_id, 'create', replace=False)


@validation.schema(_SET_SCHEMA)
def update_all(server_id):
    """PUT: replace the server's metadata."""
    return _update(server_id, 'update_all', replace=True)


def show(server_id, key):
    instance = _instance(server_id, 'show')
    metadata = db_api.instance_metadata_get(instance['uuid'])
    if key not in metadata:
        raise exception.NotFound('Metadata item was not found')
    return flask.jsonify({'meta': {key: metadata[key]}})


@validation.schema(_ITEM_SCHEMA)
def update(server_id, key):
    instance = _instance(server_id, 'update')
    body = validation.body()['meta']
    if key not in body:
        raise exception.ValidationError(detail='Request body and URI '
                                               'mismatch')
    db_api.instance_metadata_update(instance['uuid'], body,
                                    check=server_rules.metadata_checker(instance['project_id']))
    return flask.jsonify({'meta': body})


def delete(server_id, key):
    instance = _instance(server_id, 'delete')
    db_api.instance_metadata_delete(instance['uuid'], key)
    return common.no_content()
