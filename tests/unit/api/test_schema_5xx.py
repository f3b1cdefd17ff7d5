"""The 5xx tools/schema_check.py (schemathesis on a real stack) found,
each now Nova's 4xx naming the problem."""
import json

from cryptography.hazmat.primitives.asymmetric import ed25519
from cryptography.hazmat.primitives import serialization
from oslo_db import exception as db_exc
from sqlalchemy import exc as sa_exc
import testtools

from nova_moves.db import api as db_api
from tests.unit import fixtures as nm_fixtures

ADMIN = {'X-Auth-Token': 'admin:admin'}


class AuditLogBeforeYearOneTest(testtools.TestCase):
    """GET /os-instance_usage_audit_log/{before}: a timestamp with no
    complete period before it was a 500 (ValueError: year 0)."""

    def setUp(self):
        super().setUp()
        self.client = nm_fixtures.app_client(self, 'h1')

    def get(self, before):
        return self.client.get('/v2.1/os-instance_usage_audit_log/%s'
                               % before.replace(' ', '%20'),
                               headers=ADMIN)

    def test_no_period_before_is_400(self):
        for period, before in (('month', '0001-01-31 00:00:00'),
                               ('day', '0001-01-01 12:00:00'),
                               ('hour', '0001-01-01 00:30:00.5'),
                               ('year@6', '0002-03-01 00:00:00')):
            self.useFixture(nm_fixtures.Override(
                'instance_usage_audit_period', period))
            response = self.get(before)
            self.assertEqual(400, response.status_code,
                             (period, response.data[:300]))
            self.assertIn('no audit period completes before it',
                          response.get_json()['badRequest']['message'])

    def test_first_period_still_answers(self):
        response = self.get('0001-02-01 00:00:01')
        self.assertEqual(200, response.status_code, response.data[:300])
        self.assertEqual('0001-01-01 00:00:00', response.get_json()[
            'instance_usage_audit_log']['period_beginning'])


class TextColumnBoundsTest(testtools.TestCase):
    """What MySQL's TEXT columns (65535 bytes) refused: a flavor
    description of 4-byte characters was a 500 there (1366, wrapped by
    oslo.db as a plain DBError), a server of a flavor with a long
    description, with long scheduler hints or a key pair with a long
    comment a 400 there only. The same
    bounds now hold on every database, checked before any write."""

    def setUp(self):
        super().setUp()
        self.client = nm_fixtures.app_client(self, 'h1')

    def call(self, method, path, body=None, version='2.55'):
        # Raw UTF-8 (not \u escapes): 16383 emoji stay under the API's
        # 112 KiB body limit.
        data = None if body is None else json.dumps(
            body, ensure_ascii=False).encode('utf-8')
        return self.client.open(
            '/v2.1' + path, method=method, data=data,
            content_type='application/json', headers=dict(
                ADMIN, **{'OpenStack-API-Version': 'compute ' + version}))

    def flavor(self, flavor_id, description):
        return self.call('POST', '/flavors', {'flavor': {
            'name': flavor_id, 'id': flavor_id, 'vcpus': 1, 'ram': 64,
            'disk': 1, 'description': description}})

    def test_description_bounded_by_bytes(self):
        self.assertEqual(200, self.flavor('fits', '\U0001F600' * 16383)
                         .status_code)
        response = self.flavor('over', '\U0001F600' * 16384)
        self.assertEqual(400, response.status_code, response.data[:300])
        self.assertIn('longer than 65535 bytes',
                      response.get_json()['badRequest']['message'])
        self.assertEqual(404, self.call('GET', '/flavors/over').status_code)
        response = self.call('PUT', '/flavors/fits', {'flavor': {
            'description': '\u00e9' * 40000}})
        self.assertEqual(400, response.status_code, response.data[:300])
        self.assertEqual('\U0001F600' * 16383, self.call(
            'GET', '/flavors/fits').get_json()['flavor']['description'])

    def test_server_keeps_no_flavor_description(self):
        self.assertEqual(200, self.flavor('long', 'x' * 65535).status_code)
        response = self.call('POST', '/servers', {'server': {
            'name': 'vm', 'flavorRef': 'long', 'imageRef': 'fake',
            'networks': 'none'}})
        self.assertEqual(202, response.status_code, response.data[:300])
        kept = db_api.instance_get(response.get_json()['server']['id'])
        self.assertEqual('long', kept['flavor']['flavorid'])
        self.assertNotIn('description', sorted(kept['flavor']))

    def test_scheduler_hints_bounded(self):
        self.assertEqual(200, self.flavor('small', None).status_code)
        response = self.call('POST', '/servers', {
            'server': {'name': 'vm', 'flavorRef': 'small',
                       'imageRef': 'fake', 'networks': 'none'},
            'os:scheduler_hints': {'x': 'a' * 70000}})
        self.assertEqual(400, response.status_code, response.data[:300])
        self.assertIn('os:scheduler_hints',
                      response.get_json()['badRequest']['message'])
        self.assertEqual([], self.call('GET', '/servers').get_json()[
            'servers'])

    def test_host_hints_take_server_uuids(self):
        # Nova's schema: a uuid or a list of them; anything else is a
        # 400 naming the hint, nothing made.
        self.assertEqual(200, self.flavor('small', None).status_code)
        server = {'name': 'vm', 'flavorRef': 'small', 'imageRef': 'fake',
                  'networks': 'none'}
        for hint, value in (('same_host', 'not-a-uuid'),
                            ('different_host', ['0' * 31]),
                            ('different_host', {'a': 1})):
            response = self.call('POST', '/servers', {
                'server': server, 'os:scheduler_hints': {hint: value}})
            self.assertEqual(400, response.status_code, response.data[:300])
            self.assertIn('os:scheduler_hints/' + hint,
                          response.get_json()['badRequest']['message'])
        self.assertEqual([], self.call('GET', '/servers').get_json()[
            'servers'])
        response = self.call('POST', '/servers', {
            'server': server, 'os:scheduler_hints': {
                'different_host': '1f0e8a52-3a5e-4c38-9d4c-0e6f0d6b1a11',
                'same_host': ['1f0e8a523a5e4c389d4c0e6f0d6b1a11']}})
        self.assertEqual(202, response.status_code, response.data[:300])

    def test_public_key_bounded_by_bytes(self):
        key = ed25519.Ed25519PrivateKey.generate().public_key().public_bytes(
            serialization.Encoding.OpenSSH,
            serialization.PublicFormat.OpenSSH).decode('ascii')
        # A comment after the key is accepted, however long.
        response = self.call('POST', '/os-keypairs', {'keypair': {
            'name': 'k', 'public_key': key + ' ' + 'c' * 65535}})
        self.assertEqual(400, response.status_code, response.data[:300])
        self.assertIn('keypair/public_key',
                      response.get_json()['badRequest']['message'])
        self.assertEqual([], self.call('GET', '/os-keypairs').get_json()[
            'keypairs'])
        response = self.call('POST', '/os-keypairs', {'keypair': {
            'name': 'k', 'public_key': key + ' short'}})
        self.assertEqual(201, response.status_code, response.data[:300])


class WrappedDataErrorTest(testtools.TestCase):

    def test_a_data_error_oslo_db_did_not_filter_is_400(self):
        from nova_moves.api import app as api_app
        refused = db_exc.DBError(sa_exc.DataError(
            'INSERT', {}, Exception("1366, 'Incorrect string value'")))
        with api_app.create_app().test_request_context('/v2.1/flavors'):
            response = api_app._on_error(refused)
        self.assertEqual(400, response.status_code)
