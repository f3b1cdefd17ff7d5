"""Server groups in the scheduler, in-process on SQLite: where members
count (allocations, unsettled migrations), the hard filters and the soft
ordering, and check_destination's reasons."""
import testtools

from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves.scheduler import manager as scheduler_manager
from tests.unit import fixtures as nm_fixtures
from tests.fixtures import scheduler as fake_scheduler


class ServerGroupSchedulingTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.Database())
        for host in ('h1', 'h2', 'h3'):
            nm_fixtures.compute(host, memory_mb=8192, vcpus=16)
        self.scheduler = scheduler_manager.SchedulerManager(
            fake_scheduler.FakeServiceGroup())
        self.flavor = nm_fixtures.flavor(memory_mb=512)

    def member(self, group, name):
        instance = db_api.instance_create({
            'display_name': name, 'user_id': 'u', 'project_id': 'p',
            'vm_state': 'building', 'task_state': 'scheduling',
            'flavor': self.flavor})
        db_api.server_group_member_add(group['uuid'], instance['uuid'],
                                       'p', 10)
        return instance['uuid']

    def place(self, uuid):
        spec = {'instance_uuid': uuid, 'flavor': self.flavor,
                'availability_zone': None, 'project_id': 'p',
                'user_id': 'u', 'ignore_hosts': [],
                'requested_destination': None}
        return self.scheduler.select_destinations(
            None, spec, [uuid], return_alternates=False)[0][0]['host']

    def group(self, policy, rules=None):
        return db_api.server_group_create('g', policy, rules or {}, 'p', 'u')

    def test_anti_affinity_spreads_then_refuses(self):
        group = self.group('anti-affinity')
        hosts = [self.place(self.member(group, 'vm%d' % i))
                 for i in range(3)]
        self.assertEqual(['h1', 'h2', 'h3'], sorted(hosts))
        extra = self.member(group, 'vm3')
        self.assertRaises(exception.NoValidHost, self.place, extra)
        self.assertEqual({}, db_api.allocations_get(extra))

    def test_max_server_per_host(self):
        group = self.group('anti-affinity', {'max_server_per_host': 2})
        hosts = [self.place(self.member(group, 'vm%d' % i))
                 for i in range(6)]
        self.assertEqual([2, 2, 2], [hosts.count(h)
                                     for h in ('h1', 'h2', 'h3')])

    def test_affinity_follows_the_first_member(self):
        group = self.group('affinity')
        first = self.place(self.member(group, 'a'))
        self.assertEqual([first] * 3, [self.place(self.member(group, n))
                                       for n in 'bcd'])

    def test_soft_policies_order_and_never_fail(self):
        group = self.group('soft-anti-affinity')
        hosts = [self.place(self.member(group, 'vm%d' % i))
                 for i in range(4)]
        self.assertEqual(3, len(set(hosts[:3])))
        together = self.group('soft-affinity')
        first = self.place(self.member(together, 'x'))
        self.assertEqual(first, self.place(self.member(together, 'y')))

    def test_migrating_member_counts_on_source_and_destination(self):
        group = self.group('anti-affinity')
        a = self.member(group, 'a')
        source = self.place(a)
        # a's move: the source held by the migration, a claim elsewhere.
        migration = db_api.migration_create({
            'instance_uuid': a, 'migration_type': 'migration',
            'status': 'migrating', 'source_compute': source})
        db_api.allocations_move(a, migration['uuid'])
        dest = self.place(a)
        self.assertNotEqual(source, dest)
        b = self.member(group, 'b')
        third = ({'h1', 'h2', 'h3'} - {source, dest}).pop()
        self.assertEqual(third, self.place(b))
        members = db_api.server_group_of_instance(a)
        self.assertEqual({source: 1, dest: 1},
                         db_api.server_group_member_hosts(
                             members, exclude_instance=b))

    def test_check_destination_names_the_group_filter(self):
        group = self.group('anti-affinity')
        a, b = self.member(group, 'a'), self.member(group, 'b')
        host_a = self.place(a)
        verdict = self.scheduler.check_destination(
            None, {'instance_uuid': b, 'flavor': self.flavor,
                   'ignore_hosts': []}, host_a)
        self.assertFalse(verdict['valid'])
        self.assertIn('ServerGroupAntiAffinityFilter', verdict['reasons'][0])

    def test_deleted_servers_leave_the_group(self):
        group = self.group('anti-affinity')
        a = self.member(group, 'a')
        self.place(a)
        db_api.instance_destroy(a)
        self.assertEqual([], db_api.server_group_get(group['uuid'])[
            'members'])

    def test_full_group_refuses_a_member(self):
        group = self.group('affinity')
        self.member(group, 'a')
        instance = db_api.instance_create({
            'display_name': 'b', 'user_id': 'u', 'project_id': 'p',
            'vm_state': 'building', 'flavor': self.flavor})
        self.assertRaises(db_api.ServerGroupFull,
                          db_api.server_group_member_add, group['uuid'],
                          instance['uuid'], 'p', 1)

    def test_plan_claims_nothing_and_counts_planned_members(self):
        group = self.group('anti-affinity')
        a, b = self.member(group, 'a'), self.member(group, 'b')
        specs = [{'instance_uuid': uuid, 'flavor': self.flavor,
                  'ignore_hosts': ['h1'], 'target_hosts': None,
                  'requested_destination': None} for uuid in (a, b)]
        plan = self.scheduler.plan_destinations(None, specs)
        self.assertEqual({'h2', 'h3'}, {plan[a]['host'], plan[b]['host']})
        self.assertEqual({}, db_api.allocations_get(a))
        # Only one host left once h3 is excluded too: the second has none.
        for spec in specs:
            spec['ignore_hosts'] = ['h1', 'h3']
        plan = self.scheduler.plan_destinations(None, specs)
        self.assertEqual('h2', plan[a]['host'])
        self.assertIsNone(plan[b]['host'])
        self.assertTrue(plan[b]['reasons'])
