"""os-keypairs on a real stack (the API process, a conductor, a
scheduler and a fake compute over RabbitMQ): a user's key pairs, a boot
with one, a boot with an unknown one (400, nothing made), a rebuild that
changes and unsets the key (2.54), and the key surviving its key pair."""
from tests.functional import base

KEY = ('ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGVf3oO5xVqWnS6B3H0d5Wh0m0uYtq'
       '0lq9b0d5m4Y1Qy functional')


class KeypairsTest(base.StackTestCase):

    COMPUTES = 1

    def test_keypairs_boot_and_rebuild(self):
        user = self.admin.as_user('kim:proj-k')
        other = self.admin.as_user('lou:proj-k')
        made = user.post('/os-keypairs', {'keypair': {
            'name': 'k1', 'public_key': KEY}}, version='2.92',
            expect=201).json()['keypair']
        self.assertEqual(('kim', 'ssh'), (made['user_id'], made['type']))
        generated = user.post('/os-keypairs', {'keypair': {'name': 'k2'}},
                              version='2.91', expect=201).json()['keypair']
        self.assertIn('PRIVATE KEY', generated['private_key'])
        self.assertEqual(409, user.post('/os-keypairs', {'keypair': {
            'name': 'k1', 'public_key': KEY}},
            version='2.92').status_code)
        # The same project's other user has none of them.
        self.assertEqual([], other.get('/os-keypairs', expect=200).json()[
            'keypairs'])
        flavor = self.flavor('small')['id']

        def boot(key_name, client=user):
            return client.post('/servers', {'server': {
                'name': 'kvm', 'flavorRef': flavor, 'imageRef': 'fake',
                'networks': 'none', 'key_name': key_name}})
        response = boot('k1', client=other)
        self.assertEqual(400, response.status_code, response.text)
        self.assertIn('Invalid key_name provided.', response.text)
        self.assertEqual([], self.admin.get(
            '/servers?all_tenants=1', expect=200).json()['servers'])
        response = boot('k1')
        self.assertEqual(202, response.status_code, response.text)
        sid = response.json()['server']['id']
        self.addCleanup(self.admin.request, 'DELETE', '/servers/%s' % sid)
        server = user.wait_for_status(sid, 'ACTIVE')
        self.assertEqual('k1', server['key_name'])
        # Rebuild: an unknown key is a 400 with nothing claimed; k2
        # replaces k1; null unsets.
        response = user.action(sid, {'rebuild': {
            'imageRef': 'fake', 'key_name': 'nope'}}, version='2.54')
        self.assertEqual(400, response.status_code, response.text)
        self.assertEqual('ACTIVE', user.server(sid)['status'])
        body = user.action(sid, {'rebuild': {
            'imageRef': 'fake', 'key_name': 'k2'}}, version='2.54',
            expect=202).json()['server']
        self.assertEqual('k2', body['key_name'])
        self.assertEqual('k2', user.wait_for_status(sid, 'ACTIVE')[
            'key_name'])
        user.action(sid, {'rebuild': {'imageRef': 'fake',
                                      'key_name': None}},
                    version='2.54', expect=202)
        self.assertIsNone(user.wait_for_status(sid, 'ACTIVE')['key_name'])
        user.action(sid, {'rebuild': {'imageRef': 'fake',
                                      'key_name': 'k1'}},
                    version='2.54', expect=202)
        user.wait_for_status(sid, 'ACTIVE')
        # Deleting the key pair leaves the server's key as it was.
        user.request('DELETE', '/os-keypairs/k1', version='2.2', expect=204)
        self.assertEqual('k1', user.server(sid)['key_name'])
        shown = user.server(sid, version='2.100')
        self.assertEqual(({}, None), (shown['scheduler_hints'],
                                      shown['pinned_availability_zone']))
        self.assertEqual(['k2'], [k['keypair']['name'] for k in user.get(
            '/os-keypairs', expect=200).json()['keypairs']])
