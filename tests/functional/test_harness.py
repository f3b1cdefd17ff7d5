"""The harness against real processes: scenarios run through the runner
and the console script, faults applied to real processes, the report's
numbers, and an invariant failure turning into a failed run."""
import json
import os
import subprocess
import sys
import tempfile
import uuid

import testtools
import yaml

from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves.harness import runner as nm_runner
from nova_moves.harness import scenario as nm_scenario
from nova_moves.harness import stack as nm_stack
from tests.functional import base

CONF = conf.CONF
STATS_DIR = tempfile.mkdtemp(prefix='harness-rpc-stats-')


def _small(name, phases, faults=(), servers=4, **extra):
    data = {'name': name,
            'topology': {'conductors': 2,
                         'computes': [{'name': 'compute1', 'hosts': 2},
                                      {'name': 'compute2'}]},
            'flavors': [{'name': 'small', 'vcpus': 1, 'ram': 512,
                         'disk': 1}],
            'servers': [{'count': servers, 'flavor': 'small',
                         'name': name}],
            'phases': phases, 'faults': list(faults)}
    data.update(extra)
    return nm_scenario.validate(data)


def _row(report, operation, version=None):
    for row in report['operations']:
        if row['operation'] == operation and (
                version is None or row['microversion'] == version):
            return row
    raise AssertionError('no %s row in %s' % (operation,
                                              report['operations']))


def _rpc(report, method):
    for row in report['rpc']:
        if row['method'] == method:
            return row
    raise AssertionError('no RPC stats for %s in %s' % (
        method, [r['method'] for r in report['rpc']]))


class HarnessOnStackTest(base.StackTestCase):
    """The runner driving the class's stack (the same topology as the
    scenarios above), so process faults hit real processes."""

    CONDUCTORS = 2
    COMPUTES = [{'name': 'compute1', 'hosts': ['compute1-h1', 'compute1-h2']},
                {'name': 'compute2'}]
    EXTRA_CONF = {'DEFAULT': {'rpc_stats_dir': STATS_DIR},
                  'compute': {'operation_seconds': 'spawn:0.1'}}

    def _run(self, scenario, **kw):
        out = self.useFixture_tempdir()
        runner = nm_runner.Runner(scenario, stack=self.stack, out_dir=out,
                                  rpc_stats_dir=STATS_DIR, **kw)
        return runner.run()

    def useFixture_tempdir(self):
        path = tempfile.mkdtemp(prefix='harness-test-')
        self.addCleanup(__import__('shutil').rmtree, path, True)
        return path

    def test_boot_and_delete_with_conductor_killed(self):
        scenario = _small(
            'burst', [{'name': 'delete', 'operation': 'delete',
                       'servers': {'first': 3}, 'concurrency': 3}],
            faults=[{'phase': 'delete', 'at': 0, 'action': 'kill',
                     'process': 'conductor1', 'restart_after': 1}],
            servers=6)
        report = self._run(scenario)
        boot = _row(report, 'boot')
        self.assertEqual({'ok': 6}, boot['outcomes'])
        self.assertEqual({'202': 6}, boot['http_status'])
        self.assertIsNotNone(boot['api_p99_ms'])
        self.assertGreaterEqual(boot['api_p99_ms'], boot['api_p50_ms'])
        self.assertIsNotNone(boot['e2e_p50_s'])
        delete = _row(report, 'delete')
        self.assertEqual({'ok': 3}, delete['outcomes'])
        # Both faults happened, the kill with SIGKILL's exit status.
        self.assertEqual(['kill', 'restart'],
                         [f['action'] for f in report['faults']])
        self.assertEqual('exit -9', report['faults'][0]['result'])
        self.assertTrue(self.stack.processes['conductor1'].alive())
        # The processes' own numbers: casts from the API, handlers in the
        # conductors, calls to the scheduler.
        build = _rpc(report, 'conductor.build_instances')
        self.assertEqual(6, build['cast']['count'])
        # conductor1 was SIGKILLed: its last second of stats died with it.
        self.assertTrue(1 <= build['handle']['count'] <= 6, build)
        # Counted by the scheduler, which was not killed.
        self.assertEqual(6, _rpc(report, 'scheduler.select_destinations')
                         ['handle']['count'])
        self.assertEqual(3, _rpc(report, 'compute.terminate_instance')
                         ['cast']['count'])
        self.assertTrue(report['invariants']['ok'], report['invariants'])
        # Every server has a timeline that starts in BUILD.
        self.assertEqual(6, len(report['timeline']))
        for history in report['timeline'].values():
            self.assertEqual('BUILD', history[0][1])

    def test_quickstart_cold_migrate_and_confirm(self):
        scenario = nm_scenario.load('quickstart')
        report = self._run(scenario)
        migrate = _row(report, 'migrate', '2.56')
        if migrate['outcomes'].get('rejected') == migrate['requests'] and \
                self._migrate_missing():
            self.skipTest('cold migrate is not on this branch yet')
        self.assertEqual({'ok': 4}, migrate['outcomes'], report['records'])
        self.assertEqual({'ok': 4}, _row(report, 'confirm')['outcomes'])
        self.assertEqual(4, _rpc(report, 'conductor.migrate_server')
                         ['cast']['count'])
        self.assertTrue(report['invariants']['ok'], report['invariants'])

    def _migrate_missing(self):
        server = self.boot('probe')
        response = self.admin.action(server['id'], {'migrate': None})
        self.admin.delete('/servers/%s' % server['id'], expect=204)
        self.admin.wait_for(lambda: self.admin.get(
            '/servers/%s' % server['id']).status_code == 404,
            what='probe deleted')
        return response.status_code == 400 and 'no such action' in \
            response.text.lower()

    def _plant_leak(self):
        """A leaked allocation written straight into the stack's database,
        as a buggy flow would leave it."""
        url = 'sqlite:///%s/state/nova_moves.sqlite' % self.stack.workdir
        CONF.set_override('connection', url, group='database')
        self.addCleanup(CONF.clear_override, 'connection', group='database')
        self.addCleanup(db_api.dispose_engines)
        provider = self.admin.placement()['resource_providers']['compute2']
        consumer = str(uuid.uuid4())
        db_api.allocations_replace(consumer, {provider['uuid']: {'VCPU': 1}})
        return consumer

    def test_cli_fails_when_an_invariant_fails(self):
        path = os.path.join(self.useFixture_tempdir(), 'tiny.yaml')
        with open(path, 'w') as f:
            yaml.safe_dump({
                'name': 'tiny',
                'topology': {'computes': [{'name': 'compute2'}]},
                'flavors': [{'name': 'small', 'vcpus': 1, 'ram': 512,
                             'disk': 1}],
                'servers': [{'count': 2, 'flavor': 'small'}],
                'phases': [{'operation': 'delete'}]}, f)

        def run_cli():
            out = self.useFixture_tempdir()
            proc = subprocess.run(
                [nm_stack._script('nova-moves-harness'), 'run', path,
                 '--endpoint', self.stack.endpoint, '--out', out,
                 '--rpc-stats-dir', STATS_DIR, '--quiet', '--no-plot'],
                capture_output=True, text=True, timeout=300,
                env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
            with open(os.path.join(out, 'report.json')) as f:
                return proc, json.load(f)

        proc, report = run_cli()
        self.assertEqual(0, proc.returncode, proc.stdout + proc.stderr)
        self.assertIn('Invariants: OK', proc.stdout)
        self.assertEqual({'ok': 2}, _row(report, 'delete')['outcomes'])

        consumer = self._plant_leak()
        proc, report = run_cli()
        self.assertEqual(1, proc.returncode, proc.stdout + proc.stderr)
        self.assertIn('Invariants: 1 FAILED', proc.stdout)
        self.assertIn('allocation of %s leaked' % consumer, proc.stdout)
        self.assertFalse(report['invariants']['ok'])
        db_api.allocations_delete(consumer)


class HarnessCommandLineTest(testtools.TestCase):
    """The console script starting a stack of its own, as a user runs it."""

    def test_run_scenario_file_with_own_stack(self):
        work = tempfile.mkdtemp(prefix='harness-cli-')
        self.addCleanup(__import__('shutil').rmtree, work, True)
        path = os.path.join(work, 'own.yaml')
        with open(path, 'w') as f:
            yaml.safe_dump({
                'name': 'own',
                'topology': {'computes': [{'name': 'compute1', 'hosts': 2}],
                             'compute': {'operation_seconds':
                                         {'spawn': 0.1}}},
                'flavors': [{'name': 'small', 'vcpus': 1, 'ram': 512,
                             'disk': 1}],
                'servers': [{'count': 3, 'flavor': 'small'}],
                'faults': [{'phase': 'pause', 'at': 0.3,
                            'action': 'terminate', 'process': 'scheduler1',
                            'restart_after': 0.5}],
                'phases': [{'name': 'pause', 'operation': 'wait',
                            'seconds': 1.5},
                           {'name': 'delete', 'operation': 'delete',
                            'servers': {'first': 1}}]}, f)
        out = os.path.join(work, 'out')
        proc = subprocess.run(
            [nm_stack._script('nova-moves-harness'), 'run', path, '--out',
             out, '--quiet'], capture_output=True, text=True, timeout=400,
            env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
        self.assertEqual(0, proc.returncode, proc.stdout + proc.stderr)
        with open(os.path.join(out, 'report.json')) as f:
            report = json.load(f)
        self.assertEqual({'ok': 3}, _row(report, 'boot')['outcomes'])
        self.assertEqual({'ok': 1}, _row(report, 'delete')['outcomes'])
        self.assertEqual('exit 0', report['faults'][0]['result'])
        self.assertTrue(report['invariants']['ok'])
        # The stack's processes wrote RPC stats the report summed.
        self.assertGreaterEqual(len(report['rpc_processes']), 4)
        for picture in ('timeline.png', 'latency.png'):
            with open(os.path.join(out, picture), 'rb') as f:
                self.assertEqual(b'\x89PNG', f.read(4))
        self.assertIn('boot', proc.stdout)

    def test_bad_scenario_is_exit_2_naming_the_problem(self):
        work = tempfile.mkdtemp(prefix='harness-cli-')
        self.addCleanup(__import__('shutil').rmtree, work, True)
        path = os.path.join(work, 'bad.yaml')
        with open(path, 'w') as f:
            yaml.safe_dump({'name': 'bad', 'phases': [
                {'operation': 'teleport'}]}, f)
        proc = subprocess.run(
            [nm_stack._script('nova-moves-harness'), 'run', path],
            capture_output=True, text=True, timeout=60,
            env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
        self.assertEqual(2, proc.returncode)
        self.assertIn('phases[0].operation', proc.stderr)
        self.assertIn('teleport', proc.stderr)


class BundledFaultScenarioTest(testtools.TestCase):
    """The bundled evacuate-dead-host scenario, stack and all: a compute
    SIGKILLed and forced down, its servers evacuated, then it returns."""

    def test_evacuate_dead_host(self):
        out = tempfile.mkdtemp(prefix='harness-evac-')
        self.addCleanup(__import__('shutil').rmtree, out, True)
        runner = nm_runner.Runner(nm_scenario.load('evacuate-dead-host'),
                                  out_dir=out)
        report = runner.run()
        evacuate = _row(report, 'evacuate', '2.29')
        self.assertGreaterEqual(evacuate['requests'], 6)
        self.assertEqual({'ok': evacuate['requests']}, evacuate['outcomes'],
                         evacuate)
        self.assertEqual({'200': evacuate['requests']},
                         evacuate['http_status'])
        for rec in report['records']:
            if rec['operation'] == 'evacuate':
                self.assertEqual('compute2', rec['host_before'])
                self.assertNotEqual('compute2', rec['host_after'])
        self.assertEqual(
            [('kill', 'exit -9'), ('force-down', 'ok'), ('restart', 'ok'),
             ('force-up', 'ok')],
            [(f['action'], f['result']) for f in report['faults']])
        self.assertEqual(evacuate['requests'], _rpc(
            report, 'conductor.rebuild_instance')['cast']['count'])
        self.assertTrue(report['invariants']['ok'], report['invariants'])
