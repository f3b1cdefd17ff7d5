"""auth_strategy = keystone at the edge: an unusable [keystone_authtoken]
is named at start (and by status check), never a bare 500; oversized
tokens are a 401 without asking Keystone or an ERROR line; auth_token
gets timeouts by default."""
from unittest import mock

from keystoneauth1 import loading
from keystonemiddleware import auth_token  # noqa: F401 - its options
import testtools

from nova_moves.api import app as api_app
from nova_moves.api import keystone_auth
from nova_moves.cmd import api as cmd_api
from nova_moves.cmd import manage_status
from nova_moves import conf
from tests.fixtures import rpc as fake_rpc
from tests.unit import fixtures as nm_fixtures

CONF = conf.CONF
GROUP = 'keystone_authtoken'
SERVICE_USER = {'auth_type': 'password', 'auth_url': 'http://192.0.2.1/v3',
                'username': 'nova-moves', 'password': 'secret',
                'project_name': 'service', 'user_domain_name': 'Default',
                'project_domain_name': 'Default'}


class _Keystone(testtools.TestCase):

    def setUp(self):
        super().setUp()
        CONF([], project='nova_moves', default_config_files=[])
        self.override('auth_strategy', 'keystone', 'api')
        # The password plugin's options, as loading the section does;
        # required ones: gone before the next test parses CONF again.
        plugin_opts = [opt._to_oslo_opt() for opt in
                       loading.get_plugin_loader('password').get_options()]
        CONF.register_opts(plugin_opts, group=GROUP)
        self.addCleanup(self._unregister, plugin_opts)

    def _unregister(self, plugin_opts):
        # clear(), not reset(): reset() also unsets the defaults the
        # product sets at import (max_pool_size, ...) for later tests.
        CONF.clear()
        CONF.unregister_opts(plugin_opts, group=GROUP)

    def override(self, name, value, group=GROUP):
        CONF.set_override(name, value, group)
        self.addCleanup(CONF.clear_override, name, group)


class KeystoneConfigTest(_Keystone):

    def test_no_section_names_every_missing_option(self):
        problem = keystone_auth.config_problem(CONF)
        for name in keystone_auth.NEEDED:
            self.assertIn(name, problem)
        self.assertIn('[keystone_authtoken]', problem)

    def test_a_partial_section_names_what_is_missing(self):
        self.override('auth_type', 'password')
        self.override('auth_url', 'http://192.0.2.1/v3')
        problem = keystone_auth.config_problem(CONF)
        self.assertIn('missing username, password', problem)
        self.override('auth_type', 'no-such-plugin')
        self.assertIn('no-such-plugin', keystone_auth.config_problem(CONF))

    def test_a_service_user_is_enough(self):
        for name, value in SERVICE_USER.items():
            self.override(name, value)
        self.assertIsNone(keystone_auth.config_problem(CONF))
        self.assertEqual(manage_status.SUCCESS,
                         manage_status.check_api_auth()[0])

    def test_noauth_needs_no_section(self):
        self.override('auth_strategy', 'noauth', 'api')
        self.assertIsNone(keystone_auth.config_problem(CONF))

    def test_status_check_fails_naming_the_options(self):
        code, details = manage_status.check_api_auth()
        self.assertEqual(manage_status.FAILURE, code)
        self.assertIn('auth_url', details)

    def test_the_api_refuses_to_start(self):
        with mock.patch.object(cmd_api.service, 'prepare'), \
                mock.patch.object(cmd_api.server, 'APIServer') as server:
            exc = self.assertRaises(SystemExit, cmd_api.main)
        self.assertIn('auth_url', str(exc))
        server.assert_not_called()

    def test_timeouts_by_default(self):
        keystone_auth.set_defaults(CONF)
        self.assertEqual(5, CONF[GROUP].http_connect_timeout)
        self.assertEqual(1, CONF[GROUP].http_request_max_retries)
        # The operator's value wins.
        self.override('http_connect_timeout', 30)
        keystone_auth.set_defaults(CONF)
        self.assertEqual(30, CONF[GROUP].http_connect_timeout)


class KeystoneRequestTest(_Keystone):

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.Database())
        self.useFixture(fake_rpc.FakeTransport())
        self.override('www_authenticate_uri', 'http://192.0.2.1/v3')
        self.client = api_app.create_app().test_client()

    def test_unconfigured_is_a_fault_body_not_a_bare_500(self):
        with mock.patch.object(keystone_auth.LOG, 'error') as error:
            response = self.client.get('/v2.1/servers',
                                       headers={'X-Auth-Token': 'abc'})
        self.assertEqual(500, response.status_code)
        self.assertIn('authentication is not configured',
                      response.get_json()['computeFault']['message'])
        self.assertIn('auth_url', error.call_args[0][1])

    def test_oversized_token_is_401_without_asking_keystone(self):
        with mock.patch.object(keystone_auth.LOG, 'error') as error, \
                mock.patch.object(keystone_auth.auth_token.AuthProtocol,
                                  'fetch_token') as fetch:
            for size in (keystone_auth.MAX_TOKEN_SIZE + 1, 9000, 60000):
                response = self.client.get(
                    '/v2.1/servers', headers={'X-Auth-Token': 'a' * size})
                self.assertEqual(401, response.status_code)
                self.assertIn('unauthorized', response.get_json())
        fetch.assert_not_called()
        error.assert_not_called()
