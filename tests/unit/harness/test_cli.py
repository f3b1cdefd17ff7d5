"""The command line without a stack: list, show, and bad input."""
import contextlib
import io
import os
import shutil
import tempfile

import testtools

from nova_moves.harness import cli


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(argv)
    return code, out.getvalue(), err.getvalue()


class CLITest(testtools.TestCase):

    def test_list_names_every_bundled_scenario(self):
        code, out, _ = _run(['list'])
        self.assertEqual(0, code)
        for name in ('quickstart', 'resize-storm', 'live-sync-vs-async',
                     'evacuate-dead-host', 'conductor-crash',
                     'scale-100-hosts'):
            self.assertIn(name, out)

    def test_show_fills_defaults(self):
        code, out, _ = _run(['show', 'quickstart'])
        self.assertEqual(0, code)
        self.assertIn('compute_processes', out)
        self.assertIn("microversion: '2.56'", out)

    def test_unknown_scenario_is_2(self):
        code, _, err = _run(['run', 'no-such-thing', '--no-plot'])
        self.assertEqual(2, code)
        self.assertIn("no scenario file 'no-such-thing'", err)


class ScenarioCommandTest(testtools.TestCase):

    def test_validate_names_file_and_line_of_each_problem(self):
        work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, work)
        bad = os.path.join(work, 'bad.yaml')
        with open(bad, 'w') as f:
            f.write('name: bad\n'                                  # 1
                    'flavors:\n'                                   # 2
                    '  - {name: small, vcpus: 1, ram: 512}\n'      # 3
                    'servers:\n'                                   # 4
                    '  - {count: 2, flavor: small}\n'              # 5
                    'phases:\n'                                    # 6
                    '  - name: go\n'                               # 7
                    '    operation: migrate\n'                     # 8
                    'faults:\n'                                    # 9
                    '  - {phase: go, action: kill,\n'              # 10
                    '     process: conductor3}\n'                  # 11
                    '  - phase: nope\n'                            # 12
                    '    action: force-down\n'                     # 13
                    '    host: compute1\n')                        # 14
        code, out, err = _run(['scenario', 'validate', bad, 'quickstart'])
        self.assertEqual(2, code)
        self.assertIn("%s:11: faults[0].process: 'conductor3' is not a "
                      "process of the topology" % bad, err)
        self.assertIn("%s:12: faults[1].phase: no phase named 'nope'" % bad,
                      err)
        self.assertIn('quickstart: OK', out)
        with open(bad, 'w') as f:
            f.write('name: bad\nphases:\n  - operation: migrate\n'
                    '    microversion: 2.x\n')
        code, _, err = _run(['scenario', 'validate', bad])
        self.assertEqual(2, code)
        self.assertIn("%s:4: phases[0].microversion: '2.x' does not match"
                      % bad, err)

    def test_schema_in_doc_is_current(self):
        from nova_moves.harness import scenario_doc
        doc = os.path.join(os.path.dirname(__file__), '..', '..', '..',
                           'doc', 'harness.md')
        with open(doc) as f:
            text = f.read()
        self.assertTrue(scenario_doc.render() in text,
                        'doc/harness.md is stale: run python -m '
                        'nova_moves.harness.scenario_doc --update '
                        'doc/harness.md')
        code, out, _ = _run(['scenario', 'schema'])
        self.assertEqual(0, code)
        self.assertIn('| `faults[].restart_after` |', out)
        self.assertIn('#### `examples/fault-set-faults`', out)
