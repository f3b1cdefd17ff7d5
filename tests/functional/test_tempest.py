"""tempest's move modules and the lifecycle modules around them (the
'lifecycle' set: issue 26's eleven modules and the live-migration
negatives, ~3 minutes) against a stack with a real Keystone
(tools/run_tempest.py, doc/tempest.md): no tempest test may fail, and
the move and lifecycle tests must actually run (not all be skipped)."""
import json
import os
import subprocess
import sys
import tempfile

import testtools
from testtools import content

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

# Tests that must pass, not merely not fail: the cold and live moves,
# and the lifecycle actions (pause, suspend, lock, shelve/unshelve with
# its snapshot image, rebuild, reboot, password, security groups).
MUST_PASS = {'tempest.api.compute.admin.test_migrations': 4,
             'tempest.api.compute.admin.test_live_migration': 3,
             'tempest.api.compute.servers.test_server_actions': 14,
             'tempest.api.compute.admin.test_servers': 11}


class TempestMovesTest(testtools.TestCase):

    def test_move_modules(self):
        if os.environ.get('NOVA_MOVES_SKIP_KEYSTONE'):
            self.skipTest('NOVA_MOVES_SKIP_KEYSTONE is set')
        workdir = tempfile.mkdtemp(prefix='nm-tempest-test-')
        table = os.path.join(workdir, 'result.json')
        run = subprocess.run(
            [sys.executable, os.path.join(ROOT, 'tools', 'run_tempest.py'),
             '--set', 'lifecycle', '--workdir', workdir, '--json', table],
            capture_output=True, text=True, timeout=1500)
        self.addDetail('tempest', content.text_content(
            run.stdout[-20000:] + run.stderr[-5000:]))
        self.assertEqual(0, run.returncode, 'tempest failures; see detail')
        with open(table) as f:
            rows = json.load(f)
        for module, least in MUST_PASS.items():
            self.assertGreaterEqual(rows.get(module, {}).get('passed', 0),
                                    least, module)
