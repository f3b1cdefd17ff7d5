"""os-keypairs through the WSGI app on a real (SQLite) database: Nova's
shapes per microversion, its validation, the per-user rule, the quota,
and the key a server boots and rebuilds with."""
import base64
import hashlib

from cryptography.hazmat.primitives.asymmetric import ed25519
from cryptography.hazmat.primitives import serialization
import testtools

from nova_moves.api import keypair_crypto
from nova_moves.db import api as db_api
from tests.unit import fixtures as nm_fixtures

ADMIN = {'X-Auth-Token': 'admin:admin'}
ALICE = {'X-Auth-Token': 'alice:p1'}
BOB = {'X-Auth-Token': 'bob:p1'}
KP = '/v2.1/os-keypairs'


def at(version, headers=ALICE):
    return dict(headers, **{'OpenStack-API-Version': 'compute %s' % version})


def ssh_key():
    key = ed25519.Ed25519PrivateKey.generate().public_key()
    return key.public_bytes(serialization.Encoding.OpenSSH,
                            serialization.PublicFormat.OpenSSH).decode()


class KeypairsTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.client = nm_fixtures.app_client(self, 'h1')

    def create(self, body, version='2.92', headers=ALICE, expect=201):
        response = self.client.post(KP, json={'keypair': body},
                                    headers=at(version, headers))
        self.assertEqual(expect, response.status_code, response.get_json())
        return response.get_json()

    def test_import_show_list_delete(self):
        public = ssh_key()
        made = self.create({'name': 'k1', 'public_key': public})['keypair']
        blob = base64.b64decode(public.split()[1])
        md5 = hashlib.md5(blob).hexdigest()
        self.assertEqual(':'.join(md5[i:i + 2] for i in range(0, 32, 2)),
                         made['fingerprint'])
        self.assertEqual({'name', 'public_key', 'fingerprint', 'type',
                          'user_id'}, set(made))
        self.assertEqual(('ssh', 'alice'), (made['type'], made['user_id']))
        shown = self.client.get(KP + '/k1', headers=at('2.2')).get_json()[
            'keypair']
        self.assertEqual({'name', 'public_key', 'fingerprint', 'type',
                          'user_id', 'id', 'created_at', 'updated_at',
                          'deleted', 'deleted_at'}, set(shown))
        self.assertFalse(shown['deleted'])
        old = self.client.get(KP + '/k1', headers=at('2.1')).get_json()[
            'keypair']
        self.assertNotIn('type', old)
        listed = self.client.get(KP, headers=at('2.2')).get_json()
        self.assertEqual([{'keypair': {
            'name': 'k1', 'public_key': public, 'type': 'ssh',
            'fingerprint': made['fingerprint']}}], listed['keypairs'])
        # Another user neither sees nor deletes it.
        self.assertEqual([], self.client.get(KP, headers=BOB).get_json()[
            'keypairs'])
        self.assertEqual(404, self.client.get(KP + '/k1',
                                              headers=BOB).status_code)
        self.create({'name': 'k1', 'public_key': public}, expect=409)
        self.assertEqual(204, self.client.delete(
            KP + '/k1', headers=at('2.2')).status_code)
        self.assertEqual(404, self.client.delete(
            KP + '/k1', headers=at('2.2')).status_code)

    def test_status_codes_below_2_2(self):
        made = self.create({'name': 'k1', 'public_key': ssh_key()},
                           version='2.1', expect=200)['keypair']
        self.assertNotIn('type', made)
        self.assertEqual(202, self.client.delete(
            KP + '/k1', headers=at('2.1')).status_code)

    def test_validation(self):
        public = ssh_key()
        for version, body, words in (
                ('2.92', {'name': 'k'}, "'public_key' is a required"),
                ('2.92', {'name': 'a/b', 'public_key': public}, 'name'),
                ('2.91', {'name': 'a@b', 'public_key': public}, 'name'),
                ('2.92', {'name': ' a', 'public_key': public}, 'name'),
                ('2.92', {'name': '', 'public_key': public}, 'name'),
                ('2.92', {'name': 'x' * 256, 'public_key': public}, 'name'),
                ('2.1', {'name': 'k', 'type': 'ssh'}, 'type'),
                ('2.2', {'name': 'k', 'type': 'rsa'}, 'type'),
                ('2.9', {'name': 'k', 'user_id': 'bob'}, 'user_id'),
                ('2.92', {'name': 'k', 'public_key': 'ssh-rsa nonsense'},
                 'failed to generate fingerprint'),
                ('2.92', {'name': 'k', 'public_key': 'x', 'type': 'x509'},
                 'X509 fingerprint')):
            response = self.client.post(KP, json={'keypair': body},
                                        headers=at(version))
            self.assertEqual(400, response.status_code, (version, body))
            self.assertIn(words, response.get_json()['badRequest'][
                'message'], (version, body))
        # 2.92 allows @ and . in names.
        self.create({'name': 'me@host.example', 'public_key': public})
        self.assertEqual([], db_api.key_pair_get_all('bob'))

    def test_generated_below_2_92(self):
        made = self.create({'name': 'gen'}, version='2.91')['keypair']
        self.assertIn('PRIVATE KEY', made['private_key'])
        self.assertTrue(made['public_key'].startswith('ssh-rsa '))
        self.assertEqual(keypair_crypto.ssh_fingerprint(made['public_key']),
                         made['fingerprint'])
        cert = self.create({'name': 'win', 'type': 'x509'},
                           version='2.91')['keypair']
        self.assertIn('BEGIN CERTIFICATE', cert['public_key'])
        self.assertEqual(59, len(cert['fingerprint']))
        self.assertTrue(base64.b64decode(cert['private_key']))
        # The imported certificate gives the same fingerprint.
        again = self.create({'name': 'win2', 'type': 'x509',
                             'public_key': cert['public_key']})['keypair']
        self.assertEqual(cert['fingerprint'], again['fingerprint'])

    def test_admin_names_the_user_others_may_not(self):
        public = ssh_key()
        made = self.create({'name': 'k', 'public_key': public,
                            'user_id': 'bob'}, headers=ADMIN)['keypair']
        self.assertEqual('bob', made['user_id'])
        self.assertEqual(['k'], [k['keypair']['name'] for k in
                                 self.client.get(KP, headers=BOB).get_json()[
                                     'keypairs']])
        self.create({'name': 'k2', 'public_key': public, 'user_id': 'bob'},
                    expect=403)
        for method in ('get', 'delete'):
            response = getattr(self.client, method)(
                KP + '/k?user_id=bob', headers=at('2.10'))
            self.assertEqual(403, response.status_code, method)
        self.assertEqual(200, self.client.get(
            KP + '/k?user_id=bob', headers=at('2.10', ADMIN)).status_code)
        # Below 2.10 the query is ignored: the admin's own key pairs.
        self.assertEqual(404, self.client.get(
            KP + '/k?user_id=bob', headers=at('2.9', ADMIN)).status_code)

    def test_paging_and_unknown_query(self):
        public = ssh_key()
        for name in ('c', 'a', 'b'):
            self.create({'name': name, 'public_key': public})
        page = self.client.get(KP + '?limit=2',
                               headers=at('2.35')).get_json()
        self.assertEqual(['a', 'b'], [k['keypair']['name']
                                      for k in page['keypairs']])
        self.assertIn('marker=b', page['keypairs_links'][0]['href'])
        rest = self.client.get(KP + '?limit=2&marker=b',
                               headers=at('2.35')).get_json()
        self.assertEqual(['c'], [k['keypair']['name']
                                 for k in rest['keypairs']])
        self.assertNotIn('keypairs_links', rest)
        self.assertEqual(400, self.client.get(
            KP + '?marker=zz', headers=at('2.35')).status_code)
        # Before 2.35 no paging: every key pair.
        self.assertEqual(3, len(self.client.get(
            KP + '?limit=1', headers=at('2.34')).get_json()['keypairs']))
        response = self.client.get(KP + '?foo=1', headers=at('2.75'))
        self.assertEqual(400, response.status_code)
        self.assertIn('foo', response.get_json()['badRequest']['message'])
        self.assertEqual(200, self.client.get(
            KP + '?foo=1', headers=at('2.74')).status_code)

    def test_quota(self):
        response = self.client.put(
            '/v2.1/os-quota-sets/p1', headers=ADMIN,
            json={'quota_set': {'key_pairs': 1}})
        self.assertEqual(200, response.status_code, response.get_json())
        public = ssh_key()
        self.create({'name': 'k1', 'public_key': public})
        body = self.create({'name': 'k2', 'public_key': public}, expect=403)
        self.assertIn('too many key pairs', body['forbidden']['message'])


class ServerKeyTest(testtools.TestCase):
    """key_name at boot (unknown: 400) and at rebuild (2.54; null unsets);
    the server keeps the public key it was given."""

    def setUp(self):
        super().setUp()
        self.client = nm_fixtures.app_client(self, 'h1')
        self.flavor = nm_fixtures.flavor()
        self.public = ssh_key()
        for name in ('k1', 'k2'):
            self.client.post(KP, headers=at('2.92'), json={'keypair': {
                'name': name, 'public_key': self.public}})

    def boot(self, version='2.1', **extra):
        return self.client.post('/v2.1/servers', headers=at(version), json={
            'server': dict({'name': 'vm', 'flavorRef':
                            self.flavor['flavorid'], 'imageRef': 'img-1',
                            'networks': 'none'}, **extra),
            'os:scheduler_hints': {'same_host': []}})

    def show(self, uuid, version):
        return self.client.get('/v2.1/servers/%s' % uuid,
                               headers=at(version)).get_json()['server']

    def test_boot_with_a_key(self):
        response = self.boot(key_name='nope')
        self.assertEqual(400, response.status_code)
        self.assertEqual('Invalid key_name provided.',
                         response.get_json()['badRequest']['message'])
        self.assertEqual([], db_api.instance_get_all())
        # Another user's key pair is not the caller's: 400 too.
        self.assertEqual(400, self.client.post(
            '/v2.1/servers', headers=BOB, json={'server': {
                'name': 'vm', 'flavorRef': self.flavor['flavorid'],
                'key_name': 'k1'}}).status_code)
        self.assertEqual(400, self.boot(key_name='').status_code)
        response = self.boot(key_name='k1')
        self.assertEqual(202, response.status_code, response.get_json())
        uuid = response.get_json()['server']['id']
        self.assertEqual('k1', self.show(uuid, '2.1')['key_name'])
        self.assertEqual(self.public, db_api.instance_get(uuid)['key_data'])
        # Deleting the key pair leaves the server's key as it was.
        self.client.delete(KP + '/k1', headers=ALICE)
        self.assertEqual('k1', self.show(uuid, '2.1')['key_name'])

    def test_rebuild_sets_and_unsets_the_key(self):
        server = db_api.instance_create({
            'display_name': 'vm', 'user_id': 'alice', 'project_id': 'p1',
            'vm_state': 'active', 'host': 'h1', 'node': 'h1',
            'power_state': 1, 'flavor': self.flavor, 'image_ref': 'img-1',
            'key_name': 'k1', 'key_data': self.public})
        path = '/v2.1/servers/%s/action' % server['uuid']

        def rebuild(key, version='2.54'):
            return self.client.post(path, headers=at(version), json={
                'rebuild': {'imageRef': 'img-2', 'key_name': key}})
        self.assertEqual(400, rebuild('k2', '2.53').status_code)
        response = rebuild('nope')
        self.assertEqual(400, response.status_code)
        self.assertIn('Invalid key_name',
                      response.get_json()['badRequest']['message'])
        self.assertIsNone(db_api.instance_get(server['uuid'])['task_state'])
        response = rebuild('k2')
        self.assertEqual(202, response.status_code, response.get_json())
        self.assertEqual('k2', response.get_json()['server']['key_name'])
        db_api.instance_update(server['uuid'], {'task_state': None})
        response = rebuild(None)
        self.assertEqual(202, response.status_code, response.get_json())
        self.assertIsNone(response.get_json()['server']['key_name'])
        after = db_api.instance_get(server['uuid'])
        self.assertEqual((None, None), (after['key_name'],
                                        after['key_data']))

    def test_newest_microversions(self):
        response = self.boot(availability_zone='nova')
        self.assertEqual(202, response.status_code, response.get_json())
        uuid = response.get_json()['server']['id']
        old = self.show(uuid, '2.95')
        for key in ('pinned_availability_zone', 'scheduler_hints'):
            self.assertNotIn(key, old)
        self.assertNotIn('properties', old['image'])
        self.assertEqual('nova', self.show(uuid, '2.96')[
            'pinned_availability_zone'])
        self.assertEqual({}, self.show(uuid, '2.98')['image']['properties'])
        self.assertNotIn('scheduler_hints', self.show(uuid, '2.99'))
        self.assertEqual({'same_host': []},
                         self.show(uuid, '2.100')['scheduler_hints'])
        listed = self.client.get('/v2.1/servers/detail',
                                 headers=at('2.100')).get_json()['servers']
        self.assertEqual({'same_host': []}, listed[0]['scheduler_hints'])
        updated = self.client.put(
            '/v2.1/servers/%s' % uuid, headers=at('2.100'),
            json={'server': {'name': 'n'}}).get_json()['server']
        self.assertEqual(('nova', {'same_host': []}),
                         (updated['pinned_availability_zone'],
                          updated['scheduler_hints']))
        self.assertEqual(406, self.client.get(
            '/v2.1/servers/%s' % uuid, headers=at('2.105')).status_code)
