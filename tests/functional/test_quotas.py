"""Quotas on the real stack: os-quota-sets, boot and resize-up enforcement
(403 with Nova's message), and racing boots that fill the quota exactly,
on SQLite, PostgreSQL and MySQL."""
import concurrent.futures

from tests.functional import base
from tests.functional import private_postgres
from tests.functional import databases


class QuotaMixin:
    """A project of its own per test, and the boot race every database
    must win (mixed into a StackTestCase)."""

    DEFAULT_QUOTAS = True
    # Two API processes: racing boots do not share a process or a pool.
    EXTRA_CONF = {'api': {'workers': 2}}

    def setUp(self):
        super().setUp()
        self.project = 'quota-%s' % self.id().rsplit('.', 1)[-1][-20:]
        self.user = self.admin.as_user('carol:%s' % self.project)

    def set_quota(self, expect=200, **values):
        return self.admin.put('/os-quota-sets/%s' % self.project,
                              {'quota_set': values},
                              expect=expect).json()

    def delete_servers(self):
        for server in self.user.get('/servers', expect=200).json()[
                'servers']:
            self.user.delete('/servers/%s' % server['id'], expect=204)

    def test_racing_boots_fill_the_quota_exactly(self):
        """24 boots at once, 2 API workers, quota 10: exactly 10 servers.
        (A count-create-recount check, Nova's, never exceeds but refuses
        racers that would have fitted: 9 of 10 was seen on PostgreSQL.)"""
        self.addCleanup(self.delete_servers)
        self.set_quota(instances=10)
        flavor = self.flavor('qc', vcpus=1, ram=128)

        def boot(i):
            return self.user.post('/servers', {'server': {
                'name': 'race%d' % i, 'flavorRef': flavor['id'],
                'imageRef': 'fake', 'networks': 'none'}}).status_code

        with concurrent.futures.ThreadPoolExecutor(24) as pool:
            codes = list(pool.map(boot, range(24)))
        self.assertEqual((10, 14), (codes.count(202), codes.count(403)),
                         codes)
        servers = self.user.get('/servers', expect=200).json()['servers']
        self.assertEqual(10, len(servers))
        for server in servers:
            self.user.wait_for_status(server['id'], ('ACTIVE', 'ERROR'),
                                      timeout=120)


class QuotaTest(QuotaMixin, base.StackTestCase):

    COMPUTES = 2  # a resize needs another host

    def test_defaults_and_fields(self):
        quota = self.user.get('/os-quota-sets/%s' % self.project,
                              version='2.57', expect=200).json()['quota_set']
        self.assertEqual((self.project, 10, 20, 51200),
                         (quota['id'], quota['instances'], quota['cores'],
                          quota['ram']))
        self.assertEqual({'id', 'instances', 'cores', 'ram', 'key_pairs',
                          'metadata_items', 'server_groups',
                          'server_group_members'}, set(quota))
        old = self.user.get('/os-quota-sets/%s' % self.project,
                            version='2.1', expect=200).json()['quota_set']
        self.assertIn('floating_ips', old)
        self.assertIn('injected_files', old)
        defaults = self.user.get('/os-quota-sets/%s/defaults' % self.project,
                                 expect=200).json()['quota_set']
        self.assertEqual(10, defaults['instances'])

    def test_only_admin_sets_and_owner_reads(self):
        response = self.user.put('/os-quota-sets/%s' % self.project,
                                 {'quota_set': {'instances': 100}})
        self.assertEqual(403, response.status_code)
        other = self.admin.as_user('mallory:elsewhere')
        self.assertEqual(403, other.get(
            '/os-quota-sets/%s' % self.project).status_code)
        self.assertEqual(400, self.admin.put(
            '/os-quota-sets/%s' % self.project,
            {'quota_set': {'instances': -2}}).status_code)
        self.assertEqual(400, self.admin.put(
            '/os-quota-sets/%s' % self.project,
            {'quota_set': {'cores': 'many'}}).status_code)
        quota = self.set_quota(instances='7')['quota_set']
        self.assertEqual(7, quota['instances'])
        self.assertNotIn('id', quota)  # as Nova's update
        self.admin.delete('/os-quota-sets/%s' % self.project, expect=202)
        self.assertEqual(10, self.user.get(
            '/os-quota-sets/%s' % self.project,
            expect=200).json()['quota_set']['instances'])

    def test_boot_over_instances_quota_is_403(self):
        self.addCleanup(self.delete_servers)
        self.set_quota(instances=2)
        flavor = self.flavor('q', vcpus=1, ram=256)
        for i in range(2):
            self.boot('q%d' % i, flavor, client=self.user)
        response = self.user.post('/servers', {'server': {
            'name': 'q3', 'flavorRef': flavor['id'], 'imageRef': 'fake',
            'networks': 'none'}})
        self.assertEqual(403, response.status_code, response.text)
        self.assertEqual(
            'Quota exceeded for instances: Requested 1, but already used 2 '
            'of 2 instances', response.json()['forbidden']['message'])
        detail = self.user.get('/os-quota-sets/%s/detail' % self.project,
                               expect=200).json()['quota_set']
        self.assertEqual({'limit': 2, 'in_use': 2, 'reserved': 0},
                         detail['instances'])
        self.assertEqual(2, detail['cores']['in_use'])
        # Below the usage only with force.
        self.assertEqual(400, self.admin.put(
            '/os-quota-sets/%s' % self.project,
            {'quota_set': {'instances': 1}}).status_code)
        self.set_quota(instances=1, force=True)

    def test_ram_and_resize_up_checks_the_delta(self):
        self.addCleanup(self.delete_servers)
        small = self.flavor('qs', vcpus=1, ram=512)
        big = self.flavor('qb', vcpus=2, ram=1024)
        self.set_quota(cores=2, ram=1024)
        server = self.boot('qr', small, client=self.user)
        response = self.user.post('/servers', {'server': {
            'name': 'qbig', 'flavorRef': big['id'], 'imageRef': 'fake',
            'networks': 'none'}})
        self.assertEqual(403, response.status_code)
        self.assertIn('Quota exceeded for cores: Requested 2, but already '
                      'used 1 of 2 cores',
                      response.json()['forbidden']['message'])
        # 1 -> 2 cores and 512 -> 1024 MiB fit exactly: allowed.
        self.set_quota(cores=2, ram=1000)
        response = self.user.action(server['id'], {'resize': {
            'flavorRef': big['id']}})
        self.assertEqual(403, response.status_code)
        self.assertIn('Quota exceeded for ram: Requested 512, but already '
                      'used 512 of 1000 ram',
                      response.json()['forbidden']['message'])
        self.set_quota(ram=1024)
        self.user.action(server['id'], {'resize': {'flavorRef': big['id']}},
                         expect=202)
        self.user.wait_for_status(server['id'], ('VERIFY_RESIZE', 'ERROR'),
                                  timeout=120)
        self.user.action(server['id'], {'confirmResize': None}, expect=204)
        self.user.wait_for_status(server['id'], ('ACTIVE',), timeout=60)


class QuotaPostgresTest(private_postgres.PrivatePostgres, QuotaMixin,
                        base.StackTestCase):
    """The race on PostgreSQL, where the lock is an advisory lock."""

    COMPUTES = 1


class QuotaMySQLTest(QuotaMixin, databases.FreshDatabase):
    """The race on MySQL/MariaDB (openstack_citest; skipped without it),
    where the lock is the count's FOR UPDATE."""

    COMPUTES = 1
    ADMIN_URL = databases.MYSQL_ADMIN_URL
    URL_FORMAT = databases.MYSQL_URL_FORMAT
