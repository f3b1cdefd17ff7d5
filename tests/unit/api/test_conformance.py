"""Nova conformance of the routes issue 26 found lacking, through the WSGI
app on a real (SQLite) database: integer flavor ids, list filters and the
one paging helper (limit=0, max_limit, marker), Nova's binary names in
os-services, hypervisor search/servers, the version documents, server
metadata with its limits, PUT /servers/{id} and quota classes. The
functional twin (tests/functional/test_conformance.py) drives the same
over HTTP against the real processes."""
import testtools

from nova_moves import conf
from nova_moves.db import api as db_api
from tests.unit import fixtures as nm_fixtures

CONF = conf.CONF
ADMIN = {'X-Auth-Token': 'admin:admin'}
ALICE = {'X-Auth-Token': 'alice:p1'}
BOB = {'X-Auth-Token': 'bob:p2'}


def at(version, headers=ADMIN):
    return dict(headers, **{'OpenStack-API-Version': 'compute %s' % version})


class _Base(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.client = nm_fixtures.app_client(self, 'h1', 'h2')

    def get(self, path, headers=ADMIN, status=200):
        response = self.client.get(path, headers=headers)
        self.assertEqual(status, response.status_code,
                         (path, response.get_json()))
        return response.get_json()

    def server(self, name, project='p1', host='h1', flavor=None):
        flavor = flavor or self.small
        return db_api.instance_create({
            'display_name': name, 'user_id': 'alice', 'project_id': project,
            'vm_state': 'active', 'power_state': 1, 'host': host,
            'node': host, 'flavor': flavor})


class FlavorTest(_Base):

    def create(self, body, status=200, version='2.1'):
        response = self.client.post('/v2.1/flavors', json={'flavor': dict(
            {'name': 'f', 'ram': 64, 'vcpus': 1, 'disk': 1}, **body)},
            headers=at(version))
        self.assertEqual(status, response.status_code, response.get_json())
        return response.get_json()

    def test_an_integer_id_is_stored_as_a_string(self):
        flavor = self.create({'id': 53619014})['flavor']
        self.assertEqual('53619014', flavor['id'])
        self.assertEqual('53619014', self.get(
            '/v2.1/flavors/53619014')['flavor']['id'])
        self.assertEqual('1.5', self.create({'name': 'g', 'id': 1.5})[
            'flavor']['id'])
        # The string rules still hold for the string form.
        bad = self.create({'name': 'h', 'id': 'a/b'}, 400)
        self.assertIn("id'", bad['badRequest']['message'])

    def test_filters_sort_and_pages(self):
        for ram, disk, ident in ((512, 1, 'c'), (1024, 5, 'a'),
                                 (2048, 10, 'b')):
            db_api.flavor_create({'flavorid': ident, 'name': ident,
                                  'vcpus': 1, 'memory_mb': ram,
                                  'root_gb': disk})
        db_api.flavor_create({'flavorid': 'p', 'name': 'p', 'vcpus': 1,
                              'memory_mb': 4096, 'root_gb': 1,
                              'is_public': False})

        def ids(query, headers=ADMIN):
            return [f['id'] for f in self.get('/v2.1/flavors' + query,
                                              headers)['flavors']]
        self.assertEqual(['a', 'b', 'c'], ids(''))
        self.assertEqual(['a', 'b'], ids('?minRam=1000'))
        self.assertEqual(['b'], ids('?minDisk=6'))
        self.assertEqual(['b', 'a'], ids('?minRam=1000&sort_dir=desc'))
        self.assertEqual(['c', 'a', 'b'], ids('?sort_key=memory_mb'))
        self.assertEqual(['p'], ids('?is_public=false'))
        self.assertEqual(['a', 'b', 'c', 'p'], ids('?is_public=none'))
        # Non-admins see public flavors whatever they ask.
        self.assertEqual(['a', 'b', 'c'], ids('?is_public=none', ALICE))
        body = self.get('/v2.1/flavors/detail?limit=2')
        self.assertEqual(['a', 'b'], [f['id'] for f in body['flavors']])
        self.assertIn('limit=2&marker=b',
                      body['flavors_links'][0]['href'])
        self.assertEqual(['c'], ids('?limit=2&marker=b'))
        # The link keeps the filters and sort (Nova's _get_next_link).
        body = self.get('/v2.1/flavors/detail?minRam=1000&sort_dir=desc'
                        '&limit=1')
        href = body['flavors_links'][0]['href']
        self.assertIn('minRam=1000&sort_dir=desc&limit=1&marker=b', href)
        self.assertEqual([], ids('?limit=0'))
        for query in ('?marker=nope', '?minRam=x', '?sort_key=bogus',
                      '?sort_dir=up', '?is_public=maybe', '?limit=-1'):
            self.get('/v2.1/flavors' + query, status=400)

    def test_max_limit_caps_every_page(self):
        self.useFixture(nm_fixtures.Override('max_limit', 2, 'api'))
        for ident in 'abc':
            db_api.flavor_create({'flavorid': ident, 'name': ident,
                                  'vcpus': 1, 'memory_mb': 1})
        self.assertEqual(2, len(self.get('/v2.1/flavors?limit=50')[
            'flavors']))


class ServerListTest(_Base):

    def setUp(self):
        super().setUp()
        self.small = nm_fixtures.flavor()
        self.large = nm_fixtures.flavor(vcpus=2)
        self.web = [self.server('web-%d' % i) for i in range(3)]
        self.db = self.server('DB', flavor=self.large)
        self.other = self.server('web-other', project='p2')

    def names(self, query, headers=ALICE, path='/v2.1/servers'):
        return sorted(s['name'] for s in self.get(path + query,
                                                  headers)['servers'])

    def test_name_is_a_case_sensitive_regex(self):
        self.assertEqual(['web-0', 'web-1', 'web-2'],
                         self.names('?name=^web-[0-9]$'))
        self.assertEqual([], self.names('?name=db'))
        self.assertEqual(['DB'], self.names('?name=D.'))
        self.get('/v2.1/servers?name=(', ALICE, 400)

    def test_flavor_filter(self):
        self.assertEqual(['DB'], self.names(
            '?flavor=%s' % self.large['flavorid']))
        self.assertEqual([], self.names('?flavor=nope'))

    def test_limit_zero_is_an_empty_page_and_max_limit_caps(self):
        self.assertEqual([], self.names('?limit=0'))
        self.assertEqual([], self.names('?limit=0&all_tenants=1', ADMIN,
                                        '/v2.1/servers/detail'))
        self.useFixture(nm_fixtures.Override('max_limit', 2, 'api'))
        self.assertEqual(2, len(self.names('?limit=100')))
        body = self.get('/v2.1/servers/detail?all_tenants=1')
        self.assertEqual(2, len(body['servers']))
        self.assertEqual('next', body['servers_links'][0]['rel'])

    def test_marker_pages_and_a_bad_one_is_a_400_with_a_short_echo(self):
        first = self.get('/v2.1/servers?limit=2', ALICE)['servers']
        rest = self.get('/v2.1/servers?marker=%s' % first[-1]['id'],
                        ALICE)['servers']
        self.assertEqual(4, len(first + rest))
        self.assertEqual(4, len({s['id'] for s in first + rest}))
        message = self.get('/v2.1/servers?marker=' + 'x' * 5000, ALICE,
                           400)['badRequest']['message']
        self.assertLess(len(message), 200)
        # The same with a filter (paged here rather than in the database).
        self.get('/v2.1/servers?name=web&marker=nope', ALICE, 400)
        page = self.get('/v2.1/servers?name=web&limit=1', ALICE)['servers']
        self.assertEqual(1, len(page))

    def test_all_tenants_for_admin_only(self):
        self.assertEqual(5, len(self.names('?all_tenants=1', ADMIN)))
        self.assertEqual(5, len(self.names('?all_tenants', ADMIN)))
        self.get('/v2.1/servers?all_tenants=1', ALICE, 403)
        self.get('/v2.1/servers?all_tenants=perhaps', ADMIN, 400)


class PagingEverywhereTest(_Base):
    """limit=0, max_limit and a bad marker on the other lists."""

    def test_migrations_actions_hypervisors_and_drains(self):
        self.small = nm_fixtures.flavor()
        server = self.server('vm')
        db_api.action_start(server['uuid'], 'create', 'req-1', 'alice',
                            'p1')
        db_api.action_start(server['uuid'], 'stop', 'req-2', 'alice', 'p1')
        for path in ('/v2.1/os-hypervisors',
                     '/v2.1/servers/%s/os-instance-actions' % server['uuid'],
                     '/v2.1/os-migrations', '/v2.1/os-host-drains'):
            body = self.get(path + '?limit=0', at('2.95'))
            self.assertEqual([], [v for k, v in body.items()
                                  if not k.endswith('links')][0], path)
            self.get(path + '?marker=nope', at('2.95'), 400)
        self.useFixture(nm_fixtures.Override('max_limit', 1, 'api'))
        self.assertEqual(1, len(self.get('/v2.1/os-hypervisors',
                                         at('2.95'))['hypervisors']))
        actions = self.get('/v2.1/servers/%s/os-instance-actions'
                           % server['uuid'], at('2.95'))
        self.assertEqual(1, len(actions['instanceActions']))
        # Below their paging microversions Nova pages nothing.
        self.assertEqual(2, len(self.get('/v2.1/os-hypervisors',
                                         at('2.32'))['hypervisors']))


class ServicesAndHypervisorsTest(_Base):

    def test_os_services_shows_and_filters_by_novas_binary_names(self):
        db_api.service_report('c1', 'nova-moves-conductor', 'conductor',
                              None)
        services = self.get('/v2.1/os-services')['services']
        self.assertEqual({'nova-compute', 'nova-conductor'},
                         {s['binary'] for s in services})
        self.assertEqual(['h1', 'h2'], sorted(
            s['host'] for s in self.get(
                '/v2.1/os-services?binary=nova-compute')['services']))
        # The console script's name still finds it.
        self.assertEqual(2, len(self.get(
            '/v2.1/os-services?binary=nova-moves-compute')['services']))
        # Legacy (2.11) force-down and disable by Nova's name.
        response = self.client.put(
            '/v2.1/os-services/force-down', headers=at('2.11'),
            json={'host': 'h1', 'binary': 'nova-compute',
                  'forced_down': True})
        self.assertEqual(200, response.status_code, response.get_json())
        response = self.client.put(
            '/v2.1/os-services/disable', headers=at('2.1'),
            json={'host': 'h2', 'binary': 'nova-compute'})
        self.assertEqual(200, response.status_code, response.get_json())
        shown = {s['host']: s for s in self.get(
            '/v2.1/os-services?binary=nova-compute',
            at('2.53'))['services']}
        self.assertTrue(shown['h1']['forced_down'])
        self.assertEqual('disabled', shown['h2']['status'])
        zones = self.get('/v2.1/os-availability-zone/detail')
        hosts = [z['hosts'] for z in zones['availabilityZoneInfo']
                 if z['zoneName'] == 'nova'][0]
        self.assertIn('nova-compute', hosts['h1'])

    def test_hypervisor_search_and_servers_below_2_53(self):
        self.small = nm_fixtures.flavor()
        server = self.server('vm', host='h2')
        found = self.get('/v2.1/os-hypervisors/h2/search')['hypervisors']
        self.assertEqual(['h2'], [h['hypervisor_hostname'] for h in found])
        self.assertNotIn('servers', found[0])
        self.assertEqual(2, len(self.get(
            '/v2.1/os-hypervisors/h/search')['hypervisors']))
        with_servers = {h['hypervisor_hostname']: h for h in self.get(
            '/v2.1/os-hypervisors/h/servers')['hypervisors']}
        self.assertEqual([server['uuid']], [
            s['uuid'] for s in with_servers['h2']['servers']])
        self.assertNotIn('servers', with_servers['h1'])
        self.get('/v2.1/os-hypervisors/nope/search', status=404)
        self.get('/v2.1/os-hypervisors/nope/servers', status=404)
        for path in ('/v2.1/os-hypervisors/h2/search',
                     '/v2.1/os-hypervisors/h2/servers'):
            self.get(path, at('2.53'), 404)
        self.get('/v2.1/os-hypervisors/h2/search', ALICE, 403)

    def test_with_servers_and_pattern_from_2_53(self):
        self.small = nm_fixtures.flavor()
        server = self.server('vm', host='h2')
        listed = {h['hypervisor_hostname']: h for h in self.get(
            '/v2.1/os-hypervisors?with_servers=true',
            at('2.53'))['hypervisors']}
        self.assertEqual(server['uuid'], listed['h2']['servers'][0]['uuid'])
        self.assertNotIn('servers', listed['h1'])
        # 2.75: asked for, the key is there when empty too.
        listed = {h['hypervisor_hostname']: h for h in self.get(
            '/v2.1/os-hypervisors/detail?with_servers=1',
            at('2.75'))['hypervisors']}
        self.assertEqual([], listed['h1']['servers'])
        self.assertEqual(['h2'], [h['hypervisor_hostname'] for h in self.get(
            '/v2.1/os-hypervisors?hypervisor_hostname_pattern=2',
            at('2.53'))['hypervisors']])
        self.get('/v2.1/os-hypervisors?hypervisor_hostname_pattern=2'
                 '&limit=1', at('2.53'), 400)
        self.get('/v2.1/os-hypervisors?with_servers=maybe', at('2.53'), 400)
        self.get('/v2.1/os-hypervisors?hypervisor_hostname_pattern=zz',
                 at('2.53'), 404)


class VersionsTest(_Base):

    def test_root_lists_v2_0_then_v2_1_and_v2_answers(self):
        versions = self.get('/', {})['versions']
        self.assertEqual(['v2.0', 'v2.1'], [v['id'] for v in versions])
        self.assertEqual(('SUPPORTED', '', ''), (
            versions[0]['status'], versions[0]['version'],
            versions[0]['min_version']))
        for version in versions:
            href = version['links'][0]['href']
            path = href[href.index('/v2'):]
            shown = self.get(path, {})['version']
            self.assertEqual(version['id'], shown['id'])
            self.assertEqual(version['links'][0], shown['links'][0])


class MetadataAndUpdateTest(_Base):

    def setUp(self):
        super().setUp()
        self.small = nm_fixtures.flavor()
        self.vm = self.server('vm')
        self.base = '/v2.1/servers/%s' % self.vm['uuid']

    def call(self, method, path, body=None, status=200, headers=ALICE):
        response = self.client.open(self.base + path, method=method,
                                    json=body, headers=headers)
        self.assertEqual(status, response.status_code, response.get_json())
        return response.get_json()

    def test_metadata_routes(self):
        self.assertEqual({'a': '1'}, self.call(
            'POST', '/metadata', {'metadata': {'a': '1'}})['metadata'])
        self.assertEqual({'a': '1', 'b': '2'}, self.call(
            'POST', '/metadata', {'metadata': {'b': '2'}})['metadata'])
        self.assertEqual({'c': '3'}, self.call(
            'PUT', '/metadata', {'metadata': {'c': '3'}})['metadata'])
        self.assertEqual({'d': '4'}, self.call(
            'PUT', '/metadata/d', {'meta': {'d': '4'}})['meta'])
        self.assertEqual({'d': '4'}, self.call('GET', '/metadata/d')['meta'])
        self.call('DELETE', '/metadata/d', status=204)
        self.call('GET', '/metadata/d', status=404)
        self.call('DELETE', '/metadata/d', status=404)
        self.assertEqual({'c': '3'}, self.call('GET', '/metadata')[
            'metadata'])
        self.assertEqual({'c': '3'}, self.call('GET', '')['server'][
            'metadata'])
        # Another project's server is not found.
        self.call('GET', '/metadata', status=404, headers=BOB)

    def test_metadata_limits(self):
        for bad in ({'': 'x'}, {'k' * 256: 'x'}, {'k': 'v' * 256},
                    {'k': 1}):
            self.call('POST', '/metadata', {'metadata': bad}, 400)
        self.call('PUT', '/metadata/a', {'meta': {'b': '1'}}, 400)
        self.call('PUT', '/metadata/a', {'meta': {'a': '1', 'b': '2'}}, 400)
        full = {'k%d' % i: 'v' for i in range(128)}
        self.call('PUT', '/metadata', {'metadata': full})
        over = self.call('POST', '/metadata', {'metadata': {'one': 'more'}},
                         403)
        self.assertIn('metadata_items', over['forbidden']['message'])
        self.call('PUT', '/metadata/extra', {'meta': {'extra': 'x'}}, 403)
        self.assertEqual(128, len(self.call('GET', '/metadata')[
            'metadata']))
        # Replacing within the limit is fine.
        self.call('PUT', '/metadata', {'metadata': {'k0': 'new'}})

    def test_put_server(self):
        server = self.call('PUT', '', {'server': {
            'name': 'renamed', 'accessIPv4': '192.0.2.7',
            'accessIPv6': '2001:DB8::1', 'OS-DCF:diskConfig': 'AUTO',
            'description': 'd'}}, headers=at('2.19', ALICE))['server']
        self.assertEqual(('renamed', '192.0.2.7', '2001:db8::1', 'AUTO',
                          'd'),
                         (server['name'], server['accessIPv4'],
                          server['accessIPv6'], server['OS-DCF:diskConfig'],
                          server['description']))
        self.assertNotIn('OS-EXT-STS:vm_state', server)
        shown = self.call('GET', '', headers=at('2.19', ALICE))['server']
        self.assertEqual(('renamed', '192.0.2.7', 'AUTO', 'd'), (
            shown['name'], shown['accessIPv4'], shown['OS-DCF:diskConfig'],
            shown['description']))
        # description is 2.19's; addresses must be of their family.
        self.call('PUT', '', {'server': {'description': 'x'}}, 400)
        self.call('PUT', '', {'server': {'accessIPv4': '2001:db8::1'}}, 400)
        self.call('PUT', '', {'server': {'accessIPv6': 'nope'}}, 400)
        self.call('PUT', '', {'server': {'name': ''}}, 400)
        self.call('PUT', '', {'server': {'name': 'x'}}, 404, BOB)


class QuotaClassTest(_Base):

    def test_default_class_sets_every_projects_defaults(self):
        shown = self.get('/v2.1/os-quota-class-sets/default')[
            'quota_class_set']
        self.assertEqual('default', shown['id'])
        self.assertIn('floating_ips', shown)
        self.assertNotIn('server_groups', shown)
        response = self.client.put(
            '/v2.1/os-quota-class-sets/default', headers=at('2.57'),
            json={'quota_class_set': {'cores': 7, 'metadata_items': 3}})
        self.assertEqual(200, response.status_code, response.get_json())
        updated = response.get_json()['quota_class_set']
        self.assertNotIn('id', updated)
        self.assertEqual((7, 3), (updated['cores'],
                                  updated['metadata_items']))
        self.assertEqual(
            {'cores', 'ram', 'instances', 'metadata_items', 'key_pairs',
             'server_groups', 'server_group_members'}, set(updated))
        self.assertEqual(7, self.get('/v2.1/os-quota-sets/p1', ALICE)[
            'quota_set']['cores'])
        self.assertEqual(3, self.get('/v2.1/limits', ALICE)['limits'][
            'absolute']['maxServerMeta'])
        at_250 = self.get('/v2.1/os-quota-class-sets/default',
                          at('2.50'))['quota_class_set']
        self.assertIn('injected_files', at_250)
        self.assertNotIn('floating_ips', at_250)
        bad = self.client.put(
            '/v2.1/os-quota-class-sets/default', headers=at('2.57'),
            json={'quota_class_set': {'injected_files': 1}})
        self.assertEqual(400, bad.status_code)
        self.assertEqual(403, self.client.get(
            '/v2.1/os-quota-class-sets/default',
            headers=ALICE).status_code)


class ShortEchoTest(_Base):
    """A 100 KB flavorRef is quoted by a short prefix only (issue 27.7)."""

    def test_unknown_flavor_ref_at_boot_and_resize(self):
        self.small = nm_fixtures.flavor()
        vm = self.server('vm')
        ref = 'f' * 100000
        for path, body in (
                ('/v2.1/servers', {'server': {'name': 'x',
                                              'flavorRef': ref}}),
                ('/v2.1/servers/%s/action' % vm['uuid'],
                 {'resize': {'flavorRef': ref}})):
            response = self.client.post(path, json=body, headers=ALICE)
            self.assertEqual(400, response.status_code)
            message = response.get_json()['badRequest']['message']
            self.assertIn('could not be found', message)
            self.assertLess(len(message), 200)


class FlavorUpdateAndPrivateTest(_Base):

    def test_put_description_from_2_55(self):
        db_api.flavor_create({'flavorid': 'd', 'name': 'd', 'vcpus': 1,
                              'memory_mb': 64})
        body = {'flavor': {'description': 'new'}}
        response = self.client.put('/v2.1/flavors/d', json=body,
                                   headers=at('2.55'))
        self.assertEqual(200, response.status_code, response.get_json())
        self.assertEqual('new', response.get_json()['flavor']['description'])
        self.assertEqual(404, self.client.put(
            '/v2.1/flavors/d', json=body, headers=at('2.54')).status_code)
        self.assertEqual(403, self.client.put(
            '/v2.1/flavors/d', json=body,
            headers=at('2.55', ALICE)).status_code)
        self.assertEqual(400, self.client.put(
            '/v2.1/flavors/d', json={'flavor': {'name': 'x'}},
            headers=at('2.55')).status_code)

    def test_a_private_flavor_is_the_admins_only(self):
        self.small = nm_fixtures.flavor()
        vm = self.server('vm')
        db_api.flavor_create({'flavorid': 'priv', 'name': 'priv',
                              'vcpus': 1, 'memory_mb': 64,
                              'is_public': False})
        self.get('/v2.1/flavors/priv')
        self.get('/v2.1/flavors/priv', ALICE, 404)
        for path, body in (
                ('/v2.1/servers', {'server': {'name': 'x',
                                              'flavorRef': 'priv'}}),
                ('/v2.1/servers/%s/action' % vm['uuid'],
                 {'resize': {'flavorRef': 'priv'}})):
            response = self.client.post(path, json=body, headers=ALICE)
            self.assertEqual(400, response.status_code,
                             response.get_json())


class MetadataOfALockedServerTest(_Base):

    def test_a_locked_servers_metadata_is_the_admins_to_change(self):
        self.small = nm_fixtures.flavor()
        vm = self.server('vm')
        db_api.instance_update(vm['uuid'], {'locked_by': 'admin'})
        path = '/v2.1/servers/%s/metadata' % vm['uuid']
        body = {'metadata': {'a': '1'}}
        self.assertEqual(409, self.client.post(path, json=body,
                                               headers=ALICE).status_code)
        self.assertEqual(409, self.client.delete(
            path + '/a', headers=ALICE).status_code)
        self.assertEqual(200, self.client.get(path,
                                              headers=ALICE).status_code)
        self.assertEqual(200, self.client.post(path, json=body,
                                               headers=ADMIN).status_code)
