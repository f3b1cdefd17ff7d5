"""The boot path across the real managers over oslo.messaging's fake://
transport (in-process, no broker): API-side cast -> conductor ->
scheduler (call) -> compute build_and_run_instance (cast) -> conductor DB
API (calls) -> ACTIVE, with the instance action's events recorded; and a
spawn failure on every host ends in ERROR with a fault and no allocation."""
import time

import testtools

from nova_moves.compute import rpcapi as compute_rpcapi
from nova_moves.conductor import rpcapi as conductor_rpcapi
from nova_moves import conf
from nova_moves import context as nm_context
from nova_moves.db import api as db_api
from nova_moves import exception
from tests.fixtures import inprocess
from tests.fixtures import rpc as fake_rpc
from tests.unit import fixtures as nm_fixtures

CONF = conf.CONF


# Where the fixture lived before tests/fixtures/; branches written then
# still import it from here.
FakeTransport = fake_rpc.FakeTransport


class BuildOverFakeTransportTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        stack = self.useFixture(inprocess.Stack(hosts=('h1', 'h2')))
        self.computes = {host: stack.compute(host) for host in stack.hosts}
        self.ctxt = nm_context.get_admin_context()

    def boot(self):
        flavor = nm_fixtures.flavor(memory_mb=512)
        instance = db_api.instance_create({
            'display_name': 'vm', 'user_id': 'u', 'project_id': 'p',
            'vm_state': 'building', 'task_state': 'scheduling',
            'flavor': flavor})
        db_api.action_start(instance['uuid'], 'create', self.ctxt.request_id,
                            'u', 'p')
        spec = {'instance_uuid': instance['uuid'], 'flavor': flavor,
                'availability_zone': None, 'project_id': 'p',
                'user_id': 'u', 'ignore_hosts': [],
                'requested_destination': None}
        conductor_rpcapi.ComputeTaskAPI().build_instances(
            self.ctxt, [instance['uuid']], spec)
        return instance['uuid']

    def wait_settled(self, instance_uuid, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            instance = db_api.instance_get(instance_uuid)
            if instance['task_state'] is None and \
                    instance['vm_state'] in ('active', 'error'):
                return instance
            time.sleep(0.05)
        self.fail('%s never settled: %s' % (instance_uuid, instance))

    def events(self, instance_uuid):
        action = db_api.action_get_by_request_id(instance_uuid,
                                                 self.ctxt.request_id)
        return {e['event']: e['result']
                for e in db_api.action_events_get(action['id'])}

    def test_boot_reaches_active_with_events(self):
        instance_uuid = self.boot()
        instance = self.wait_settled(instance_uuid)
        self.assertEqual('active', instance['vm_state'], instance)
        self.assertIn(instance['host'], ('h1', 'h2'))
        self.assertTrue(db_api.allocations_get(instance_uuid))
        # The server is ACTIVE a moment before the compute event finishes.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            events = self.events(instance_uuid)
            if len(events) == 2 and None not in events.values():
                break
            time.sleep(0.05)
        self.assertEqual(
            {'conductor_schedule_and_build_instances': 'Success',
             'compute_build_and_run_instance': 'Success'},
            self.events(instance_uuid))

    def test_fault_injection_rpc_only_with_test_hooks(self):
        # Over the (fake) bus, as the API or anyone on it would call it.
        rpc = compute_rpcapi.ComputeAPI()
        exc = self.assertRaises(
            exception.TestHooksDisabled, rpc.set_fault_injection,
            self.ctxt, 'h1', ['spawn'])
        self.assertEqual(403, exc.code)
        self.assertEqual(set(), self.computes['h1'].driver._fail)
        self.useFixture(nm_fixtures.Override('enable_test_hooks', True,
                                             'api'))
        rpc.set_fault_injection(self.ctxt, 'h1', ['spawn'])
        self.assertEqual({'spawn'}, self.computes['h1'].driver._fail)

    def test_spawn_failing_everywhere_is_error_without_allocation(self):
        for compute in self.computes.values():
            compute.driver.set_fault_injection(['spawn'])
        instance_uuid = self.boot()
        instance = self.wait_settled(instance_uuid)
        self.assertEqual('error', instance['vm_state'])
        self.assertIsNotNone(db_api.instance_fault_get_latest(instance_uuid))
        self.assertEqual({}, db_api.allocations_get(instance_uuid))
