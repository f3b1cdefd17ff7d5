"""What a server shows (compute/console.py, RPC 1.9): the endpoint reads
the fake hypervisor's guest, refuses a guest that is not on this host
and diagnostics of one that is not running; the client refuses a host
capped below 1.9 and turns a host that does not answer into a clear
error, not a hang."""
import fixtures
import oslo_messaging as messaging
import testtools

from nova_moves.compute import manager as compute_manager
from nova_moves.compute import rpcapi as compute_rpcapi
from nova_moves import conf
from nova_moves import context as nm_context
from nova_moves import exception
from tests.fixtures import rpc as fake_rpc
from tests.unit.compute import served
from tests.unit import fixtures as nm_fixtures

CONF = conf.CONF
UUID = '6d3c1a52-0b5e-4c1f-9a2d-3e8f7b6c5d41'
FLAVOR = {'name': 'm1.small', 'vcpus': 2, 'memory_mb': 1024, 'root_gb': 1}


class ConsoleEndpointTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        CONF([], project='nova_moves', default_config_files=[])
        self.useFixture(nm_fixtures.FakeHosts())
        self.useFixture(fake_rpc.FakeTransport())
        self.compute = served.Served(compute_manager.ComputeManager('h1'))
        self.ctxt = nm_context.get_admin_context()
        self.compute.driver.spawn(UUID, FLAVOR)

    def test_console_is_the_boot_then_each_power_change(self):
        self.compute.driver.set_power(UUID, 'paused', 'pause')
        self.compute.driver.set_power(UUID, 'running', 'unpause')
        lines = self.compute.get_console_output(self.ctxt, UUID).splitlines()
        self.assertEqual(5, len(lines), lines)
        self.assertIn('%s booted on h1 (flavor m1.small' % UUID, lines[0])
        self.assertIn('power running -> paused (pause)', lines[3])
        self.assertIn('power paused -> running (unpause)', lines[4])
        # Nova's count: the final newline ends a piece of its own.
        self.assertEqual(lines[-2:], self.compute.get_console_output(
            self.ctxt, UUID, tail_length=3).splitlines())
        self.assertEqual('', self.compute.get_console_output(
            self.ctxt, UUID, tail_length=0))

    def test_console_is_bounded(self):
        for i in range(100):
            self.compute.driver.set_power(
                UUID, ('shutdown', 'running')[i % 2], 'power')
        output = self.compute.get_console_output(self.ctxt, UUID)
        self.assertEqual(50, len(output.splitlines()))

    def raised(self, method, *args):
        """What ``method`` raises, as the dispatcher sends it back
        (unwrapped from expected_exceptions)."""
        try:
            getattr(self.compute, method)(self.ctxt, *args)
        except messaging.ExpectedException as wrapped:
            return wrapped.exc_info[1]
        self.fail('%s raised nothing' % method)

    def test_a_guest_not_here_is_409(self):
        for method in ('get_console_output', 'get_diagnostics'):
            exc = self.raised(method, 'not-here')
            self.assertIsInstance(exc, exception.GuestNotHere)
            self.assertEqual(409, exc.code)

    def test_diagnostics_of_a_running_guest_from_its_flavor(self):
        diagnostics = self.compute.get_diagnostics(self.ctxt, UUID)
        self.assertEqual(('running', 2, 2, {'maximum': 1024, 'used': 0}),
                         (diagnostics['state'], diagnostics['num_cpus'],
                          len(diagnostics['cpu_details']),
                          diagnostics['memory_details']))

    def test_diagnostics_of_a_stopped_guest_is_409(self):
        self.compute.driver.set_power(UUID, 'shutdown', 'stop')
        exc = self.raised('get_diagnostics', UUID)
        self.assertIsInstance(exc, exception.InstanceInvalidState)
        self.assertIn('power state shutdown', exc.message)


class ConsoleClientTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        CONF([], project='nova_moves', default_config_files=[])
        self.useFixture(fake_rpc.FakeTransport())
        self.ctxt = nm_context.get_admin_context()

    def test_capped_below_1_9_refuses_before_sending(self):
        self.useFixture(nm_fixtures.Override('compute', '1.8',
                                             'upgrade_levels'))
        client = compute_rpcapi.ComputeAPI()
        for call in (lambda: client.get_console_output(
                         self.ctxt, 'h1', UUID, None),
                     lambda: client.get_diagnostics(self.ctxt, 'h1', UUID)):
            exc = self.assertRaises(exception.ComputeRPCTooOld, call)
            self.assertEqual(409, exc.code)
            self.assertIn('RPC version 1.9', exc.message)

    def test_no_answer_is_503_after_the_short_timeout(self):
        client = compute_rpcapi.ComputeAPI()
        sent = {}

        class Prepared:
            def call(self, ctxt, method, **kwargs):
                raise messaging.MessagingTimeout()

        def prepare(**kwargs):
            sent.update(kwargs)
            return Prepared()
        self.useFixture(fixtures.MockPatchObject(client.client, 'prepare',
                                                 prepare))
        self.useFixture(fixtures.MockPatchObject(
            client.client, 'can_send_version', lambda version: True))
        exc = self.assertRaises(exception.ComputeNotResponding,
                                client.get_console_output, self.ctxt, 'h1',
                                UUID, 5)
        self.assertEqual(503, exc.code)
        self.assertEqual({'server': 'h1', 'version': '1.9',
                          'timeout': compute_rpcapi.SHOW_TIMEOUT}, sent)
