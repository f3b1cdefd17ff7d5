"""The command line without a stack: list, show, and bad input."""
import contextlib
import io

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
