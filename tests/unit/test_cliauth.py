"""nova_moves.cliauth: the operator's CLIs authenticate like the
openstack client (clouds.yaml, OS_*, --os-*), and use the API's noauth
mode only when asked."""
import argparse
import os

import fixtures
import testtools

from nova_moves import cliauth


def parse(*argv):
    parser = argparse.ArgumentParser()
    cliauth.add_arguments(parser)
    return parser.parse_args(list(argv))


class CliAuthTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        # No OS_* from the developer's shell, no clouds.yaml of theirs.
        for key in list(os.environ):
            if key.startswith('OS_'):
                self.useFixture(fixtures.EnvironmentVariable(key))
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.useFixture(fixtures.EnvironmentVariable(
            'OS_CLIENT_CONFIG_FILE', os.path.join(self.tmp, 'none.yaml')))
        self.useFixture(fixtures.EnvironmentVariable(
            'HOME', self.tmp))

    def test_nothing_given_is_an_error_not_noauth(self):
        os.environ.pop('OS_CLIENT_CONFIG_FILE')
        error = self.assertRaises(cliauth.AuthError, cliauth.session_for,
                                  parse(), 'http://127.0.0.1:8774/v2.1')
        self.assertIn('--os-cloud', str(error))
        self.assertIn('--os-auth-type none', str(error))

    def test_noauth_when_asked(self):
        session, endpoint = cliauth.session_for(
            parse('--os-auth-type', 'none'), 'http://127.0.0.1:8774/v2.1/')
        self.assertEqual('http://127.0.0.1:8774/v2.1', endpoint)
        self.assertEqual({'X-Auth-Token': 'admin:admin'},
                         session.get_auth_headers())
        session, endpoint = cliauth.session_for(parse(
            '--os-auth-type', 'none', '--os-token', 'bob:p',
            '--endpoint', 'http://[::1]:9/v2.1'))
        self.assertEqual('http://[::1]:9/v2.1', endpoint)
        self.assertEqual('bob:p', session.get_token())

    def test_noauth_needs_an_endpoint(self):
        self.assertRaises(cliauth.AuthError, cliauth.session_for,
                          parse('--os-auth-type', 'none'))

    def test_clouds_yaml(self):
        path = os.path.join(self.tmp, 'clouds.yaml')
        with open(path, 'w') as f:
            f.write('clouds:\n'
                    '  lab:\n'
                    '    auth_type: admin_token\n'
                    '    auth:\n'
                    '      token: "admin:admin"\n'
                    '      endpoint: http://10.0.0.5:8774/v2.1\n')
        os.environ['OS_CLIENT_CONFIG_FILE'] = path
        session, endpoint = cliauth.session_for(parse('--os-cloud', 'lab'))
        self.assertEqual('http://10.0.0.5:8774/v2.1', endpoint)
        self.assertEqual('admin:admin', session.get_token())

    def test_environment_password_builds_a_password_plugin(self):
        self.useFixture(fixtures.EnvironmentVariable(
            'OS_AUTH_URL', 'http://127.0.0.1:1/v3'))
        args = parse()
        self.assertEqual('http://127.0.0.1:1/v3', args.os_auth_url)
        # Nothing listens there: the catalog lookup fails as an AuthError
        # naming the problem, not a traceback.
        for name, value in (('OS_USERNAME', 'u'), ('OS_PASSWORD', 'p'),
                            ('OS_PROJECT_NAME', 'p'),
                            ('OS_USER_DOMAIN_NAME', 'Default'),
                            ('OS_PROJECT_DOMAIN_NAME', 'Default')):
            self.useFixture(fixtures.EnvironmentVariable(name, value))
        error = self.assertRaises(cliauth.AuthError, cliauth.session_for,
                                  parse())
        self.assertIn('ConnectFailure', str(error))

    def test_explicit_endpoint_overrides_catalog(self):
        path = os.path.join(self.tmp, 'clouds.yaml')
        with open(path, 'w') as f:
            f.write('clouds:\n  lab:\n    auth_type: admin_token\n'
                    '    auth: {token: t, endpoint: "http://a/v2.1"}\n')
        os.environ['OS_CLIENT_CONFIG_FILE'] = path
        _session, endpoint = cliauth.session_for(parse(
            '--os-cloud', 'lab', '--os-endpoint', 'http://b:1/v2.1'))
        self.assertEqual('http://b:1/v2.1', endpoint)
