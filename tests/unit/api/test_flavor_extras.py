"""Flavor extra specs, flavor access lists and server tags through the
WSGI app on a real (SQLite) database: Nova's codes and bodies, and
hostile input as 4xx."""
import testtools

from nova_moves.db import api as db_api
from tests.unit import fixtures as nm_fixtures

ADMIN = {'X-Auth-Token': 'admin:admin'}
ALICE = {'X-Auth-Token': 'alice:p1'}
BOB = {'X-Auth-Token': 'bob:p2'}


def at(version, headers):
    return dict(headers, **{'OpenStack-API-Version': 'compute %s' % version})


class _Base(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.client = nm_fixtures.app_client(self, 'h1')
        db_api.flavor_create({'flavorid': 'f1', 'name': 'f1', 'vcpus': 1,
                              'memory_mb': 64})

    def call(self, method, path, code, headers=ADMIN, version='2.1',
             **kwargs):
        response = getattr(self.client, method)(
            '/v2.1' + path, headers=at(version, headers), **kwargs)
        self.assertEqual(code, response.status_code, response.get_data())
        return response.get_json() if response.data else None


class ExtraSpecsTest(_Base):

    def test_crud(self):
        path = '/flavors/f1/os-extra_specs'
        self.assertEqual({'extra_specs': {}}, self.call('get', path, 200))
        body = {'extra_specs': {'hw:cpu_policy': 'dedicated', 'n': 2}}
        self.assertEqual(body, self.call('post', path, 200, json=body))
        self.assertEqual({'extra_specs': {'hw:cpu_policy': 'dedicated',
                                          'n': '2'}},
                         self.call('get', path, 200, headers=ALICE))
        self.assertEqual({'n': '2'}, self.call('get', path + '/n', 200))
        self.assertEqual({'n': 'x'}, self.call('put', path + '/n', 200,
                                               json={'n': 'x'}))
        # The flavor's view shows them from 2.61.
        flavor = self.call('get', '/flavors/f1', 200, version='2.61')
        self.assertEqual({'hw:cpu_policy': 'dedicated', 'n': 'x'},
                         flavor['flavor']['extra_specs'])
        self.call('delete', path + '/n', 200)
        self.call('get', path + '/n', 404)
        self.call('delete', path + '/n', 404)

    def test_bad_input_and_policy(self):
        path = '/flavors/f1/os-extra_specs'
        for body in ({'extra_specs': {'a/b': 'x'}},
                     {'extra_specs': {'k' * 256: 'x'}},
                     {'extra_specs': {'': 'x'}},
                     {'extra_specs': {'k': 'v' * 256}},
                     {'extra_specs': {'k': 10 ** 300}},
                     {'extra_specs': {'k': True}},
                     {'extra_specs': {'k': None}},
                     {'extra_specs': []}, {'other': {}}, [1]):
            self.call('post', path, 400, json=body)
        self.call('put', path + '/a', 400, json={'b': 'x'})
        self.call('put', path + '/a', 400, json={'a': 'x', 'b': 'y'})
        self.call('post', path, 403, headers=ALICE,
                  json={'extra_specs': {'a': 'b'}})
        self.call('put', path + '/a', 403, headers=ALICE, json={'a': 'b'})
        self.call('delete', path + '/a', 403, headers=ALICE)
        self.call('post', '/flavors/nope/os-extra_specs', 404,
                  json={'extra_specs': {'a': 'b'}})

    def test_deleting_the_flavor_deletes_its_specs(self):
        self.call('post', '/flavors/f1/os-extra_specs', 200,
                  json={'extra_specs': {'a': 'b'}})
        self.call('delete', '/flavors/f1', 202)
        db_api.flavor_create({'flavorid': 'f1', 'name': 'f1', 'vcpus': 1,
                              'memory_mb': 64})
        self.assertEqual({'extra_specs': {}},
                         self.call('get', '/flavors/f1/os-extra_specs', 200))


class FlavorAccessTest(_Base):

    def setUp(self):
        super().setUp()
        db_api.flavor_create({'flavorid': 'priv', 'name': 'priv',
                              'vcpus': 1, 'memory_mb': 64,
                              'is_public': False})

    def act(self, name, tenant, code, headers=ADMIN):
        return self.call('post', '/flavors/priv/action', code,
                         headers=headers, json={name: {'tenant': tenant}})

    def listed(self, headers):
        return [f['id'] for f in self.call('get', '/flavors', 200,
                                           headers=headers)['flavors']]

    def test_add_list_remove(self):
        self.call('get', '/flavors/priv', 404, headers=ALICE)
        self.assertNotIn('priv', self.listed(ALICE))
        self.assertEqual({'flavor_access': []},
                         self.call('get', '/flavors/priv/os-flavor-access',
                                   200))
        self.assertEqual(
            {'flavor_access': [{'flavor_id': 'priv', 'tenant_id': 'p1'}]},
            self.act('addTenantAccess', 'p1', 200))
        self.act('addTenantAccess', 'p1', 409)
        self.call('get', '/flavors/priv', 200, headers=ALICE)
        self.assertIn('priv', self.listed(ALICE))
        self.assertNotIn('priv', self.listed(BOB))
        self.call('get', '/flavors/priv', 404, headers=BOB)
        self.assertEqual({'flavor_access': []},
                         self.act('removeTenantAccess', 'p1', 200))
        self.act('removeTenantAccess', 'p1', 404)
        self.call('get', '/flavors/priv', 404, headers=ALICE)

    def test_public_flavor_policy_and_bad_input(self):
        self.call('get', '/flavors/f1/os-flavor-access', 404)
        self.call('post', '/flavors/f1/action', 409,
                  json={'addTenantAccess': {'tenant': 'p1'}})
        self.act('addTenantAccess', 'p1', 403, headers=ALICE)
        self.call('get', '/flavors/priv/os-flavor-access', 403,
                  headers=ALICE)
        for body in ({}, {'addTenantAccess': {}},
                     {'addTenantAccess': {'tenant': ''}},
                     {'addTenantAccess': {'tenant': 'p1'},
                      'removeTenantAccess': {'tenant': 'p1'}},
                     {'nope': {'tenant': 'p1'}}, [1]):
            self.call('post', '/flavors/priv/action', 400, json=body)
        self.call('post', '/flavors/nope/action', 404,
                  json={'addTenantAccess': {'tenant': 'p1'}})


class ServerTagsTest(_Base):

    def setUp(self):
        super().setUp()
        self.uuid = db_api.instance_create({
            'display_name': 'vm', 'user_id': 'alice', 'project_id': 'p1',
            'vm_state': 'active', 'task_state': None,
            'flavor': nm_fixtures.flavor()})['uuid']
        self.path = '/servers/%s/tags' % self.uuid

    def tags(self, code=200, **kwargs):
        return self.call('get', self.path, code, headers=ALICE,
                         version='2.26', **kwargs)

    def test_crud(self):
        self.assertEqual({'tags': []}, self.tags())
        self.assertEqual({'tags': ['a', 'b']}, self.call(
            'put', self.path, 200, ALICE, '2.26', json={'tags': ['b', 'a']}))
        self.call('put', self.path + '/c', 201, ALICE, '2.26')
        self.call('put', self.path + '/c', 204, ALICE, '2.26')
        response = self.client.put(
            '/v2.1' + self.path + '/%E6%97%A5 x', headers=at('2.26', ALICE))
        self.assertEqual(201, response.status_code)
        self.assertTrue(response.headers['Location'].endswith(
            '/tags/%E6%97%A5%20x'), response.headers['Location'])
        self.call('delete', self.path + '/\u65e5 x', 204, ALICE, '2.26')
        self.call('get', self.path + '/c', 204, ALICE, '2.26')
        self.call('get', self.path + '/d', 404, ALICE, '2.26')
        server = self.call('get', '/servers/%s' % self.uuid, 200, ALICE,
                           '2.26')['server']
        self.assertEqual(['a', 'b', 'c'], server['tags'])
        self.call('delete', self.path + '/c', 204, ALICE, '2.26')
        self.call('delete', self.path + '/c', 404, ALICE, '2.26')
        self.call('delete', self.path, 204, ALICE, '2.26')
        self.assertEqual({'tags': []}, self.tags())

    def test_limits_versions_and_bad_input(self):
        self.call('get', self.path, 404, ALICE, '2.25')
        self.call('get', self.path, 404, BOB, '2.26')
        self.call('put', self.path, 400, ALICE, '2.26',
                  json={'tags': ['t%d' % i for i in range(51)]})
        self.call('put', self.path, 200, ALICE, '2.26',
                  json={'tags': ['t%d' % i for i in range(50)]})
        self.call('put', self.path + '/one-more', 400, ALICE, '2.26')
        self.call('delete', self.path, 204, ALICE, '2.26')
        for tags in (['a,b'], ['a/b'], ['x' * 61], [''], [1], 'a', None):
            self.call('put', self.path, 400, ALICE, '2.26',
                      json={'tags': tags})
        self.call('put', self.path + '/' + 'x' * 61, 400, ALICE, '2.26')
        self.call('put', self.path + '/a,b', 400, ALICE, '2.26')
        self.assertEqual({'tags': []}, self.tags())


class MultipleCreateTest(_Base):

    def boot(self, code, headers=ALICE, **server):
        body = {'server': dict({'name': 'vm', 'flavorRef': 'f1'}, **server)}
        return self.call('post', '/servers', code, headers=headers,
                         json=body)

    def names(self):
        return sorted(s['name'] for s in self.call(
            'get', '/servers', 200, headers=ALICE)['servers'])

    def test_names_reservation_and_quota(self):
        self.assertIn('server', self.boot(202, min_count=2, max_count=3))
        self.assertEqual(['vm-1', 'vm-2', 'vm-3'], self.names())
        body = self.boot(202, min_count='2', return_reservation_id=True)
        self.assertEqual(['reservation_id'], list(body))
        self.assertEqual(5, len(self.names()))
        # The default quota is 10 instances: 5 more fit, not 6; a max
        # past it is cut to what fits.
        self.boot(403, min_count=6)
        self.assertEqual(5, len(self.names()))
        self.boot(202, min_count=1, max_count=10 ** 9)
        self.assertEqual(10, len(self.names()))

    def test_bad_counts(self):
        for counts in ({'min_count': 0}, {'min_count': '0'},
                       {'min_count': -1}, {'min_count': 'x'},
                       {'min_count': 3, 'max_count': 2},
                       {'max_count': 2 ** 31}, {'min_count': 1.5},
                       {'return_reservation_id': 'maybe'}):
            self.boot(400, **counts)
        self.assertEqual([], self.names())

    def test_reservation_and_list_filters(self):
        body = self.boot(202, min_count=2, return_reservation_id=True)
        self.boot(202, name='other', imageRef='img-2')
        servers = self.call('get', '/servers?reservation_id=%s'
                            % body['reservation_id'], 200,
                            headers=ALICE)['servers']
        self.assertEqual(['vm-1', 'vm-2'], sorted(s['name'] for s in servers))
        shown = self.call('get', '/servers/%s' % servers[0]['id'], 200,
                          version='2.3')['server']
        self.assertEqual(body['reservation_id'],
                         shown['OS-EXT-SRV-ATTR:reservation_id'])
        self.assertEqual(['other'], [s['name'] for s in self.call(
            'get', '/servers?image=img-2', 200, headers=ALICE)['servers']])
        self.assertEqual([], self.call(
            'get', '/servers?changes-since=2999-01-01T00:00:00Z', 200,
            headers=ALICE)['servers'])
        self.call('get', '/servers?changes-since=not-a-date', 400,
                  headers=ALICE)
