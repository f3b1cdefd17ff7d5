"""POST /os-server-external-events (Nova's): other services (Neutron,
Cinder, Cyborg) tell Nova that something happened to a server.

Each event is answered with its own ``code`` and ``status``: 200
completed; 404 unknown (or deleted) server; 422 a server on no host; 400
an event whose ``tag`` is required and missing. The response is 200
when every event was accepted, 207 otherwise, even when none was (Nova
answered 404 then until its bug 1855752). The names accepted grow with
the microversion, as Nova's schema.

nova_moves has no network, volume or accelerator service behind its
servers: an accepted event is logged and changes nothing.
"""
import copy

import flask
from oslo_log import log as logging

from nova_moves.api import cell_lists
from nova_moves.api import request as api_req
from nova_moves.api import validation
from nova_moves.db import api as db_api

LOG = logging.getLogger(__name__)
RULE = 'os_compute_api:os-server-external-events:create'
STATUSES = ['failed', 'completed', 'in-progress']
# The events whose tag names what they are about (a port, a volume...).
TAG_REQUIRED = ('volume-extended', 'power-update',
                'accelerator-request-bound')
_UUID = {'type': 'string', 'pattern': '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?'
                                      '[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?'
                                      '[0-9a-fA-F]{12}$'}


def _schema(names):
    return {
        'type': 'object',
        'properties': {'events': {
            'type': 'array', 'minItems': 1,
            'items': {
                'type': 'object',
                'properties': {
                    'name': {'type': 'string', 'enum': list(names)},
                    'server_uuid': copy.deepcopy(_UUID),
                    'status': {'type': 'string', 'enum': STATUSES},
                    'tag': {'type': 'string', 'maxLength': 255}},
                'required': ['name', 'server_uuid'],
                'additionalProperties': False}}},
        'required': ['events'],
        'additionalProperties': False}


# (first microversion, event name Nova accepts from it)
_NAMES = [('2.1', 'network-changed'), ('2.1', 'network-vif-plugged'),
          ('2.1', 'network-vif-unplugged'), ('2.1', 'network-vif-deleted'),
          ('2.51', 'volume-extended'), ('2.76', 'power-update'),
          ('2.82', 'accelerator-request-bound'),
          ('2.93', 'volume-reimaged')]


def names_at(version):
    return [name for since, name in _NAMES if version >= since]


@validation.schema(_schema(names_at('2.1')), max_version='2.50')
@validation.schema(_schema(names_at('2.51')), '2.51', '2.75')
@validation.schema(_schema(names_at('2.76')), '2.76', '2.81')
@validation.schema(_schema(names_at('2.82')), '2.82', '2.92')
@validation.schema(_schema(names_at('2.93')), '2.93')
def create():
    api_req.authorize(RULE, {})
    events = validation.body()['events']
    uuids = sorted({event['server_uuid'] for event in events})
    instances = {i['uuid']: i for _cell, i in cell_lists.gather_or_skip(
        db_api.instance_get_all, uuids=uuids)}
    answered, code = [], 200
    for event in events:
        event = dict(event)
        instance = instances.get(event['server_uuid'])
        if instance is None:
            event.update(status='failed', code=404)
        elif event['name'] in TAG_REQUIRED and event.get('tag') is None:
            event.update(status='failed', code=400)
        elif not instance['host']:
            event.update(status='failed', code=422)
        else:
            event.update(status='completed', code=200)
            LOG.info('External event %s:%s for %s on %s (nothing to do '
                     'here)', event['name'], event.get('tag'),
                     event['server_uuid'], instance['host'])
        if event['code'] != 200:
            code = 207
        answered.append(event)
    response = flask.jsonify({'events': answered})
    response.status_code = code
    return response

