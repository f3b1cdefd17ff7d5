"""OpenStack project conventions that CI would otherwise never notice:
pbr's full version, tox has the usual environments, the zuul job is
well formed and bindep lists the system packages. That every console
script prints that version starts the scripts: it is in
tests/functional/test_standalone_processes.py."""
import configparser
import os
import subprocess
import sys

import fixtures
import testtools
import yaml

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


class ToxTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tox = configparser.ConfigParser(interpolation=None)
        self.tox.read(os.path.join(ROOT, 'tox.ini'))

    def test_environments(self):
        for env in ('py3', 'functional', 'pep8', 'docs', 'api-ref',
                    'releasenotes', 'genconfig', 'genpolicy'):
            self.assertIn('testenv:%s' % env, self.tox.sections())

    def test_constraints_overridable_with_local_default(self):
        deps = self.tox['testenv']['deps']
        self.assertIn('-c{env:UPPER_CONSTRAINTS_FILE:', deps)
        self.assertIn('{toxinidir}/upper-constraints.txt', deps)
        with open(os.path.join(ROOT, 'upper-constraints.txt')) as f:
            pins = [line for line in f if line.strip() and
                    not line.startswith('#')]
        for line in pins:
            self.assertRegex(line.strip(), r'^[A-Za-z0-9_.\-\[\]]+===?\S+$')
        # Every requirement is pinned (a requirement missing from the file
        # would float in tox while the tests ran with one version).
        pinned = {line.split('=')[0].lower().replace('_', '-')
                  for line in pins}
        for name in ('requirements.txt', 'test-requirements.txt'):
            with open(os.path.join(ROOT, name)) as f:
                for line in f:
                    req = line.split('#')[0].strip()
                    if not req:
                        continue
                    project = req.split('>')[0].split('<')[0].split('=')[0]
                    self.assertIn(project.strip().lower().replace('_', '-'),
                                  pinned, name)

    def test_reno_lint_runs_in_pep8_and_releasenotes(self):
        for env in ('pep8', 'releasenotes'):
            self.assertIn('reno lint', self.tox['testenv:%s' % env][
                'commands'])

    def test_docs_build_without_warnings(self):
        sphinx_build = os.path.join(BINDIR, 'sphinx-build')
        try:
            import myst_parser  # noqa: F401
        except ImportError:
            self.skipTest('myst-parser not installed')
        out = self.useFixture(fixtures.TempDir()).path
        proc = subprocess.run(
            [sphinx_build, '-q', '-W', '-E', '-b', 'html',
             os.path.join(ROOT, 'doc'), out],
            capture_output=True, text=True, timeout=300)
        self.assertEqual(0, proc.returncode, proc.stdout + proc.stderr)
        self.assertTrue(os.path.exists(os.path.join(
            out, 'api-ref', 'host-drains.html')))


class BindepTest(testtools.TestCase):

    def test_lines_are_bindep_syntax(self):
        with open(os.path.join(ROOT, 'bindep.txt')) as f:
            lines = [line.strip() for line in f
                     if line.strip() and not line.startswith('#')]
        self.assertIn('rabbitmq-server [test]', lines)
        for line in lines:
            self.assertRegex(line, r'^[a-z0-9][a-z0-9.+\-]*'
                                   r'( \[[a-z0-9:!\- ]+\])?$')


class ZuulTest(testtools.TestCase):
    """.zuul.yaml cannot run here: check its structure, and that the
    tempest regex selects the move modules of the installed tempest."""

    def setUp(self):
        super().setUp()
        with open(os.path.join(ROOT, '.zuul.yaml')) as f:
            self.config = yaml.safe_load(f)

    def _jobs(self):
        return {item['job']['name']: item['job'] for item in self.config
                if 'job' in item}

    def test_structure(self):
        self.assertIsInstance(self.config, list)
        for item in self.config:
            self.assertEqual(1, len(item), item)
            self.assertIn(next(iter(item)), ('job', 'project'))
        job = self._jobs()['nova-moves-tempest']
        self.assertEqual('devstack-tempest', job['parent'])
        self.assertIn('nova-moves', job['vars']['devstack_plugins'])
        services = job['vars']['devstack_services']
        for ours in ('nm-api', 'nm-cond', 'nm-sched', 'nm-cpu'):
            self.assertIs(True, services[ours])
        for nova in ('n-api', 'n-cond', 'n-sch', 'n-cpu'):
            self.assertIs(False, services[nova])
        # The plugin's own services are the ones its settings define.
        with open(os.path.join(ROOT, 'devstack', 'settings')) as f:
            settings = f.read()
        for ours in ('nm-api', 'nm-cond', 'nm-sched', 'nm-cpu'):
            self.assertIn(ours, settings)
        for key in job['vars']['devstack_localrc']:
            self.assertIn(key, settings)
        project = [item['project'] for item in self.config
                   if 'project' in item][0]
        self.assertIn('nova-moves-tempest', project['check']['jobs'])
        for pipeline in project.values():
            for name in pipeline['jobs']:
                self.assertTrue(name in self._jobs() or
                                name.startswith('openstack-tox-'), name)

    def test_tempest_regex_selects_the_move_tests(self):
        regex = self._jobs()['nova-moves-tempest']['vars'][
            'tempest_test_regex']
        script = (
            'import importlib, re, sys, unittest\n'
            'ids = []\n'
            'def walk(s):\n'
            '    for x in s:\n'
            '        if isinstance(x, unittest.TestSuite):\n'
            '            yield from walk(x)\n'
            '        else:\n'
            '            yield x.id()\n'
            'for m in sys.argv[2:]:\n'
            '    mod = importlib.import_module(m)\n'
            '    ids += walk(unittest.defaultTestLoader'
            '.loadTestsFromModule(mod))\n'
            'for i in ids:\n'
            '    if re.search(sys.argv[1], i):\n'
            '        print(i)\n')
        modules = ['tempest.api.compute.admin.test_migrations',
                   'tempest.api.compute.admin.test_live_migration',
                   'tempest.api.compute.servers.test_server_actions',
                   'tempest.api.compute.servers.test_servers']
        proc = subprocess.run([sys.executable, '-c', script, regex] +
                              modules, capture_output=True, text=True,
                              timeout=120, cwd=self.useFixture(
                                  fixtures.TempDir()).path)
        if 'No module named' in proc.stderr and 'tempest' in proc.stderr:
            self.skipTest('tempest not installed')
        self.assertEqual(0, proc.returncode, proc.stderr[-2000:])
        selected = proc.stdout.split()
        text = '\n'.join(selected)
        self.assertIn('test_migrations.MigrationsAdminTest.test_cold_'
                      'migration', text)
        self.assertIn('test_live_migration.LiveMigrationTest', text)
        self.assertIn('test_resize_server_confirm[', text)
        self.assertIn('test_resize_server_revert[', text)
        # ...and nothing of the unrelated server tests.
        self.assertFalse([t for t in selected if '.test_servers.' in t])
        self.assertFalse([t for t in selected if 'test_reboot' in t])
