"""Scenario loading and validation: bundled files load, defaults fill in,
and every mistake is reported with its place in the file."""
import os
import tempfile

import testtools

from nova_moves.harness import scenario as nm_scenario


def _base(**over):
    data = {'name': 'x',
            'flavors': [{'name': 'small', 'vcpus': 1, 'ram': 512}],
            'servers': [{'count': 2, 'flavor': 'small'}],
            'phases': [{'operation': 'migrate'}]}
    data.update(over)
    return data


class ScenarioTest(testtools.TestCase):

    def test_every_bundled_scenario_is_valid(self):
        names = set(nm_scenario.bundled())
        self.assertTrue({'quickstart', 'resize-storm', 'live-sync-vs-async',
                         'evacuate-dead-host', 'conductor-crash',
                         'scale-100-hosts'} <= names, names)
        for name in names:
            self.assertEqual(name.split('/')[-1],
                             nm_scenario.load(name)['name'])
        # An example for every kind of fault.
        kinds = {f['action'] for name in names if name.startswith(
            'examples/') for f in nm_scenario.load(name)['faults']}
        self.assertEqual(set(nm_scenario.FAULT_ACTIONS), kinds)

    def test_scale_scenario_has_100_hosts_and_1000_servers(self):
        data = nm_scenario.load('scale-100-hosts')
        hosts = [h for p in data['topology']['compute_processes']
                 for h in p['hosts']]
        self.assertEqual(100, len(set(hosts)))
        self.assertLessEqual(len(data['topology']['compute_processes']), 4)
        self.assertEqual(1000, sum(s['count'] for s in data['servers']))

    def test_resize_storm_is_200_resizes(self):
        data = nm_scenario.load('resize-storm')
        servers = sum(s['count'] for s in data['servers'])
        resizes = [p for p in data['phases'] if p['operation'] == 'resize']
        self.assertEqual(200, servers * len(resizes))

    def test_live_sync_vs_async_uses_both_microversions(self):
        data = nm_scenario.load('live-sync-vs-async')
        self.assertEqual({'2.33', '2.34'}, {
            p['microversion'] for p in data['phases']
            if p['operation'] == 'live-migrate'})

    def test_defaults(self):
        data = nm_scenario.validate(_base())
        phase = data['phases'][0]
        self.assertEqual('migrate-1', phase['name'])
        self.assertEqual('all', phase['servers'])
        self.assertEqual('2.1', phase['microversion'])
        self.assertEqual(['compute1', 'compute2'], [
            p['name'] for p in data['topology']['compute_processes']])

    def test_hosts_per_process(self):
        data = nm_scenario.validate(_base(topology={
            'compute': {'vcpus': 8},
            'computes': [{'name': 'c1', 'hosts': 3,
                          'compute': {'cpu_model': 'Skylake'}},
                         {'name': 'c2', 'hosts': ['a', 'b']}]}))
        procs = data['topology']['compute_processes']
        self.assertEqual(['c1-h1', 'c1-h2', 'c1-h3'], procs[0]['hosts'])
        self.assertEqual({'vcpus': 8, 'cpu_model': 'Skylake'},
                         procs[0]['compute'])
        self.assertEqual(['a', 'b'], procs[1]['hosts'])

    def _error(self, data):
        return str(self.assertRaises(nm_scenario.ScenarioError,
                                     nm_scenario.validate, data, 'f.yaml'))

    def test_unknown_operation_names_the_field(self):
        msg = self._error(_base(phases=[{'operation': 'teleport'}]))
        self.assertIn('f.yaml', msg)
        self.assertIn('phases[0].operation', msg)
        self.assertIn('teleport', msg)

    def test_unknown_key(self):
        msg = self._error(_base(phses=[]))
        self.assertIn("'phses' was unexpected", msg)

    def test_bad_microversion(self):
        msg = self._error(_base(phases=[{'operation': 'migrate',
                                         'microversion': '2.x'}]))
        self.assertIn('phases[0].microversion', msg)

    def test_unknown_flavor(self):
        msg = self._error(_base(servers=[{'count': 1, 'flavor': 'huge'}]))
        self.assertIn("servers[0].flavor: unknown flavor 'huge'", msg)
        msg = self._error(_base(phases=[{'operation': 'resize',
                                         'params': {'flavor': 'huge'}}]))
        self.assertIn('phases[0].params.flavor', msg)

    def test_param_not_understood(self):
        msg = self._error(_base(phases=[{'operation': 'confirm',
                                         'params': {'host': 'x'}}]))
        self.assertIn('phases[0].params: host not understood by confirm',
                      msg)

    def test_fault_on_unknown_process_and_phase(self):
        msg = self._error(_base(faults=[
            {'action': 'kill', 'process': 'conductor3'},
            {'action': 'force-down', 'host': 'nowhere', 'phase': 'nope'}]))
        self.assertIn("faults[0].process: 'conductor3'", msg)
        self.assertIn("faults[1].host: 'nowhere'", msg)
        self.assertIn("faults[1].phase: no phase named 'nope'", msg)

    def test_load_by_path_and_yaml_errors(self):
        path = os.path.join(tempfile.mkdtemp(), 's.yaml')
        with open(path, 'w') as f:
            f.write('name: [unclosed\n')
        msg = str(self.assertRaises(nm_scenario.ScenarioError,
                                    nm_scenario.load, path))
        self.assertIn('not valid YAML', msg)
        msg = str(self.assertRaises(nm_scenario.ScenarioError,
                                    nm_scenario.load, 'no-such-scenario'))
        self.assertIn('quickstart', msg)
