"""Nova conformance over HTTP against the real processes (issue 26's
defects, 27's paging): every response of the routes added or changed
goes through the schema tempest checks real Nova with (tempest.lib's
service clients raise on a key Nova would not send, a missing one or a
wrong status), and the behaviour is checked on top: integer flavor ids,
server metadata and its limit, PUT /servers/{id}, access IPs and disk
config kept, Nova's binary names in os-services, hypervisor search and
servers, the v2.0 version, quota classes, list filters and paging with a
small [api] max_limit."""
from tempest.lib import exceptions as lib_exc
from tempest.lib.services.compute import base_compute_client
from tempest.lib.services.compute import flavors_client
from tempest.lib.services.compute import hypervisor_client
from tempest.lib.services.compute import quota_classes_client
from tempest.lib.services.compute import servers_client
from tempest.lib.services.compute import services_client
from tempest.lib.services.compute import versions_client

from tests.functional import base
from tests.functional import test_tempest_schemas

MAX_LIMIT = 3


class ConformanceTest(base.StackTestCase):

    COMPUTES = 2
    EXTRA_CONF = {'api': {'max_limit': MAX_LIMIT}}

    def setUp(self):
        super().setUp()
        kwargs = dict(auth_provider=test_tempest_schemas._Auth(
            self.stack.endpoint, 'admin:admin'), service='compute',
            region='RegionOne')
        self.servers = servers_client.ServersClient(**kwargs)
        self.services = services_client.ServicesClient(**kwargs)
        self.hypervisors = hypervisor_client.HypervisorClient(**kwargs)
        self.flavor_client = flavors_client.FlavorsClient(**kwargs)
        self.quota_classes = quota_classes_client.QuotaClassesClient(
            **kwargs)
        self.versions = versions_client.VersionsClient(**kwargs)
        self.addCleanup(setattr, base_compute_client,
                        'COMPUTE_MICROVERSION', None)

    def at(self, version):
        base_compute_client.COMPUTE_MICROVERSION = version

    def test_integer_flavor_id_and_flavor_list(self):
        self.at(None)
        flavor = self.flavor_client.create_flavor(
            name='int-id', ram=64, vcpus=1, disk=1, id=53619014)['flavor']
        self.assertEqual('53619014', flavor['id'])
        self.flavor_client.show_flavor(53619014)
        listed = self.flavor_client.list_flavors(
            detail=True, minRam=64, minDisk=1, sort_key='memory_mb',
            limit=1)
        self.assertEqual(1, len(listed['flavors']))
        self.assertEqual('next', listed['flavors_links'][0]['rel'])
        self.assertRaises(lib_exc.BadRequest,
                          self.flavor_client.list_flavors, marker='nope')
        self.flavor_client.delete_flavor(flavor['id'])

    def test_server_fields_metadata_and_update(self):
        small, large = self.flavor('small')['id'], self.flavor('large', 2)
        self.at('2.19')
        server = self.servers.create_server(
            name='conform', imageRef='fake', flavorRef=small,
            metadata={'role': 'web'}, accessIPv4='192.0.2.10',
            accessIPv6='2001:db8::10', description='kept',
            **{'OS-DCF:diskConfig': 'AUTO'})['server']
        self.assertEqual('AUTO', server['OS-DCF:diskConfig'])
        self.admin.wait_for_status(server['id'], ('ACTIVE',))
        shown = self.servers.show_server(server['id'])['server']
        self.assertEqual(
            ({'role': 'web'}, '192.0.2.10', '2001:db8::10', 'AUTO', 'kept'),
            (shown['metadata'], shown['accessIPv4'], shown['accessIPv6'],
             shown['OS-DCF:diskConfig'], shown['description']))
        for version in (None, '2.9', '2.19', '2.26', '2.63', '2.71', '2.73',
                        '2.75', '2.95'):
            self.at(version)
            updated = self.servers.update_server(
                server['id'], name='renamed-%s' % version)['server']
            self.assertEqual('renamed-%s' % version, updated['name'])
        self.at(None)
        sid = server['id']
        self.assertEqual({'role': 'web', 'a': '1'}, self.servers.
                         update_server_metadata(sid, {'a': '1'})['metadata'])
        self.assertEqual({'b': '2'}, self.servers.set_server_metadata(
            sid, {'b': '2'})['metadata'])
        self.servers.set_server_metadata_item(sid, 'c', {'c': '3'})
        self.assertEqual({'c': '3'}, self.servers.show_server_metadata_item(
            sid, 'c')['meta'])
        self.servers.delete_server_metadata_item(sid, 'c')
        self.assertEqual({'b': '2'}, self.servers.list_server_metadata(
            sid)['metadata'])
        # maxServerMeta (128) holds: the 129th item is a 403, as Nova.
        self.servers.set_server_metadata(
            sid, {'k%d' % i: 'v' for i in range(128)})
        self.assertRaises(lib_exc.Forbidden,
                          self.servers.update_server_metadata, sid,
                          {'one': 'more'})
        self.assertRaises(lib_exc.BadRequest,
                          self.servers.update_server_metadata, sid,
                          {'k': 'v' * 256})
        self.assertEqual(128, len(self.servers.list_server_metadata(
            sid)['metadata']))
        # OS-DCF:diskConfig on a resize is kept and shown.
        self.servers.resize_server(sid, large['id'],
                                   **{'OS-DCF:diskConfig': 'MANUAL'})
        self.admin.wait_for_status(sid, ('VERIFY_RESIZE',))
        self.assertEqual('MANUAL', self.servers.show_server(sid)['server'][
            'OS-DCF:diskConfig'])
        self.servers.confirm_resize_server(sid)
        self.admin.wait_for_status(sid, ('ACTIVE',))
        self.servers.delete_server(sid)

    def test_lists_filter_and_page_as_nova(self):
        small, large = self.flavor('small'), self.flavor('large', 2)
        for name, flavor in (('pg-a', small), ('pg-b', small),
                             ('pg-c', small), ('PG-big', large)):
            self.boot(name, flavor=flavor)
        self.at(None)

        def names(**params):
            return sorted(s['name'] for s in self.servers.list_servers(
                **params)['servers'])
        self.assertEqual([], names(limit=0))
        self.assertEqual([], names(limit=0, all_tenants=1))
        # Four match; [api] max_limit caps the page.
        self.assertEqual(MAX_LIMIT, len(names(limit=100, name='^(pg|PG)-')))
        self.assertEqual(['pg-a', 'pg-b', 'pg-c'], names(name='^pg-'))
        self.assertEqual(['PG-big'], names(flavor=large['id'],
                                           name='^PG'))
        page = self.servers.list_servers(detail=True, limit=2)
        self.assertEqual('next', page['servers_links'][0]['rel'])
        self.assertRaises(lib_exc.BadRequest, self.servers.list_servers,
                          marker='x' * 300)
        response = self.admin.get('/servers', params={'marker': 'x' * 300})
        self.assertEqual(400, response.status_code)
        self.assertLess(len(response.text), 300)
        for path in ('/os-migrations', '/os-hypervisors',
                     '/os-host-drains'):
            body = self.admin.get(path, params={'limit': 0},
                                  version='2.95', expect=200).json()
            self.assertEqual([], [v for k, v in body.items()
                                  if not k.endswith('links')][0], path)

    def test_services_hypervisors_versions_and_quota_classes(self):
        self.at(None)
        binaries = {s['binary'] for s in self.services.list_services()[
            'services']}
        self.assertEqual({'nova-compute', 'nova-conductor',
                          'nova-scheduler'}, binaries)
        self.assertEqual(['compute1', 'compute2'], sorted(
            s['host'] for s in self.services.list_services(
                binary='nova-compute')['services']))
        for version in (None, '2.33', '2.52'):
            self.at(version)
            found = self.hypervisors.search_hypervisor('compute')
            self.assertEqual(2, len(found['hypervisors']))
            self.hypervisors.list_servers_on_hypervisor('compute1')
        self.at('2.53')
        self.assertRaises(lib_exc.NotFound,
                          self.hypervisors.search_hypervisor, 'compute')
        listed = self.hypervisors.list_hypervisors(
            detail=True, with_servers=True,
            hypervisor_hostname_pattern='compute1')['hypervisors']
        self.assertEqual(['compute1'], [h['hypervisor_hostname']
                                        for h in listed])
        self.at(None)
        versions = self.versions.list_versions()['versions']
        self.assertEqual(['v2.0', 'v2.1'], [v['id'] for v in versions])
        for version in versions:
            link = [x for x in version['links'] if x['rel'] == 'self'][0]
            shown = self.versions.get_version_by_url(link['href'])
            self.assertEqual([link], [x for x in shown['version']['links']
                                      if x['rel'] == 'self'])
        for version in (None, '2.50', '2.57'):
            self.at(version)
            self.quota_classes.show_quota_class_set('default')
            self.quota_classes.update_quota_class_set('default', cores=200)
        self.at(None)
        self.assertEqual(200, self.admin.get(
            '/os-quota-sets/fresh-project/defaults',
            expect=200).json()['quota_set']['cores'])
