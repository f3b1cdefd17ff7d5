"""tooz service membership: hosts map to groups, a process may serve
several hosts, and a host is up while its group has a live member."""
import shutil
import tempfile
import uuid

from oslo_config import fixture as config_fixture
import redis
import testtools

from nova_moves import conf
from nova_moves import coordination
from tests.fixtures import threads

CONF = conf.CONF


class MembershipTestMixin:

    def backend_url(self):
        raise NotImplementedError

    def setUp(self):
        super().setUp()
        # Each coordinator stopped waited a second for tooz's pool.
        self.useFixture(threads.QuickThreadPools())
        self.conf = self.useFixture(config_fixture.Config(CONF))
        self.conf.config(group='coordination',
                         backend_url=self.backend_url())

    def coordinator(self, name):
        coordinator = coordination.Coordinator(member_id=name)
        coordinator.start()
        self.addCleanup(coordinator.stop)
        return coordinator

    def test_members_are_host_names(self):
        compute = self.coordinator('compute-proc')
        compute.join('nova-moves-compute', 'fake1')
        compute.join('nova-moves-compute', 'fake2')
        conductor = self.coordinator('conductor-proc')
        conductor.join('nova-moves-conductor', 'ctl')
        reader = self.coordinator('api-proc')
        self.assertEqual({'fake1', 'fake2'},
                         reader.members('nova-moves-compute'))
        self.assertEqual({'ctl'}, reader.members('nova-moves-conductor'))
        self.assertEqual(set(), reader.members('nova-moves-scheduler'))

    def test_stopped_process_takes_its_hosts_down(self):
        compute = self.coordinator('compute-proc')
        compute.join('nova-moves-compute', 'fake1')
        other = self.coordinator('compute-proc-2')
        other.join('nova-moves-compute', 'fake3')
        reader = self.coordinator('api-proc')
        compute.stop()
        self.assertEqual({'fake3'}, reader.members('nova-moves-compute'))

    def test_joining_twice_is_harmless(self):
        compute = self.coordinator('compute-proc')
        compute.join('nova-moves-compute', 'fake1')
        compute.join('nova-moves-compute', 'fake1')
        self.assertEqual({'fake1'}, compute.members('nova-moves-compute'))


class RedisMembershipTest(MembershipTestMixin, testtools.TestCase):

    def setUp(self):
        try:
            redis.Redis(host='127.0.0.1', port=6379,
                        socket_timeout=2).ping()
        except Exception:
            self.skipTest('no redis on 127.0.0.1:6379')
        super().setUp()

    def backend_url(self):
        namespace = 'nm-test-%s' % uuid.uuid4().hex[:8]
        client = redis.Redis(host='127.0.0.1', port=6379)
        self.addCleanup(lambda: [client.delete(key) for key in
                                 client.scan_iter(namespace + '*')])
        return 'redis://127.0.0.1:6379?namespace=%s' % namespace

    def test_membership_is_enabled(self):
        self.assertTrue(coordination.membership_enabled())


class FileMembershipTest(MembershipTestMixin, testtools.TestCase):

    def backend_url(self):
        path = tempfile.mkdtemp(prefix='nm-coord-')
        self.addCleanup(shutil.rmtree, path, ignore_errors=True)
        return 'file://' + path
