"""The checkout as an operator installs it: a wheel in an empty venv with
only the declared requirements (no test requirements, no extras), then
every console script's --help and ``nova-moves-manage db sync``. This is
the test that catches an import missing from requirements.txt.

Installs come from pip's cache after the first run; set
NOVA_MOVES_SKIP_CLEAN_INSTALL=1 on a machine without a package index."""
import configparser
import os
import subprocess
import sys
import tempfile

import testtools

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def console_scripts():
    parser = configparser.ConfigParser()
    parser.read(os.path.join(REPO, 'setup.cfg'))
    lines = parser['entry_points']['console_scripts'].strip().splitlines()
    return [line.split('=')[0].strip() for line in lines]


def _run(argv, timeout=300, **kwargs):
    proc = subprocess.run(argv, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, **kwargs)
    if proc.returncode != 0:
        raise AssertionError('%s exited %s\n%s\n%s' % (
            ' '.join(argv), proc.returncode, proc.stdout[-3000:],
            proc.stderr[-3000:]))
    return proc


class CleanInstallTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        if os.environ.get('NOVA_MOVES_SKIP_CLEAN_INSTALL'):
            self.skipTest('NOVA_MOVES_SKIP_CLEAN_INSTALL is set')
        tmp = tempfile.TemporaryDirectory(prefix='nova-moves-install-')
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name

    def _install(self):
        wheels = os.path.join(self.tmp, 'wheels')
        _run([sys.executable, '-m', 'pip', 'wheel', '-q', '--no-deps',
              '-w', wheels, REPO])
        [wheel] = [os.path.join(wheels, name) for name in os.listdir(wheels)]
        venv = os.path.join(self.tmp, 'venv')
        _run([sys.executable, '-m', 'venv', venv])
        # The pip of the fresh venv, so nothing of ours leaks in.
        # --no-compile: byte-compiling every dependency is most of the CPU
        # an install takes, and the scripts compile what they import.
        _run([os.path.join(venv, 'bin', 'python'), '-m', 'pip', 'install',
              '-q', '--disable-pip-version-check', '--no-compile', wheel])
        return os.path.join(venv, 'bin')

    def test_console_scripts_and_db_sync(self):
        bindir = self._install()
        env = {'PATH': bindir + ':/usr/bin:/bin', 'HOME': self.tmp,
               'LANG': 'C.UTF-8'}
        scripts = console_scripts()
        self.assertIn('nova-moves-api', scripts)
        for script in scripts:
            out = _run([os.path.join(bindir, script), '--help'], env=env,
                       timeout=60)
            self.assertIn('usage', out.stdout.lower(), script)

        config = os.path.join(self.tmp, 'nova_moves.conf')
        database = os.path.join(self.tmp, 'nova_moves.sqlite')
        with open(config, 'w') as f:
            f.write('[database]\nconnection = sqlite:///%s\n' % database)
        manage = os.path.join(bindir, 'nova-moves-manage')
        out = _run([manage, '--config-file', config, 'db', 'sync'], env=env,
                   timeout=120)
        self.assertIn('Database at revision', out.stdout)
        out = _run([manage, '--config-file', config, 'db', 'version'],
                   env=env, timeout=60)
        self.assertNotEqual('none', out.stdout.strip())
        self.assertTrue(os.path.getsize(database) > 0)
