"""The same_host and different_host hints in the scheduler, in-process
on SQLite (Nova's SameHostFilter and DifferentHostFilter), and the one
request spec every caller builds."""
import testtools

from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves.scheduler import hints
from nova_moves.scheduler import manager as scheduler_manager
from tests.unit import fixtures as nm_fixtures
from tests.fixtures import scheduler as fake_scheduler

FILTERS = ['ComputeFilter', 'SameHostFilter', 'DifferentHostFilter']


class HostHintsTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.Database())
        conf.CONF.set_override('enabled_filters', FILTERS, 'scheduler')
        self.addCleanup(conf.CONF.clear_override, 'enabled_filters',
                        'scheduler')
        for host in ('h1', 'h2', 'h3'):
            nm_fixtures.compute(host, memory_mb=8192, vcpus=16)
        self.scheduler = scheduler_manager.SchedulerManager(
            fake_scheduler.FakeServiceGroup())
        self.flavor = nm_fixtures.flavor(memory_mb=512)

    def server(self, scheduler_hints=None):
        instance = db_api.instance_create({
            'display_name': 'vm', 'user_id': 'u', 'project_id': 'p',
            'vm_state': 'building', 'task_state': 'scheduling',
            'flavor': self.flavor, 'scheduler_hints': scheduler_hints})
        return instance

    def place(self, instance):
        spec = hints.request_spec(instance)
        host = self.scheduler.select_destinations(
            None, spec, [instance['uuid']],
            return_alternates=False)[0][0]['host']
        db_api.instance_update(instance['uuid'], {'host': host})
        return host

    def test_same_host_follows_the_server_named(self):
        first = self.server()
        host = self.place(first)
        for value in (first['uuid'], [first['uuid']]):
            self.assertEqual(host, self.place(
                self.server({'same_host': value})))

    def test_different_host_avoids_every_server_named(self):
        a, b = self.server(), self.server()
        used = {self.place(a)}
        used.add(self.place(self.server({'different_host': a['uuid']})))
        self.assertEqual(2, len(used))
        b_host = self.place(b)
        third = self.server({'different_host': [a['uuid'], b['uuid']]})
        self.assertNotIn(self.place(third),
                         {db_api.instance_get(a['uuid'])['host'], b_host})

    def test_same_host_of_a_server_nowhere_is_no_host(self):
        orphan = self.server()
        lost = self.server({'same_host': orphan['uuid']})
        self.assertRaises(exception.NoValidHost, self.place, lost)
        self.assertEqual({}, db_api.allocations_get(lost['uuid']))

    def test_check_destination_names_the_filter(self):
        first = self.server()
        host = self.place(first)
        other = self.server({'different_host': first['uuid']})
        verdict = self.scheduler.check_destination(
            None, hints.request_spec(other), host)
        self.assertFalse(verdict['valid'])
        self.assertIn('DifferentHostFilter', ' '.join(verdict['reasons']))

    def test_filters_off_ignore_the_hints(self):
        # Nova's default filters do not include them: hints then do
        # nothing, as in Nova.
        conf.CONF.set_override('enabled_filters', ['ComputeFilter'],
                               'scheduler')
        self.scheduler = scheduler_manager.SchedulerManager(
            fake_scheduler.FakeServiceGroup())
        orphan = self.server()
        self.assertIn(self.place(self.server({'same_host': orphan['uuid']})),
                      {'h1', 'h2', 'h3'})


class RequestSpecTest(testtools.TestCase):

    def test_only_host_hints_travel_in_the_spec(self):
        instance = {'uuid': 'i', 'flavor': {'id': 'f'}, 'requested_az': 'z',
                    'project_id': 'p', 'user_id': 'u',
                    'scheduler_hints': {'group': 'g', 'same_host': 'x',
                                        'different_host': ['y', 'z']}}
        spec = hints.request_spec(instance, ['h0'], 'h9', flavor={'id': 2})
        self.assertEqual({'same_host': ['x'], 'different_host': ['y', 'z']},
                         spec['scheduler_hints'])
        self.assertEqual((['h0'], {'host': 'h9'}, {'id': 2}, 'z'), (
            spec['ignore_hosts'], spec['requested_destination'],
            spec['flavor'], spec['availability_zone']))
        self.assertNotIn('scheduler_hints', hints.request_spec(
            dict(instance, scheduler_hints={'group': 'g'})))
