"""The scheduler in-process against a temporary SQLite database: filters,
the weigher, the atomic claim and alternates, check_destination."""
import oslo_messaging as messaging
import testtools

from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves.scheduler import filters as scheduler_filters
from nova_moves.scheduler import manager as scheduler_manager
from tests.fixtures import scheduler as fake_scheduler
from tests.unit import fixtures as nm_fixtures


class SchedulerTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.Database())
        nm_fixtures.compute('h1', memory_mb=4096, vcpus=16)
        nm_fixtures.compute('h2', memory_mb=8192, vcpus=16)
        nm_fixtures.compute('h3', memory_mb=2048, zone='az2', vcpus=16)
        self.group = fake_scheduler.FakeServiceGroup()
        self.scheduler = scheduler_manager.SchedulerManager(self.group)
        self.flavor = nm_fixtures.flavor(memory_mb=1024)

    def spec(self, **kwargs):
        spec = {'instance_uuid': 'vm', 'flavor': self.flavor,
                'availability_zone': None, 'project_id': 'p',
                'user_id': 'u', 'ignore_hosts': [],
                'requested_destination': None}
        spec.update(kwargs)
        return spec

    def select(self, consumer='vm', **kwargs):
        return self.scheduler.select_destinations(
            None, self.spec(**kwargs), [consumer], return_alternates=True)[0]

    def test_spreads_by_free_ram_and_claims(self):
        selections = self.select()
        self.assertEqual('h2', selections[0]['host'])
        rp = nm_fixtures.providers()['h2']
        self.assertEqual({rp: {'VCPU': 1, 'MEMORY_MB': 1024, 'DISK_GB': 1}},
                         db_api.allocations_get('vm'))
        self.assertEqual(selections[0]['allocation_request'],
                         db_api.allocations_get('vm'))
        # Alternates: the other hosts, at most max_attempts - 1, unclaimed.
        self.assertEqual(['h1', 'h3'], [s['host'] for s in selections[1:]])
        self.assertEqual({}, db_api.allocations_get('other'))

    def test_alternates_limited_by_max_attempts(self):
        self.useFixture(nm_fixtures.Override('max_attempts', 2, 'scheduler'))
        self.assertEqual(2, len(self.select()))
        self.useFixture(nm_fixtures.Override('max_attempts', 1, 'scheduler'))
        self.assertEqual(1, len(self.select('vm2')))

    def test_disabled_and_down_hosts_are_filtered(self):
        service = db_api.service_get_by_host_and_binary('h2',
                                                        'nova-moves-compute')
        db_api.service_update(service['id'], {'disabled': True})
        self.group.down.add('h1')
        self.assertEqual(['h3'], [s['host'] for s in self.select()])

    def test_unknown_hosts_are_not_no_valid_host(self):
        # Every host that fits is unknown (heartbeats not seen since an
        # outage): HostsUnknown, which the conductor waits on; nothing
        # claimed.
        self.group.unknown.update(['h1', 'h2', 'h3'])
        # Expected by the RPC layer (no traceback logged); the caller
        # gets HostsUnknown itself.
        wrapped = self.assertRaises(messaging.ExpectedException, self.select)
        exc = wrapped.exc_info[1]
        self.assertIsInstance(exc, exception.HostsUnknown)
        self.assertIn('h1, h2, h3', str(exc))
        self.assertIsInstance(exc, exception.NoValidHost)
        self.assertEqual({}, db_api.allocations_all())
        # One known host up: it is chosen, the unknown ones are not.
        self.group.unknown.discard('h3')
        self.assertEqual(['h3'], [s['host'] for s in self.select()])
        # Unknown hosts that would not fit anyway: plain NoValidHost.
        self.group.unknown.add('h3')
        big = nm_fixtures.flavor(memory_mb=100000)
        exc = self.assertRaises(exception.NoValidHost, self.select,
                                'vm2', flavor=big)
        self.assertNotIsInstance(exc, exception.HostsUnknown)
        # Down hosts are down: NoValidHost.
        self.group.unknown.clear()
        self.group.down.update(['h1', 'h2', 'h3'])
        exc = self.assertRaises(exception.NoValidHost, self.select, 'vm3')
        self.assertNotIsInstance(exc, exception.HostsUnknown)

    def test_check_destination_says_unknown(self):
        self.group.unknown.add('h1')
        verdict = self.scheduler.check_destination(None, self.spec(), 'h1')
        self.assertFalse(verdict['valid'])
        self.assertTrue(verdict['unknown'])
        self.assertFalse(self.scheduler.check_destination(
            None, self.spec(), 'h2')['unknown'])

    def test_availability_zone_requested_host_and_ignore_hosts(self):
        self.assertEqual(['h3'], [s['host'] for s in self.select(
            availability_zone='az2')])
        self.assertEqual(['h1'], [s['host'] for s in self.select(
            'vm2', requested_destination={'host': 'h1'})])
        self.assertEqual('h1', self.select(
            'vm3', ignore_hosts=['h2'])[0]['host'])

    def test_no_valid_host_claims_nothing(self):
        big = nm_fixtures.flavor(memory_mb=100000)
        self.assertRaises(exception.NoValidHost, self.select, flavor=big)
        self.assertRaises(exception.NoValidHost, self.select,
                          availability_zone='nowhere')
        self.assertEqual({}, db_api.allocations_all())

    def test_hosts_fill_up(self):
        for i in range(8 + 4 + 2):
            self.select('vm%d' % i)
        self.assertRaises(exception.NoValidHost, self.select, 'one-more')
        usages = db_api.provider_usages()
        self.assertEqual([4096, 8192, 2048], [
            usages[h]['usages']['MEMORY_MB'] for h in ('h1', 'h2', 'h3')])

    def test_check_destination_reports_reasons(self):
        self.assertEqual({'valid': True, 'reasons': [], 'unknown': False},
                         self.scheduler.check_destination(
                             None, self.spec(), 'h1'))
        self.group.down.add('h1')
        result = self.scheduler.check_destination(
            None, self.spec(flavor=nm_fixtures.flavor(memory_mb=5000)),
            'h1')
        self.assertFalse(result['valid'])
        self.assertEqual(2, len(result['reasons']))
        self.assertIn('down', result['reasons'][0])
        self.assertIn('MEMORY_MB', result['reasons'][1])
        self.assertFalse(self.scheduler.check_destination(
            None, self.spec(), 'ghost')['valid'])
        self.assertEqual({}, db_api.allocations_all())  # only a question


class FiltersTest(testtools.TestCase):

    def state(self, **service):
        base = {'disabled': False, 'disabled_reason': None,
                'availability_zone': 'nova'}
        base.update(service)
        return {'host': 'h1', 'service': base, 'up': True}

    def test_each_filter_names_itself(self):
        spec = {'availability_zone': 'az9', 'ignore_hosts': ['h1'],
                'requested_destination': {'host': 'h2'}}
        reasons = scheduler_filters.reject_reasons(
            self.state(disabled=True), spec,
            scheduler_filters.get_filters(list(scheduler_filters.FILTERS)))
        self.assertEqual(['ComputeFilter', 'AvailabilityZoneFilter',
                          'RequestedHostFilter', 'IgnoreHostsFilter'],
                         [r.split(':')[0] for r in reasons])
        self.assertEqual([], scheduler_filters.reject_reasons(
            self.state(), {}, scheduler_filters.get_filters(
                list(scheduler_filters.FILTERS))))

    def test_unknown_filter_is_refused(self):
        self.assertRaises(ValueError, scheduler_filters.get_filters,
                          ['ComputeFilter', 'NoSuchFilter'])
