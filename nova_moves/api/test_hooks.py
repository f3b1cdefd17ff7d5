"""Admin-only fault injection, served only with [api] enable_test_hooks:
PUT /v2.1/os-nova-moves-test/computes/{host}/faults
{"fail_operations": ["spawn", ...], "operation_seconds": {"spawn": 0.2}}"""
import flask

from nova_moves.api import app as api_app
from nova_moves.api import common
from nova_moves.api import validation
from nova_moves import conf
from nova_moves.db import api as db_api

SCHEMA = {'type': 'object', 'additionalProperties': False,
          'required': ['fail_operations'],
          'properties': {
              'fail_operations': {'type': 'array',
                                  'items': {'type': 'string'}},
              'operation_seconds': {'type': 'object',
                                    'additionalProperties': {
                                        'type': 'number', 'minimum': 0}}}}


def set_faults(host):
    api_app.authorize('nova_moves:test-hooks')
    body = validation.validate(common.json_body(), SCHEMA)
    db_api.compute_node_get_by_host(host)
    result = api_app.services().compute.set_fault_injection(
        api_app.context(), host, body['fail_operations'],
        body.get('operation_seconds'))
    return flask.jsonify({'faults': result})


def register(app):
    if conf.CONF.api.enable_test_hooks:
        app.add_url_rule('/v2.1/os-nova-moves-test/computes/<host>/faults',
                         'test_faults', set_faults, methods=['PUT'])
