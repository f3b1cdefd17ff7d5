"""The conductor's BuildTask with the real database and an in-process
scheduler: on any failure it rolls back to ERROR with a fault and no
allocation left."""
import oslo_messaging as messaging
import testtools

from nova_moves.conductor import db_proxy
from nova_moves.conductor.tasks import build
from nova_moves import context as nm_context
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves.scheduler import manager as scheduler_manager
from tests.unit import fixtures as nm_fixtures
from tests.fixtures import scheduler as fake_scheduler


class RecordingComputeAPI:
    """Stands in for the compute RPC client: records the cast, or fails
    like a broker that cannot deliver it."""

    def __init__(self, fail=False):
        self.fail = fail
        self.casts = []

    def build_and_run_instance(self, ctxt, host, instance_uuid, spec,
                               alternates):
        if self.fail:
            raise messaging.MessageDeliveryFailure('broker gone')
        self.casts.append((host, instance_uuid, alternates))


class BuildTaskTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.Database())
        nm_fixtures.compute('h1', memory_mb=2048)
        nm_fixtures.compute('h2', memory_mb=4096)
        self.ctxt = nm_context.get_admin_context()
        self.flavor = nm_fixtures.flavor(memory_mb=1024)
        self.instance = db_api.instance_create({
            'display_name': 'vm', 'user_id': 'u', 'project_id': 'p',
            'vm_state': 'building', 'task_state': 'scheduling',
            'flavor': self.flavor})
        self.scheduler = scheduler_manager.SchedulerManager(
            fake_scheduler.FakeServiceGroup())

    def task(self, compute, **spec):
        request_spec = {'instance_uuid': self.instance['uuid'],
                        'flavor': self.flavor, 'availability_zone': None,
                        'project_id': 'p', 'user_id': 'u',
                        'ignore_hosts': [], 'requested_destination': None}
        request_spec.update(spec)
        return build.BuildTask(self.ctxt, self.instance['uuid'],
                               request_spec, db_proxy.ComputeDBProxy(),
                               self.scheduler, compute)

    def assert_rolled_back(self, message):
        instance = db_api.instance_get(self.instance['uuid'])
        self.assertEqual(('error', None), (instance['vm_state'],
                                           instance['task_state']))
        fault = db_api.instance_fault_get_latest(self.instance['uuid'])
        # A foreign exception's text (anything) is for admins only, in
        # details; the owner's message is its class name, as in Nova.
        self.assertIn(message, fault['message'] + fault['details'])
        self.assertNotIn('Traceback', fault['message'])
        self.assertEqual(500, fault['code'])
        self.assertEqual({}, db_api.allocations_get(self.instance['uuid']))

    def test_success_claims_then_casts(self):
        compute = RecordingComputeAPI()
        self.task(compute).run()
        instance = db_api.instance_get(self.instance['uuid'])
        self.assertEqual(('h2', 'spawning'), (instance['host'],
                                              instance['task_state']))
        self.assertEqual([('h2', self.instance['uuid'])],
                         [c[:2] for c in compute.casts])
        self.assertEqual(['h1'], [a['host'] for a in compute.casts[0][2]])
        self.assertTrue(db_api.allocations_get(self.instance['uuid']))

    def test_no_valid_host_rolls_back(self):
        task = self.task(RecordingComputeAPI(),
                         flavor=nm_fixtures.flavor(memory_mb=99999))
        self.assertRaises(exception.NoValidHost, task.run)
        self.assert_rolled_back('No valid host')

    def test_failed_cast_releases_the_claim(self):
        task = self.task(RecordingComputeAPI(fail=True))
        self.assertRaises(messaging.MessageDeliveryFailure, task.run)
        self.assert_rolled_back('broker gone')

    def test_reschedule_takes_the_next_alternate_that_fits(self):
        rps = nm_fixtures.providers()
        full = {rps['h1']: {'MEMORY_MB': 2048}}
        db_api.allocations_replace('hog', full)
        alternates = [
            {'host': 'h1', 'nodename': 'h1', 'compute_node_uuid': rps['h1'],
             'allocation_request': {rps['h1']: {'VCPU': 1,
                                                'MEMORY_MB': 1024}}},
            {'host': 'h2', 'nodename': 'h2', 'compute_node_uuid': rps['h2'],
             'allocation_request': {rps['h2']: {'VCPU': 1,
                                                'MEMORY_MB': 1024}}}]
        compute = RecordingComputeAPI()
        self.task(compute, alternates=alternates).run()
        self.assertEqual('h2', compute.casts[0][0])
        self.assertEqual([], compute.casts[0][2])

    def test_no_alternate_left_rolls_back(self):
        task = self.task(RecordingComputeAPI(), alternates=[])
        self.assertRaises(exception.MaxRetriesExceeded, task.run)
        self.assert_rolled_back('No alternate host left')
