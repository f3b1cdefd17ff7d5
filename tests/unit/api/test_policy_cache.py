"""The app's remembered policy decisions (api/policy_cache.py): the
enforcer's verdict for every rule and persona, a policy file or policy.d
entry written, edited or removed seen on the next request, checks that
may change their answer never remembered."""
import os
from unittest import mock

import fixtures
from oslo_config import cfg
from oslo_policy import policy as oslo_policy
import testtools

from nova_moves.api import policies
from nova_moves.api import policy_cache
from tests.unit.api import test_policies

MIGRATE = 'os_compute_api:os-migrate-server:migrate'


class AuthorizerTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path
        conf_file = os.path.join(self.dir, 'nova_moves.conf')
        open(conf_file, 'w').close()
        # find_file looks next to the configuration files first.
        self.conf = cfg.ConfigOpts()
        self.conf(['--config-file', conf_file], project='nova_moves',
                  default_config_files=[])
        self.enforcer = policies._build(self.conf)
        self.authorizer = policy_cache.Authorizer(self.enforcer)

    def allowed(self, rule, who, project='alpha'):
        return self.authorizer.allowed(
            rule, {'project_id': project},
            test_policies.PERSONAS[who].to_policy_values())

    def enforced(self, rule, who, project='alpha'):
        try:
            return self.enforcer.authorize(
                rule, {'project_id': project},
                test_policies.PERSONAS[who].to_policy_values(),
                do_raise=True)
        except (oslo_policy.PolicyNotAuthorized, oslo_policy.InvalidScope):
            return False

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            f.write(text)
        # A later mtime than any before, whatever the clock's grain.
        stamp = os.stat(path).st_mtime + 10 + len(text)
        os.utime(path, (stamp, stamp))
        return path

    def test_same_verdicts_as_the_enforcer(self):
        rules = [r.name for r in policies.list_rules()]
        for _twice in range(2):
            for rule in rules:
                for who in test_policies.PERSONAS:
                    for project in ('alpha', 'admin'):
                        self.assertEqual(
                            bool(self.enforced(rule, who, project)),
                            self.allowed(rule, who, project),
                            (rule, who, project))

    def test_a_decision_is_remembered(self):
        self.assertTrue(self.allowed(MIGRATE, 'manager'))
        with mock.patch.object(self.enforcer, 'authorize') as authorize:
            self.assertTrue(self.allowed(MIGRATE, 'manager'))
            self.assertFalse(authorize.called)
            authorize.return_value = True
            # Another caller, another project: asked.
            self.allowed(MIGRATE, 'member')
            self.allowed(MIGRATE, 'manager', 'beta')
            self.assertEqual(2, authorize.call_count)

    def test_policy_file_written_edited_and_removed(self):
        self.assertFalse(self.allowed(MIGRATE, 'member'))
        self.assertFalse(self.allowed(MIGRATE, 'observer'))
        path = self.write('policy.yaml', '"%s": "role:member"\n' % MIGRATE)
        self.assertTrue(self.allowed(MIGRATE, 'member'))
        self.assertFalse(self.allowed(MIGRATE, 'observer'))
        self.write('policy.yaml', '"%s": "role:observer"\n' % MIGRATE)
        self.assertFalse(self.allowed(MIGRATE, 'member'))
        self.assertTrue(self.allowed(MIGRATE, 'observer'))
        os.unlink(path)
        self.assertEqual(self.enforced(MIGRATE, 'member'),
                         self.allowed(MIGRATE, 'member'))

    def test_policy_dir_entry(self):
        self.assertFalse(self.allowed(MIGRATE, 'reader'))
        self.write('policy.d/10-migrate.yaml',
                   '"%s": "role:reader"\n' % MIGRATE)
        self.assertTrue(self.allowed(MIGRATE, 'reader'))

    def test_http_check_is_asked_every_time(self):
        self.write('policy.yaml',
                   '"%s": "http://127.0.0.1:9/check"\n' % MIGRATE)
        self.assertFalse(self.allowed(test_policies.S + 'show', 'observer'))
        with mock.patch.object(self.enforcer, 'authorize',
                               return_value=True) as authorize:
            self.assertTrue(self.allowed(MIGRATE, 'member'))
            self.assertTrue(self.allowed(MIGRATE, 'member'))
        self.assertEqual(2, authorize.call_count)

    def test_unregistered_rule_raises_every_time(self):
        for _twice in range(2):
            self.assertRaises(oslo_policy.PolicyNotRegistered, self.allowed,
                              'os_compute_api:no-such-rule', 'admin')

    def test_unhashable_target_is_asked(self):
        creds = test_policies.PERSONAS['admin'].to_policy_values()
        with mock.patch.object(self.enforcer, 'authorize',
                               return_value=True) as authorize:
            for _twice in range(2):
                self.authorizer.allowed(MIGRATE, {'project_id': 'admin',
                                                  'tags': {'a': 1}}, creds)
        self.assertEqual(2, authorize.call_count)


class FindFileTest(testtools.TestCase):
    """policy_cache.find_file answers as oslo.config's find_file, whose
    directories it lists once: config_dir first, the config files'
    directories (the last first), then the standard ones (~/.project,
    ~, /etc/project, /etc), a file created after the first look found."""

    def test_same_answers_as_the_configuration(self):
        root = self.useFixture(fixtures.TempDir()).path
        home = os.path.join(root, 'home')
        conf_dir = os.path.join(root, 'conf.d')
        first, second = (os.path.join(root, name) for name in ('a', 'b'))
        for path in (home, conf_dir, first, second):
            os.makedirs(path)
        files = [os.path.join(first, 'one.conf'),
                 os.path.join(second, 'two.conf')]
        for path in files:
            open(path, 'w').close()
        self.useFixture(fixtures.EnvironmentVariable('HOME', home))
        conf = cfg.ConfigOpts()
        conf(['--config-file', files[0], '--config-file', files[1],
              '--config-dir', conf_dir], project='nm-find-file-test',
             default_config_files=[])
        names = ('policy.yaml', 'policy.d', 'other.json',
                 os.path.join(root, 'absolute.yaml'))

        def same():
            for name in names:
                self.assertEqual(conf.find_file(name),
                                 policy_cache.find_file(conf, name), name)
        same()  # nothing there: None from both
        places = (first, second, conf_dir,
                  os.path.join(home, '.nm-find-file-test'), home, root)
        for place in reversed(places):
            os.makedirs(os.path.join(place, 'policy.d'), exist_ok=True)
            for name in ('policy.yaml', 'other.json', 'absolute.yaml'):
                open(os.path.join(place, name), 'a').close()
            same()  # each nearer place wins as it appears
        # Another HOME: the standard directories follow it.
        other = os.path.join(root, 'other-home')
        os.makedirs(other)
        open(os.path.join(other, 'only-here.yaml'), 'w').close()
        self.useFixture(fixtures.EnvironmentVariable('HOME', other))
        self.assertEqual(conf.find_file('only-here.yaml'),
                         policy_cache.find_file(conf, 'only-here.yaml'))
        self.assertIsNotNone(policy_cache.find_file(conf, 'only-here.yaml'))
