"""The OpenAPI document served at /openapi.json: it is the checked-in one,
and real responses of a real stack validate against its response schemas
at each microversion, for admins and for owners."""
import json
import os

import jsonschema
import requests

from nova_moves.api import openapi
from tests.functional import base
from tests.functional import stack_db

CHECKED_IN = os.path.join(os.path.dirname(__file__), '..', '..', 'doc',
                          'api-ref', 'openapi.json')
VERSIONS = ['2.1', '2.3', '2.11', '2.16', '2.23', '2.27', '2.47', '2.51',
            '2.53', '2.55', '2.58', '2.59', '2.61', '2.62', '2.80', '2.84',
            '2.87', '2.88', '2.90', '2.95', '2.96', '2.98']


class OpenAPITest(base.StackTestCase):

    COMPUTES = 1

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.root = cls.stack.endpoint.rsplit('/v2.1', 1)[0]
        cls.document = requests.get(cls.root + '/openapi.json',
                                    timeout=30).json()

    def validate(self, client, path, version, admin=True, template=None,
                 status=200):
        response = client.get(path, version=version)
        self.assertEqual(status, response.status_code, response.text)
        schema = openapi.response_schema(
            self.document, template or '/v2.1' + path, 'get', status,
            version, admin)
        errors = sorted(jsonschema.Draft202012Validator(
            schema).iter_errors(response.json()), key=str)
        self.assertEqual([], [
            '%s at %s: %s' % (path, '/'.join(map(str, e.absolute_path)),
                              e.message) for e in errors][:5],
            'version %s admin=%s' % (version, admin))
        return response.json()

    def test_served_document_is_the_checked_in_one(self):
        response = requests.get(self.root + '/openapi.json', timeout=30)
        self.assertEqual(200, response.status_code)  # no token needed
        with open(CHECKED_IN) as f:
            checked_in = json.load(f)
        self.assertEqual(
            checked_in, response.json(),
            'doc/api-ref/openapi.json is stale; regenerate it with '
            '"python -m nova_moves.api.openapi > doc/api-ref/openapi.json"')

    def test_every_route_is_described(self):
        for path in ('/v2.1/servers/{server_id}',
                     '/v2.1/servers/{server_id}/action',
                     '/v2.1/os-services/{service_id}',
                     '/v2.1/os-hypervisors/detail', '/v2.1/os-migrations',
                     '/v2.1/servers/{server_id}/os-instance-actions/'
                     '{request_id}'):
            self.assertIn(path, self.document['paths'])
        create = self.document['paths']['/v2.1/servers']['post']
        body = create['requestBody']['content']['application/json']['schema']
        self.assertIn('flavorRef',
                      body['properties']['server']['required'])

    def test_responses_match_the_document(self):
        server = self.boot('openapi-vm')
        sid = server['id']
        flavor_id = self.flavor('small')['id']
        request_id = self.admin.actions(sid)[0]['request_id']
        node = self.admin.get('/os-hypervisors', version='2.53',
                              expect=200).json()['hypervisors'][0]
        with stack_db.stack_database(self.stack) as db:
            migration = db.migration_create({
                'instance_uuid': sid, 'migration_type': 'migration',
                'status': 'error', 'source_compute': 'compute1',
                'source_node': 'compute1', 'dest_compute': 'compute1',
                'dest_node': 'compute1', 'old_flavor_id': flavor_id,
                'new_flavor_id': flavor_id, 'user_id': 'admin',
                'project_id': 'admin'})
        self.addCleanup(self._drop_migration, migration['id'])
        for version in VERSIONS:
            self.validate(self.admin, '/servers/%s' % sid, version,
                          template='/v2.1/servers/{server_id}')
            self.validate(self.admin, '/servers/detail', version)
            self.validate(self.admin, '/servers', version)
            self.validate(self.admin, '/flavors', version)
            self.validate(self.admin, '/flavors/detail', version)
            self.validate(self.admin, '/flavors/%s' % flavor_id, version,
                          template='/v2.1/flavors/{flavor_id}')
            self.validate(self.admin, '/os-services', version)
            self.validate(self.admin, '/os-hypervisors', version)
            self.validate(self.admin, '/os-hypervisors/detail', version)
            node_id = node['id'] if version >= '2.53' else str(
                self.admin.get('/os-hypervisors', version='2.1').json()[
                    'hypervisors'][0]['id'])
            self.validate(self.admin, '/os-hypervisors/%s' % node_id,
                          version,
                          template='/v2.1/os-hypervisors/{hypervisor_id}')
            if version < '2.88':
                self.validate(
                    self.admin, '/os-hypervisors/%s/uptime' % node_id,
                    version, template='/v2.1/os-hypervisors/'
                    '{hypervisor_id}/uptime')
            limits = self.validate(self.admin, '/limits', version)
            self.assertEqual(1, limits['limits']['absolute'][
                'totalInstancesUsed'])
            self.validate(self.admin, '/os-availability-zone', version)
            self.validate(self.admin, '/os-availability-zone/detail', version)
            if version < '2.88':
                self.validate(self.admin, '/os-hypervisors/statistics',
                              version)
            self.validate(self.admin, '/servers/%s/os-instance-actions' % sid,
                          version, template='/v2.1/servers/{server_id}/'
                          'os-instance-actions')
            detail = self.validate(
                self.admin, '/servers/%s/os-instance-actions/%s' % (
                    sid, request_id), version,
                template='/v2.1/servers/{server_id}/os-instance-actions/'
                '{request_id}')
            self.assertTrue(detail['instanceAction']['events'])
            listed = self.validate(self.admin, '/os-migrations', version)
            self.assertIn(migration['id'],
                          [m['id'] for m in listed['migrations']])
        self.admin.delete('/servers/%s' % sid, expect=204)

    def test_keypairs_and_2_100_match_the_document(self):
        user = self.admin.as_user('kate:proj-k')
        key = ('ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGVf3oO5xVqWnS6B3H0d5W'
               'h0m0uYtq0lq9b0d5m4Y1Qy openapi')
        user.post('/os-keypairs', {'keypair': {
            'name': 'k1', 'public_key': key}}, version='2.92', expect=201)
        server = user.post('/servers', {'server': {
            'name': 'keyed', 'flavorRef': self.flavor('small')['id'],
            'imageRef': 'fake', 'networks': 'none', 'key_name': 'k1'}},
            expect=202).json()['server']
        user.wait_for_status(server['id'], 'ACTIVE')
        for version in ('2.1', '2.2', '2.35', '2.92', '2.100'):
            listed = self.validate(user, '/os-keypairs', version,
                                   admin=False)
            self.assertEqual(['k1'], [k['keypair']['name']
                                      for k in listed['keypairs']])
            self.validate(user, '/os-keypairs/k1', version, admin=False,
                          template='/v2.1/os-keypairs/{keypair_name}')
        for version in ('2.100',):
            shown = self.validate(user, '/servers/%s' % server['id'],
                                  version, admin=False,
                                  template='/v2.1/servers/{server_id}')
            self.assertEqual('k1', shown['server']['key_name'])
            self.assertEqual({}, shown['server']['scheduler_hints'])
            self.validate(self.admin, '/servers/detail', version)
        user.delete('/servers/%s' % server['id'], expect=204)

    def _drop_migration(self, migration_id):
        with stack_db.stack_database(self.stack) as db:
            with db._session() as session:
                session.execute(db.sa.delete(db.models.Migration).where(
                    db.models.Migration.id == migration_id))

    def test_owner_views_match_the_document(self):
        user = self.admin.as_user('carol:proj-c')
        server = self.boot('owned', client=user)
        sid = server['id']
        request_id = user.actions(sid)[0]['request_id']
        for version in ('2.1', '2.16', '2.50', '2.51', '2.62', '2.84',
                        '2.90', '2.95'):
            shown = self.validate(user, '/servers/%s' % sid, version,
                                  admin=False,
                                  template='/v2.1/servers/{server_id}')
            self.assertNotIn('OS-EXT-SRV-ATTR:host', shown['server'])
            detail = self.validate(
                user, '/servers/%s/os-instance-actions/%s' % (
                    sid, request_id), version, admin=False,
                template='/v2.1/servers/{server_id}/os-instance-actions/'
                '{request_id}')
            self.assertEqual(version >= '2.51',
                             'events' in detail['instanceAction'])
        user.delete('/servers/%s' % sid, expect=204)

    def test_version_documents_match(self):
        response = requests.get(self.root + '/', timeout=30)
        schema = openapi.response_schema(self.document, '/', 'get', 200,
                                         '2.1')
        jsonschema.validate(response.json(), schema)
        response = requests.get(self.stack.endpoint, timeout=30)
        schema = openapi.response_schema(self.document, '/v2.1', 'get', 200,
                                         '2.1')
        jsonschema.validate(response.json(), schema)
