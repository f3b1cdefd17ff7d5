"""OpenStack project conventions that CI would otherwise never notice:
every console script reports pbr's full version, tox has the usual
environments, the zuul job is well formed and bindep lists the system
packages."""
import configparser
import os
import subprocess
import sys

import testtools

from nova_moves import version

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BINDIR = os.path.dirname(sys.executable)


def _setup_cfg():
    parser = configparser.ConfigParser()
    parser.read(os.path.join(ROOT, 'setup.cfg'))
    return parser


def _console_scripts():
    text = _setup_cfg()['entry_points']['console_scripts']
    return [line.split('=')[0].strip() for line in text.splitlines()
            if line.strip()]


class VersionTest(testtools.TestCase):

    def test_release_string_keeps_dev_suffix(self):
        # pbr's version_string() is "0.0.1" for build 0.0.1.dev169; the
        # release string is what tells two builds apart.
        self.assertEqual(version.version_info.release_string(),
                         version.version_string())

    def test_every_console_script_prints_the_pbr_version(self):
        expected = version.version_info.release_string()
        for script in _console_scripts():
            path = os.path.join(BINDIR, script)
            if not os.path.exists(path):
                self.skipTest('%s not installed in this venv' % script)
            proc = subprocess.run([path, '--version'], capture_output=True,
                                  text=True, timeout=60)
            self.assertEqual(0, proc.returncode, script + proc.stderr)
            # argparse prints to stdout (3.10+), oslo.config to stdout too.
            self.assertEqual(expected, (proc.stdout + proc.stderr).strip(),
                             script)
