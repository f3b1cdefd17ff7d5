"""tox -e releasenotes: the reno notes lint clean and the sphinx build
(warnings are errors) succeeds and shows them."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

import testtools
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
NOTES = os.path.join(ROOT, 'releasenotes', 'notes')
BINDIR = os.path.dirname(sys.executable)
SECTIONS = {'prelude', 'features', 'issues', 'upgrade', 'deprecations',
            'critical', 'security', 'fixes', 'other'}


class ReleaseNotesTest(testtools.TestCase):

    def test_notes_are_well_formed(self):
        paths = glob.glob(os.path.join(NOTES, '*.yaml'))
        self.assertTrue(paths)
        for path in paths:
            name = os.path.basename(path)
            # reno's <slug>-<16 hex>.yaml
            self.assertRegex(name, r'^[a-z0-9-]+-[0-9a-f]{16}\.yaml$')
            with open(path) as f:
                note = yaml.safe_load(f)
            self.assertIsInstance(note, dict, name)
            self.assertLessEqual(set(note), SECTIONS, name)
            for section, items in note.items():
                if section == 'prelude':
                    continue
                self.assertIsInstance(items, list, '%s: %s' % (name,
                                                               section))

    def test_uids_are_unique(self):
        # reno keys notes by the 16-hex suffix: two notes sharing one make
        # "reno lint" fail and one of them vanish from the build.
        seen = {}
        for path in sorted(glob.glob(os.path.join(NOTES, '*.yaml'))):
            uid = os.path.basename(path)[-len('0123456789abcdef.yaml'):-5]
            if uid in seen:
                self.fail('%s and %s share the UID %s' % (
                    seen[uid], os.path.basename(path), uid))
            seen[uid] = os.path.basename(path)

    def test_reno_lint(self):
        reno = os.path.join(BINDIR, 'reno')
        if not os.path.exists(reno):
            self.skipTest('reno not installed')
        if shutil.which('git') is None or not os.path.exists(
                os.path.join(ROOT, '.git')):
            self.skipTest('reno needs the git history')
        proc = subprocess.run([reno, 'lint'], cwd=ROOT, capture_output=True,
                              text=True, timeout=120)
        self.assertEqual(0, proc.returncode, proc.stdout + proc.stderr)

    def test_sphinx_build(self):
        sphinx_build = os.path.join(BINDIR, 'sphinx-build')
        if not os.path.exists(sphinx_build):
            self.skipTest('sphinx not installed')
        if shutil.which('git') is None or not os.path.exists(
                os.path.join(ROOT, '.git')):
            self.skipTest('reno needs the git history')
        out = tempfile.mkdtemp(prefix='nm-relnotes-')
        self.addCleanup(shutil.rmtree, out, ignore_errors=True)
        proc = subprocess.run(
            [sphinx_build, '-q', '-a', '-E', '-W', '-d',
             os.path.join(out, 'doctrees'), '-b', 'html',
             os.path.join(ROOT, 'releasenotes', 'source'),
             os.path.join(out, 'html')],
            cwd=ROOT, capture_output=True, text=True, timeout=300)
        self.assertEqual(0, proc.returncode, proc.stdout + proc.stderr)
        with open(os.path.join(out, 'html', 'unreleased.html')) as f:
            html = f.read()
        # A committed platform note is in the page.
        self.assertIn('RabbitMQ', html)
