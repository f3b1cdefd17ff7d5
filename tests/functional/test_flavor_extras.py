"""Flavor extra specs, flavor access lists, server tags and multiple
create on a real stack (API, conductor, scheduler, 2 fake computes,
broker and database): what tempest's admin.test_flavors_extra_specs*,
admin.test_flavors_access*, servers.test_server_tags and
servers.test_multiple_create ask of issue 26, plus hostile input."""
from tests.functional import base

ALICE = 'alice:alpha'


class FlavorExtrasTest(base.StackTestCase):

    COMPUTES = 2

    def _boot(self, client, flavor_id, **extra):
        server = dict({'name': 'vm', 'flavorRef': flavor_id,
                       'imageRef': 'fake', 'networks': 'none'}, **extra)
        return client.post('/servers', {'server': server})

    def _delete_all(self, client):
        for server in client.get('/servers', expect=200).json()['servers']:
            client.request('DELETE', '/servers/%s' % server['id'])
        client.wait_for(lambda: not client.get(
            '/servers', expect=200).json()['servers'], timeout=60,
            what='servers deleted')

    def test_extra_specs(self):
        flavor = self.admin.create_flavor('specs', 1, 64, 1)
        path = '/flavors/%s/os-extra_specs' % flavor['id']
        body = {'extra_specs': {'hw:cpu_policy': 'dedicated', 'n': 4}}
        self.assertEqual(body, self.admin.post(path, body,
                                               expect=200).json())
        self.assertEqual({'hw:cpu_policy': 'dedicated', 'n': '4'},
                         self.admin.get('/flavors/%s' % flavor['id'],
                                        version='2.61', expect=200).json()[
                                            'flavor']['extra_specs'])
        alice = self.admin.as_user(ALICE)
        self.assertEqual({'n': '4'}, alice.get(path + '/n',
                                               expect=200).json())
        self.assertEqual(403, alice.put(path + '/n', {'n': '5'}).status_code)
        self.admin.put(path + '/n', {'n': '5'}, expect=200)
        self.admin.delete(path + '/n', expect=200)
        self.assertEqual(404, self.admin.get(path + '/n').status_code)
        for bad in ({'extra_specs': {'a/b': 'x'}},
                    {'extra_specs': {'k' * 256: 'x'}},
                    {'extra_specs': {'k': 'v' * 256}},
                    {'extra_specs': {'k': None}},
                    {'extra_specs': {'k': {'nested': 1}}}, {}):
            response = self.admin.post(path, bad)
            self.assertEqual(400, response.status_code, (bad, response.text))
        for bad in ({'other': 'x'}, {'n': 'x', 'm': 'y'}, {}):
            self.assertEqual(400, self.admin.put(path + '/n',
                                                 bad).status_code)
        self.assertEqual({'hw:cpu_policy': 'dedicated'}, self.admin.get(
            path, expect=200).json()['extra_specs'])

    def test_private_flavor_access_lets_a_project_boot(self):
        body = {'flavor': {'name': 'private', 'ram': 64, 'vcpus': 1,
                           'disk': 1, 'os-flavor-access:is_public': False}}
        flavor = self.admin.post('/flavors', body, expect=200).json()[
            'flavor']
        alice = self.admin.as_user(ALICE)
        action = '/flavors/%s/action' % flavor['id']
        self.assertEqual(400, self._boot(alice, flavor['id']).status_code)
        self.assertEqual(404, alice.get('/flavors/%s' % flavor['id'])
                         .status_code)
        added = self.admin.post(action, {'addTenantAccess': {
            'tenant': 'alpha'}}, expect=200).json()
        self.assertEqual([{'flavor_id': flavor['id'], 'tenant_id': 'alpha'}],
                         added['flavor_access'])
        self.assertEqual(409, self.admin.post(action, {'addTenantAccess': {
            'tenant': 'alpha'}}).status_code)
        self.assertIn(flavor['id'], [f['id'] for f in alice.get(
            '/flavors', expect=200).json()['flavors']])
        server = self._boot(alice, flavor['id'])
        self.assertEqual(202, server.status_code, server.text)
        server = alice.wait_for_status(server.json()['server']['id'],
                                       ('ACTIVE', 'ERROR'))
        self.assertEqual('ACTIVE', server['status'], server)
        self.admin.post(action, {'removeTenantAccess': {'tenant': 'alpha'}},
                        expect=200)
        self.assertEqual(404, self.admin.post(action, {'removeTenantAccess': {
            'tenant': 'alpha'}}).status_code)
        self.assertEqual(400, self._boot(alice, flavor['id']).status_code)
        self._delete_all(alice)

    def test_server_tags(self):
        server = self.boot('tagged')
        path = '/servers/%s/tags' % server['id']
        self.assertEqual(404, self.admin.get(path, version='2.25')
                         .status_code)
        self.admin.put(path, {'tags': ['b', 'a']}, version='2.26',
                       expect=200)
        created = self.admin.put(path + '/c', version='2.26', expect=201)
        self.assertTrue(created.headers['Location'].endswith(path + '/c'))
        self.assertEqual(['a', 'b', 'c'], self.admin.server(
            server['id'], version='2.26')['tags'])
        for bad in (['x/y'], ['x,y'], ['x' * 61],
                    ['t%d' % i for i in range(51)]):
            self.assertEqual(400, self.admin.put(
                path, {'tags': bad}, version='2.26').status_code)
        self.admin.delete(path, version='2.26', expect=204)
        self.assertEqual([], self.admin.get(path, version='2.26',
                                            expect=200).json()['tags'])
        self.admin.request('DELETE', '/servers/%s' % server['id'])

    def test_multiple_create(self):
        flavor = self.flavor('small')
        self.admin.put('/os-quota-sets/beta', {'quota_set': {
            'instances': 3}}, expect=200)
        bob = self.admin.as_user('bob:beta')
        self.assertEqual(403, self._boot(bob, flavor['id'], min_count=4)
                         .status_code)
        self.assertEqual([], bob.get('/servers', expect=200).json()[
            'servers'])
        response = self._boot(bob, flavor['id'], min_count=2, max_count=5,
                              return_reservation_id=True)
        self.assertEqual(202, response.status_code, response.text)
        self.assertEqual(['reservation_id'], list(response.json()))
        servers = bob.get('/servers', expect=200).json()['servers']
        self.assertEqual(['vm-1', 'vm-2', 'vm-3'],
                         sorted(s['name'] for s in servers))
        for server in servers:
            shown = bob.wait_for_status(server['id'], ('ACTIVE', 'ERROR'))
            self.assertEqual('ACTIVE', shown['status'], shown)
            self.assertEqual(['create'], [a['action'] for a in bob.actions(
                server['id'])])
        self._delete_all(bob)
