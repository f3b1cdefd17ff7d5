"""Server action rebuild on the server's own host (202 with the server).

Nova's state rule: vm_state ACTIVE, STOPPED or ERROR with no task_state;
one compare-and-swap (db move_start) sets task_state rebuilding and
records the action 'rebuild', so a server in another state, or one
another request claimed first, is a 409 with nothing written. The new
image and name are written with the claim's outcome known (after it),
before the cast; the compute re-creates the guest from the image
(rebuilding -> rebuild_spawning -> none) and leaves the server ACTIVE,
or SHUTOFF when it was stopped (Nova's rebuild keeps a stopped server
stopped). Nothing moves: same host, same flavor, same allocation.

From 2.54 ``key_name`` sets the server's key pair (the caller's; an
unknown one is Nova's 400 "Invalid key_name provided.", before anything
is claimed) and null unsets it.

Fields Nova's body carries that nova_moves has nowhere to keep
(metadata, personality, accessIPv4/6, user_data, description,
trusted_image_certificates, hostname, preserve_ephemeral) are
validated by Nova's schema for the microversion
and not kept; doc/api-ref/lifecycle.md says so.
"""
import secrets

import flask

from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves.api import guards
from nova_moves.api import server_rules
from nova_moves.api import validation
from nova_moves.api import views
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves.moves import lifecycle as lc_table

POLICY = 'os_compute_api:servers:rebuild'
ROW = lc_table.row('rebuild')
TASK_STATE = ROW.task

_NAME = {'type': 'string', 'minLength': 1, 'maxLength': 255,
         'pattern': r'^(?! )[^\x00-\x1f]*(?<! )$'}
_IMAGE_REF = {'type': 'string', 'minLength': 1, 'maxLength': 255}
_METADATA = {'type': 'object', 'maxProperties': 128,
             'patternProperties': {'^[a-zA-Z0-9-_:. ]{1,255}$': {
                 'type': 'string', 'maxLength': 255}},
             'additionalProperties': False}
_IP = {'type': 'string', 'maxLength': 64}
_BASE = {
    'name': _NAME, 'imageRef': _IMAGE_REF,
    'adminPass': {'type': 'string', 'maxLength': 255},
    'metadata': _METADATA,
    'preserve_ephemeral': validation.BOOLEAN,
    'OS-DCF:diskConfig': {'type': 'string', 'enum': ['AUTO', 'MANUAL']},
    'accessIPv4': _IP, 'accessIPv6': _IP,
    'personality': {'type': 'array', 'maxItems': 5, 'items': {
        'type': 'object', 'additionalProperties': False,
        'properties': {'path': {'type': 'string', 'maxLength': 255},
                       'contents': {'type': 'string', 'maxLength': 65535}}}},
}


def _schema(add=(), drop=()):
    props = {k: v for k, v in _BASE.items() if k not in drop}
    props.update(dict(add))
    return {'type': 'object', 'required': ['rebuild'],
            'additionalProperties': False,
            'properties': {'rebuild': {
                'type': 'object', 'required': ['imageRef'],
                'additionalProperties': False, 'properties': props}}}


_DESC = ('description', {'type': ['string', 'null'], 'maxLength': 255})
_KEY = ('key_name', {'type': ['string', 'null'], 'minLength': 1,
                     'maxLength': 255})
_USER_DATA = ('user_data', {'type': ['string', 'null'], 'maxLength': 65535})
_CERTS = ('trusted_image_certificates', {
    'type': ['array', 'null'], 'minItems': 1, 'maxItems': 50,
    'items': {'type': 'string', 'minLength': 1, 'maxLength': 255}})
_HOSTNAME = ('hostname', {'type': 'string', 'minLength': 2, 'maxLength': 63,
                          'pattern': r'^[a-zA-Z0-9]+[a-zA-Z0-9-]*$'})



# What Nova's rebuild response leaves out below 2.75.
_NOT_BEFORE_275_PREFIXES = ('OS-EXT-AZ:', 'OS-EXT-SRV-ATTR:', 'OS-EXT-STS:',
                            'OS-SRV-USG:')
_NOT_BEFORE_275 = ('config_drive', 'key_name', 'security_groups',
                   'os-extended-volumes:volumes_attached', 'host_status',
                   'server_groups')


def _rebuild_view(server, version):
    """Nova's rebuild answers with the basic server until 2.75 (plus
    key_name from 2.54, user_data from 2.57, server_groups from 2.71);
    from 2.75 with GET /servers/{id}'s whole body, user_data in place of
    OS-EXT-SRV-ATTR:user_data."""
    user_data = server.pop('OS-EXT-SRV-ATTR:user_data', None)
    if version < '2.75':
        kept = dict(server)
        server = {k: v for k, v in kept.items()
                  if not k.startswith(_NOT_BEFORE_275_PREFIXES) and
                  k not in _NOT_BEFORE_275}
        if version >= '2.54':
            server['key_name'] = kept.get('key_name')
        if version >= '2.71':
            server['server_groups'] = kept.get('server_groups', [])
    if version >= '2.57':
        server['user_data'] = user_data
    return server


@validation.schema(_schema(), max_version='2.18')
@validation.schema(_schema([_DESC]), '2.19', '2.53')
@validation.schema(_schema([_DESC, _KEY]), '2.54', '2.56')
@validation.schema(_schema([_DESC, _KEY, _USER_DATA], ['personality']),
                   '2.57', '2.62')
@validation.schema(_schema([_DESC, _KEY, _USER_DATA, _CERTS],
                           ['personality']), '2.63', '2.89')
@validation.schema(_schema([_DESC, _KEY, _USER_DATA, _CERTS, _HOSTNAME],
                           ['personality']), '2.90')
def rebuild(server_id, value):
    body = validation.body()['rebuild']
    instance = common.get_instance(server_id, POLICY)
    compute = api_req.services().compute
    if not compute.can_lifecycle():
        raise guards.LifecycleNotSupported(action='rebuild')
    guards.require_host('rebuild', instance)
    values = {'image_ref': body['imageRef']}
    if 'key_name' in body:
        values['key_name'], values['key_data'] = server_rules.key_pair(
            body['key_name'])
    common.start_move(instance, 'rebuild', TASK_STATE,
                      list(ROW.vm_states), 'rebuild')
    if 'name' in body:
        values['display_name'] = body['name']
    if 'OS-DCF:diskConfig' in body:
        # Nova keeps it on the server (auto_disk_config) and shows it.
        values['auto_disk_config'] = body['OS-DCF:diskConfig'] == 'AUTO'
    before = {'image_ref': instance['image_ref'],
              'display_name': instance['display_name'],
              'auto_disk_config': instance['auto_disk_config'],
              'key_name': instance.get('key_name'),
              'key_data': instance.get('key_data')}
    try:
        instance = db_api.instance_update(
            instance['uuid'], values, expected_task_state=[TASK_STATE])
        compute.rebuild_instance_same_host(
            api_req.context(), instance['host'], instance['uuid'],
            image_ref=body['imageRef'])
    except Exception:
        # Nothing reached the compute: the server is as it was.
        try:
            db_api.instance_update(instance['uuid'], before,
                                   expected_task_state=[TASK_STATE])
        except exception.NovaMovesException:
            pass
        common.release_task_state(instance['uuid'], TASK_STATE)
        raise
    server = _rebuild_view(views.server_detail(instance, show=True),
                           api_req.version())
    # Nova returns the new admin password ([api] enable_instance_password
    # defaults to true): the one given, or a generated one.
    server['adminPass'] = body.get('adminPass') or secrets.token_urlsafe(9)
    response = flask.jsonify({'server': server})
    response.status_code = 202
    return response


ACTIONS = {'rebuild': rebuild}
POLICIES = {'rebuild': POLICY}
