"""The harness's single private broker (``broker: private``) and its
``memory-alarm`` fault without a broker: validation, the bundled
broker-kill and broker-memory-alarm scenarios (100 moves in flight), and
the alarm set and lifted on the node's own rabbitmqctl."""
import threading

import testtools

from nova_moves.harness import faults as nm_faults
from nova_moves.harness import scenario as nm_scenario
from tests.unit.harness import test_partition


def _scenario(faults, broker='private'):
    data = test_partition._scenario(faults)
    data['topology'] = dict(data['topology'], broker=broker)
    return data


class PrivateBrokerValidationTest(testtools.TestCase):

    def test_private_broker_is_rabbit1(self):
        data = nm_scenario.validate(_scenario([
            {'phase': 'w', 'action': 'kill', 'process': 'rabbit1',
             'restart_after': 5},
            {'phase': 'w', 'action': 'memory-alarm', 'process': 'rabbit1',
             'lift_after': 20}]))
        self.assertEqual(20, data['faults'][1]['lift_after'])
        error = self.assertRaises(
            nm_scenario.ScenarioError, nm_scenario.validate, _scenario([
                {'phase': 'w', 'action': 'kill', 'process': 'rabbit2'}]))
        self.assertIn('not a process of the topology', str(error))

    def test_memory_alarm_needs_a_private_node(self):
        error = self.assertRaises(
            nm_scenario.ScenarioError, nm_scenario.validate, _scenario([
                {'phase': 'w', 'action': 'memory-alarm',
                 'process': 'rabbit1'}], broker='local'))
        self.assertIn('not a private broker node', str(error))
        error = self.assertRaises(
            nm_scenario.ScenarioError, nm_scenario.validate, _scenario([
                {'phase': 'w', 'action': 'memory-alarm',
                 'process': 'compute1'}]))
        self.assertIn('not a private broker node', str(error))

    def test_bundled_scenarios_have_100_moves_in_flight(self):
        for name, action in (('broker-kill', 'kill'),
                             ('broker-memory-alarm', 'memory-alarm')):
            data = nm_scenario.load(name)
            self.assertEqual('private', data['topology']['broker'])
            self.assertEqual(100, sum(s['count'] for s in data['servers']))
            self.assertEqual(100, data['phases'][0]['concurrency'])
            self.assertEqual([(action, 'rabbit1')], [
                (f['action'], f['process']) for f in data['faults']])


class _Node:
    def __init__(self):
        self.calls = []
        self.lifted = threading.Event()

    def ctl(self, *args, timeout=60):
        self.calls.append(args)
        if args[-1] == nm_faults.NORMAL_WATERMARK:
            self.lifted.set()


class _Process:
    def __init__(self):
        self.node = _Node()


class _Stack:
    def __init__(self):
        self.processes = {'rabbit1': _Process()}


class _Runner(nm_faults.FaultsMixin):
    def __init__(self):
        self.stack = _Stack()
        self.faults = []
        self._timers = []
        self.lines = []

    def now(self):
        return 0.0

    def log(self, line):
        self.lines.append(line)


class MemoryAlarmFaultTest(testtools.TestCase):

    def test_alarm_then_lifted_on_that_node(self):
        runner = _Runner()
        runner.apply_fault({'action': 'memory-alarm', 'process': 'rabbit1',
                            'lift_after': 0.01})
        node = runner.stack.processes['rabbit1'].node
        self.assertTrue(node.lifted.wait(5))
        self.assertEqual(
            [('set_vm_memory_high_watermark', nm_faults.ALARM_WATERMARK),
             ('set_vm_memory_high_watermark', nm_faults.NORMAL_WATERMARK)],
            node.calls)
        self.assertEqual(['ok', 'ok'], [f['result'] for f in runner.faults])
        self.assertEqual(['memory-alarm', 'memory-ok'],
                         [f['action'] for f in runner.faults])
