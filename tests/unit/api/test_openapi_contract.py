"""Real responses of the API against the OpenAPI document as a plain
JSON-schema validator reads it (refs inlined, no microversion
specializing): what schemathesis found undeclared (tools/schema_check.py).
"""
import json
import logging

import fixtures
import jsonschema
import testtools

from nova_moves.api import openapi
from nova_moves.api import openapi_schemas
from nova_moves.api import views
from nova_moves import states
from tests.unit import fixtures as nm_fixtures

ADMIN = {'X-Auth-Token': 'admin:admin'}


def _inline(document, schema):
    """``schema`` with every #/components ref replaced by its target."""
    if isinstance(schema, dict):
        if '$ref' in schema:
            name = schema['$ref'].rsplit('/', 1)[-1]
            return _inline(document,
                           document['components']['schemas'][name])
        return {k: _inline(document, v) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_inline(document, v) for v in schema]
    return schema


class PlainContractTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.client = nm_fixtures.app_client(self, 'h1')
        self.document = json.loads(openapi.dumps(openapi.build()))

    def call(self, method, path, body=None, version='2.1', status=200):
        headers = dict(ADMIN, **{'OpenStack-API-Version':
                                 'compute %s' % version})
        response = self.client.open('/v2.1' + path, method=method,
                                    json=body, headers=headers)
        self.assertEqual(status, response.status_code, response.data)
        return response

    def assert_declared(self, template, method, response):
        responses = self.document['paths']['/v2.1' + template][method][
            'responses']
        self.assertIn(str(response.status_code), responses)
        content = responses[str(response.status_code)].get('content')
        if content:
            schema = _inline(self.document,
                             content['application/json']['schema'])
            jsonschema.validate(response.get_json(), schema)

    def test_flavor_swap_below_and_from_2_75(self):
        # An integer swap suits both versions' alternatives: a oneOf
        # refused it.
        for version in ('2.1', '2.75'):
            response = self.call('POST', '/flavors', {'flavor': {
                'name': 'f' + version, 'vcpus': 1, 'ram': 64, 'disk': 1,
                'swap': 5}}, version=version)
            self.assert_declared('/flavors', 'post', response)

    def test_extra_specs_echo_numbers(self):
        flavor = self.call('POST', '/flavors', {'flavor': {
            'name': 'f', 'vcpus': 1, 'ram': 64, 'disk': 1}}).get_json()
        flavor_id = flavor['flavor']['id']
        response = self.call('POST', '/flavors/%s/os-extra_specs'
                             % flavor_id, {'extra_specs': {'a': 1.5}})
        self.assert_declared('/flavors/{flavor_id}/os-extra_specs', 'post',
                             response)
        response = self.call('PUT', '/flavors/%s/os-extra_specs/b'
                             % flavor_id, {'b': 2})
        self.assert_declared('/flavors/{flavor_id}/os-extra_specs/{key}',
                             'put', response)

    def test_placement(self):
        response = self.call('GET', '/os-nova-moves-placement')
        self.assert_declared('/os-nova-moves-placement', 'get', response)

    def test_host_drain_estimate(self):
        response = self.call('POST', '/os-host-drains', {'host': 'h1'},
                             status=202)
        self.assertIsNotNone(response.get_json()['host_drain']['estimate'])
        self.assert_declared('/os-host-drains', 'post', response)
        self.assert_declared('/os-host-drains', 'get',
                             self.call('GET', '/os-host-drains'))

    def test_host_drain_check_is_200_with_the_plan(self):
        response = self.call('POST', '/os-host-drains',
                             {'host': 'h1', 'check': True})
        self.assert_declared('/os-host-drains', 'post', response)

    def test_os_hosts_power_actions_declare_501(self):
        # Nova's answer where the hypervisor has none, so no ERROR either.
        log = self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        for action in ('startup', 'shutdown', 'reboot'):
            response = self.call('GET', '/os-hosts/h1/%s' % action,
                                 status=501)
            self.assert_declared('/os-hosts/{host_name}/%s' % action, 'get',
                                 response)
        self.assertIn('Not implemented: Host power actions', log.output)
        self.assertNotIn('Traceback', log.output)


class ServerStatusesTest(testtools.TestCase):

    def test_every_status_shown_is_declared(self):
        names = [v for k, v in vars(states).items()
                 if k.isupper() and isinstance(v, str)]
        shown = {views.server_status({'vm_state': vm, 'task_state': task})
                 for vm in names for task in [None] + names}
        self.assertEqual(set(), shown - set(openapi_schemas._STATUSES))
