"""Our responses against a peer's schemas: tempest's own compute service
clients (tempest.lib) drive the stack, and every response goes through
the response schema tempest checks real Nova with for that microversion
(they raise InvalidHTTPResponseBody on a key Nova would not send, a
missing one, a wrong type or status code).

One gap is tempest's, not ours: it has no hypervisor schema for 2.88+,
where Nova itself adds ``uptime`` to GET /os-hypervisors/detail and
/os-hypervisors/{id}; those two are checked below 2.88 only.
"""
import time

from tempest.lib.services.compute import aggregates_client
from tempest.lib.services.compute import availability_zone_client
from tempest.lib.services.compute import base_compute_client
from tempest.lib.services.compute import extensions_client
from tempest.lib.services.compute import flavors_client
from tempest.lib.services.compute import hypervisor_client
from tempest.lib.services.compute import keypairs_client
from tempest.lib.services.compute import limits_client
from tempest.lib.services.compute import migrations_client
from tempest.lib.services.compute import quotas_client
from tempest.lib.services.compute import servers_client
from tempest.lib.services.compute import services_client
from tempest.lib.services.compute import versions_client

from nova_moves.api import microversion
from tests.functional import base

_SSH_KEY = ('ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGVf3oO5xVqWnS6B3H0d5W'
            'h0m0uYtq0lq9b0d5m4Y1Qy tempest')
VERSIONS = [None, '2.3', '2.16', '2.19', '2.26', '2.47', '2.53', '2.58',
            '2.59', '2.63', '2.71', '2.73', '2.75', '2.80', '2.87', '2.88',
            '2.95', '2.96', '2.98', '2.100', '2.102', '2.104']


class _Auth:
    """What tempest's RestClient asks of an auth provider: our noauth
    token on every request, one endpoint for every service."""

    credentials = None

    def __init__(self, endpoint, token):
        self.endpoint, self.token = endpoint, token

    def auth_request(self, method, url, headers=None, body=None,
                     filters=None):
        headers = dict(headers or {}, **{'X-Auth-Token': self.token})
        if not url.startswith('http'):
            url = self.endpoint.rstrip('/') + '/' + url.lstrip('/')
        return url, headers, body

    def base_url(self, filters, auth_data=None):
        return self.endpoint

    def get_token(self):  # the versions client sends it by hand
        return self.token


class TempestSchemasTest(base.StackTestCase):

    COMPUTES = 2

    def setUp(self):
        super().setUp()
        kwargs = dict(auth_provider=_Auth(self.stack.endpoint, 'admin:admin'),
                      service='compute', region='RegionOne')
        self.servers = servers_client.ServersClient(**kwargs)
        self.migrations = migrations_client.MigrationsClient(**kwargs)
        self.services = services_client.ServicesClient(**kwargs)
        self.hypervisors = hypervisor_client.HypervisorClient(**kwargs)
        self.flavor_client = flavors_client.FlavorsClient(**kwargs)
        self.aggregates = aggregates_client.AggregatesClient(**kwargs)
        self.quotas = quotas_client.QuotasClient(**kwargs)
        self.extensions = extensions_client.ExtensionsClient(**kwargs)
        self.versions = versions_client.VersionsClient(**kwargs)
        self.limits = limits_client.LimitsClient(**kwargs)
        self.keypairs = keypairs_client.KeyPairsClient(**kwargs)
        self.zones = availability_zone_client.AvailabilityZoneClient(
            **kwargs)
        # tempest selects a schema by this module-level microversion.
        self.addCleanup(setattr, base_compute_client,
                        'COMPUTE_MICROVERSION', None)

    def at(self, version):
        base_compute_client.COMPUTE_MICROVERSION = version

    def wait_for(self, server_id, status, timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            server = self.servers.show_server(server_id)['server']
            if server['status'] == status and \
                    not server.get('OS-EXT-STS:task_state'):
                return server
            self.assertLess(time.monotonic(), deadline, server['status'])
            time.sleep(0.3)

    def test_reads_at_every_microversion(self):
        flavor = self.flavor('small')['id']
        self.at(None)
        server_id = self.servers.create_server(
            name='tempest-vm', imageRef='fake',
            flavorRef=flavor)['server']['id']
        self.wait_for(server_id, 'ACTIVE')
        request_id = self.servers.list_instance_actions(
            server_id)['instanceActions'][0]['request_id']
        for version in VERSIONS:
            self.at(version)
            self.servers.show_server(server_id)
            self.servers.list_servers()
            self.servers.list_servers(detail=True)
            self.servers.list_instance_actions(server_id)
            self.servers.show_instance_action(server_id, request_id)
            self.migrations.list_migrations()
            self.services.list_services()
            self.hypervisors.list_hypervisors()
            self.flavor_client.list_flavors(detail=True)
            self.flavor_client.show_flavor(flavor)
            self.aggregates.list_aggregates()
            self.quotas.show_quota_set('admin')
            absolute = self.limits.show_limits()['limits']['absolute']
            self.assertGreaterEqual(absolute['totalInstancesUsed'], 1)
            zones = self.zones.list_availability_zones()
            self.assertEqual(['nova'], [
                z['zoneName'] for z in zones['availabilityZoneInfo']])
            self.zones.list_availability_zones(detail=True)
            if version is None or microversion.APIVersion(version) < '2.88':
                hypervisors = self.hypervisors.list_hypervisors(
                    detail=True)['hypervisors']
                self.hypervisors.show_hypervisor(hypervisors[0]['id'])
                self.hypervisors.show_hypervisor_uptime(
                    hypervisors[0]['id'])
                stats = self.hypervisors.show_hypervisor_statistics()
                self.assertEqual(2, stats['hypervisor_statistics']['count'])
        self.at(None)
        self.versions.list_versions()
        self.versions.get_version_by_url(self.stack.endpoint)
        self.extensions.list_extensions()
        self.extensions.show_extension('nova_moves-move-check')

    def test_keypairs(self):
        """os-keypairs through tempest's client: generated (below 2.92)
        and imported, listed, shown and deleted at each schema's version."""
        for version in (None, '2.2', '2.10', '2.35', '2.92'):
            self.at(version)
            if version != '2.92':
                made = self.keypairs.create_keypair(name='gen')['keypair']
                self.assertIn('private_key', made)
            public = self.keypairs.create_keypair(
                name='imp', public_key=self.keypairs.create_keypair(
                    name='tmp')['keypair']['public_key']
                if version != '2.92' else _SSH_KEY)['keypair']['public_key']
            names = [k['keypair']['name'] for k in
                     self.keypairs.list_keypairs()['keypairs']]
            self.assertIn('imp', names)
            shown = self.keypairs.show_keypair('imp')['keypair']
            self.assertEqual(public, shown['public_key'])
            for name in set(names):
                self.keypairs.delete_keypair(name)
            self.assertEqual([], self.keypairs.list_keypairs()['keypairs'])

    def test_move_actions_and_their_records(self):
        small, large = self.flavor('small')['id'], self.flavor('large', 2)
        self.at(None)
        server_id = self.servers.create_server(
            name='tempest-mover', imageRef='fake',
            flavorRef=small)['server']['id']
        self.wait_for(server_id, 'ACTIVE')
        self.at('2.95')
        self.servers.migrate_server(server_id)
        self.wait_for(server_id, 'VERIFY_RESIZE')
        self.servers.confirm_resize_server(server_id)
        self.wait_for(server_id, 'ACTIVE')
        self.servers.resize_server(server_id, large['id'])
        self.wait_for(server_id, 'VERIFY_RESIZE')
        self.servers.revert_resize_server(server_id)
        self.wait_for(server_id, 'ACTIVE')
        for version in ('2.25', '2.30', '2.68'):
            self.at(version)
            self.servers.live_migrate_server(server_id, host=None,
                                             block_migration='auto')
            self.wait_for(server_id, 'ACTIVE')
        self.servers.list_in_progress_live_migration(server_id)
        for version in (None, '2.23', '2.59', '2.80', '2.95'):
            self.at(version)
            migrations = self.migrations.list_migrations()['migrations']
        self.assertEqual(
            {'migration', 'resize', 'live-migration'},
            {m['migration_type'] for m in migrations})

    def test_lifecycle_actions(self):
        """pause, suspend, reboot, lock, shelve and rebuild through
        tempest's clients: the rebuild response is a whole server, checked
        against tempest's schema of each microversion."""
        flavor = self.flavor('small')['id']
        self.at(None)
        server_id = self.servers.create_server(
            name='tempest-life', imageRef='fake',
            flavorRef=flavor)['server']['id']
        self.wait_for(server_id, 'ACTIVE')
        self.servers.pause_server(server_id)
        self.wait_for(server_id, 'PAUSED')
        self.servers.unpause_server(server_id)
        self.wait_for(server_id, 'ACTIVE')
        self.servers.suspend_server(server_id)
        self.wait_for(server_id, 'SUSPENDED')
        self.servers.resume_server(server_id)
        self.wait_for(server_id, 'ACTIVE')
        self.servers.reboot_server(server_id, type='HARD')
        self.wait_for(server_id, 'ACTIVE')
        self.servers.lock_server(server_id)
        self.at('2.73')
        self.servers.show_server(server_id)
        self.servers.unlock_server(server_id)
        for version in (None, '2.19', '2.26', '2.47', '2.54', '2.57',
                        '2.63', '2.71', '2.73', '2.75', '2.90', '2.95',
                        '2.96', '2.98', '2.100', '2.104'):
            self.at(version)
            self.servers.rebuild_server(server_id, 'fake')
            self.wait_for(server_id, 'ACTIVE')
        self.at(None)
        self.servers.shelve_server(server_id)
        self.wait_for(server_id, 'SHELVED_OFFLOADED')
        self.servers.unshelve_server(server_id)
        self.wait_for(server_id, 'ACTIVE')
