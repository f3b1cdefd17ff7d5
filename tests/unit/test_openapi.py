"""The OpenAPI document: well-formed, complete, and specialized per
microversion and audience."""
import json
import os

import jsonschema
import testtools

from nova_moves.api import openapi

CHECKED_IN = os.path.join(os.path.dirname(__file__), '..', '..', 'doc',
                          'api-ref', 'openapi.json')


class OpenAPIDocumentTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.document = json.loads(openapi.dumps(openapi.build()))

    def test_checked_in_copy_is_current(self):
        with open(CHECKED_IN) as f:
            self.assertEqual(
                json.load(f), self.document,
                'regenerate: python -m nova_moves.api.openapi > '
                'doc/api-ref/openapi.json')

    def test_every_schema_is_valid_json_schema(self):
        for schema in self.document['components']['schemas'].values():
            jsonschema.Draft202012Validator.check_schema(schema)
        for path, operations in self.document['paths'].items():
            for method, operation in operations.items():
                self.assertIn('responses', operation, (path, method))
                body = operation.get('requestBody')
                if body:
                    jsonschema.Draft202012Validator.check_schema(
                        body['content']['application/json']['schema'])

    def test_refs_resolve(self):
        text = json.dumps(self.document)
        for name in set(part.split('"')[0] for part in
                        text.split('#/components/schemas/')[1:]):
            self.assertIn(name, self.document['components']['schemas'])

    def test_test_hooks_are_not_described(self):
        self.assertFalse([p for p in self.document['paths']
                          if 'nova-moves-test' in p])

    def test_specialize_by_version(self):
        at_21 = openapi.response_schema(
            self.document, '/v2.1/servers/{server_id}', 'get', 200, '2.1')
        at_295 = openapi.response_schema(
            self.document, '/v2.1/servers/{server_id}', 'get', 200, '2.95')
        server_21 = at_21['properties']['server']
        server_295 = at_295['properties']['server']
        self.assertNotIn('locked', server_21['properties'])
        self.assertIn('locked', server_295['required'])
        self.assertEqual(['id', 'links'],
                         sorted(server_21['properties']['flavor']
                                ['properties']))
        self.assertIn('original_name',
                      server_295['properties']['flavor']['properties'])

    def test_specialize_by_audience(self):
        owner = openapi.response_schema(
            self.document, '/v2.1/servers/{server_id}', 'get', 200, '2.95',
            admin=False)['properties']['server']
        self.assertNotIn('OS-EXT-SRV-ATTR:host', owner['properties'])
        # hostname is public from 2.90
        self.assertIn('OS-EXT-SRV-ATTR:hostname', owner['required'])
        action = openapi.response_schema(
            self.document, '/v2.1/servers/{server_id}/os-instance-actions/'
            '{request_id}', 'get', 200, '2.50', admin=False)
        self.assertNotIn('events',
                         action['properties']['instanceAction']['properties'])

    def test_a_wrong_response_fails(self):
        schema = openapi.response_schema(
            self.document, '/v2.1/os-services', 'get', 200, '2.53')
        good = {'services': [{
            'id': 'u', 'binary': 'nova-moves-compute', 'host': 'h',
            'zone': 'nova', 'status': 'enabled', 'state': 'up',
            'updated_at': None, 'disabled_reason': None,
            'forced_down': False}]}
        jsonschema.validate(good, schema)
        bad = json.loads(json.dumps(good))
        bad['services'][0]['id'] = 7  # integer ids end at 2.52
        self.assertRaises(jsonschema.ValidationError, jsonschema.validate,
                          bad, schema)
        del good['services'][0]['forced_down']
        self.assertRaises(jsonschema.ValidationError, jsonschema.validate,
                          good, schema)
