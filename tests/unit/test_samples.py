"""tools/check-samples.sh: the checked-in configuration and policy samples
match what the generators produce now, and staleness is caught."""
import os
import shutil
import subprocess
import sys
import tempfile

import testtools

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, 'tools', 'check-samples.sh')
ETC = os.path.join(ROOT, 'etc', 'nova_moves')
BINDIR = os.path.dirname(sys.executable)


class CheckSamplesTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        if not os.path.exists(os.path.join(BINDIR, 'oslo-config-generator')):
            self.skipTest('oslo generators not installed next to %s'
                          % sys.executable)

    def check(self, *args, samples_dir=None):
        env = dict(os.environ, BINDIR=BINDIR)
        if samples_dir:
            env['SAMPLES_DIR'] = samples_dir
        return subprocess.run(['bash', SCRIPT] + list(args), env=env,
                              capture_output=True, text=True, timeout=300)

    def copy_of_etc(self):
        tmp = tempfile.mkdtemp(prefix='nm-samples-')
        self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        copy = os.path.join(tmp, 'nova_moves')
        shutil.copytree(ETC, copy)
        return copy

    def test_checked_in_samples_are_current(self):
        proc = self.check()
        self.assertEqual(0, proc.returncode, proc.stdout + proc.stderr)
        self.assertIn('samples are up to date', proc.stdout)

    def test_samples_cover_our_options_and_rules(self):
        with open(os.path.join(ETC, 'nova_moves.conf.sample')) as f:
            config = f.read()
        for needle in ('[coordination]', '#backend_url =', '[compute]',
                       '#fake_hosts =', '[oslo_messaging_rabbit]', '#ssl =',
                       '#connection = sqlite:///$state_path/'
                       'nova_moves.sqlite', '#host = <hostname>'):
            self.assertIn(needle, config)
        with open(os.path.join(ETC, 'policy.yaml.sample')) as f:
            policy = f.read()
        self.assertIn('#"os_compute_api:os-migrate-server:migrate_live": '
                      '"rule:project_manager_or_admin"', policy)

    def test_stale_config_sample_fails(self):
        copy = self.copy_of_etc()
        path = os.path.join(copy, 'nova_moves.conf.sample')
        with open(path) as f:
            text = f.read()
        with open(path, 'w') as f:
            f.write(text.replace('#max_attempts = 3', '#max_attempts = 4'))
        proc = self.check('config', samples_dir=copy)
        self.assertEqual(1, proc.returncode, proc.stdout + proc.stderr)
        self.assertIn('-#max_attempts = 4', proc.stdout)
        self.assertIn('nova_moves.conf.sample is stale', proc.stderr)
        self.assertIn('tox -e genconfig -- --update', proc.stderr)

        proc = self.check('--update', 'config', samples_dir=copy)
        self.assertEqual(0, proc.returncode, proc.stderr)
        self.assertEqual(0, self.check('config', samples_dir=copy).returncode)

    def test_stale_policy_sample_fails(self):
        copy = self.copy_of_etc()
        os.unlink(os.path.join(copy, 'policy.yaml.sample'))
        open(os.path.join(copy, 'policy.yaml.sample'), 'w').close()
        proc = self.check('policy', samples_dir=copy)
        self.assertEqual(1, proc.returncode, proc.stdout + proc.stderr)
        self.assertIn('policy.yaml.sample is stale', proc.stderr)
        self.assertIn('tox -e genpolicy', proc.stderr)

    def test_bad_argument(self):
        self.assertEqual(2, self.check('everything').returncode)
