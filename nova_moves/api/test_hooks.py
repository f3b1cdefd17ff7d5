"""Admin-only fault injection, served only with [api] enable_test_hooks:
PUT /v2.1/os-nova-moves-test/computes/{host}/faults
{"fail_operations": ["spawn", ...], "operation_seconds": {"spawn": 0.2}}"""
import flask

from nova_moves.api import request as api_req
from nova_moves.api import validation
from nova_moves.db import api as db_api

SCHEMA = {'type': 'object', 'additionalProperties': False,
          'required': ['fail_operations'],
          'properties': {
              'fail_operations': {'type': 'array',
                                  'items': {'type': 'string'}},
              'operation_seconds': {'type': 'object',
                                    'additionalProperties': {
                                        'type': 'number', 'minimum': 0}}}}


@validation.schema(SCHEMA)
def set_faults(host):
    api_req.authorize('nova_moves:test-hooks')
    body = validation.body()
    db_api.compute_node_get_by_host(host)
    result = api_req.services().compute.set_fault_injection(
        api_req.context(), host, body['fail_operations'],
        body.get('operation_seconds'))
    return flask.jsonify({'faults': result})
