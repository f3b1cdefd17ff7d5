"""[api] auth_strategy: strict noauth tokens, loopback-only noauth, and
the request context from auth_token's validated headers."""
from unittest import mock

from keystonemiddleware import auth_token  # noqa: F401 - its options
import testtools

from nova_moves.api import app as api_app
from nova_moves.api import auth
from nova_moves import conf
from tests.fixtures import rpc as fake_rpc
from tests.unit import fixtures as nm_fixtures

CONF = conf.CONF


class _ConfTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        CONF([], project='nova_moves', default_config_files=[])
        self.addCleanup(CONF.clear_override, 'auth_strategy', 'api')
        self.addCleanup(CONF.clear_override, 'listen', 'api')
        self.addCleanup(CONF.clear_override, 'insecure_noauth_on_network',
                        'api')


class NoauthTokenTest(_ConfTest):

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.Database())
        self.useFixture(fake_rpc.FakeTransport())
        self.client = nm_fixtures.api_client(self)

    def status(self, token):
        headers = {} if token is None else {'X-Auth-Token': token}
        return self.client.get('/v2.1/flavors', headers=headers)

    def test_exactly_user_colon_project(self):
        self.assertEqual(200, self.status('alice:proj-a').status_code)
        self.assertEqual(200, self.status('admin:admin').status_code)
        for bad in (None, '', 'admin', 'admin:', ':admin', ' admin :x',
                    'admin :x', 'admin: x', 'a:b:c', 'a\t:b', 'a:b\x00',
                    'u' * 256 + ':p', 'u:' + 'p' * 256):
            response = self.status(bad)
            self.assertEqual(401, response.status_code, repr(bad))
            body = response.get_json()
            self.assertEqual(401, body['unauthorized']['code'])

    def test_longest_ids_accepted(self):
        self.assertEqual(200, self.status(
            'u' * 255 + ':' + 'p' * 255).status_code)

    def test_only_the_user_admin_is_admin(self):
        ctxt = auth.context_from_request({'X-Auth-Token': 'mallory:admin'},
                                         CONF)
        self.assertFalse(ctxt.is_admin)
        self.assertEqual('admin', ctxt.project_id)
        ctxt = auth.context_from_request({'X-Auth-Token': 'admin:x'}, CONF)
        self.assertTrue(ctxt.is_admin)

    def test_versions_need_no_token(self):
        self.assertEqual(200, self.client.get('/').status_code)

    def test_request_to_or_from_the_network_refused(self):
        # Whatever [api] listen says: the request's own addresses count.
        for environ in ({'SERVER_ADDR': '192.0.2.2'},
                        {'SERVER_ADDR': '127.0.0.1',
                         'REMOTE_ADDR': '198.51.100.7'}):
            response = self.client.get('/v2.1/flavors', headers={
                'X-Auth-Token': 'admin:x'}, environ_overrides=environ)
            self.assertEqual(403, response.status_code, environ)
            self.assertIn('loopback',
                          response.get_json()['forbidden']['message'])
        # ...and a server that does not say is refused (fail closed).
        client = api_app.create_app().test_client()
        self.assertEqual(403, client.get('/v2.1/flavors', headers={
            'X-Auth-Token': 'admin:x'}).status_code)
        self.assertEqual(403, client.get('/').status_code)

    def test_override_serves_the_network(self):
        CONF.set_override('insecure_noauth_on_network', True, 'api')
        client = api_app.create_app().test_client()
        response = client.get('/v2.1/flavors', headers={
            'X-Auth-Token': 'admin:x'}, environ_overrides={
                'SERVER_ADDR': '192.0.2.2', 'REMOTE_ADDR': '192.0.2.9'})
        self.assertEqual(200, response.status_code)


class _Socket:
    def __init__(self, name):
        self.name = name

    def getsockname(self):
        if isinstance(self.name, Exception):
            raise self.name
        return self.name


class NoauthRefusalTest(testtools.TestCase):

    def test_the_socket_a_server_gives(self):
        for key in ('gunicorn.socket', 'werkzeug.socket'):
            for name, refused in ((('127.0.0.1', 8774), False),
                                  (('::1', 8774, 0, 0), False),
                                  (('::ffff:127.0.0.1', 8774, 0, 0), False),
                                  ('/run/nova-moves.sock', False),
                                  (('192.0.2.2', 8774), True),
                                  (('::', 8774, 0, 0), True),
                                  (OSError('closed'), True)):
                # SERVER_ADDR/SERVER_NAME never outvote the socket.
                environ = {key: _Socket(name), 'SERVER_ADDR': '127.0.0.1',
                           'SERVER_NAME': 'localhost'}
                self.assertEqual(refused,
                                 auth.noauth_refusal(environ) is not None,
                                 (key, name))

    def test_fails_closed(self):
        # SERVER_NAME is the client's Host header under mod_wsgi/uwsgi.
        self.assertIsNotNone(auth.noauth_refusal({'SERVER_NAME':
                                                  'localhost'}))
        self.assertIsNone(auth.noauth_refusal({'SERVER_ADDR': '::1'}))

    def test_a_proxy_passing_a_remote_client_is_refused(self):
        environ = {'gunicorn.socket': _Socket('/run/nm.sock'),
                   'REMOTE_ADDR': '203.0.113.5'}
        self.assertIsNotNone(auth.noauth_refusal(environ))
        environ['REMOTE_ADDR'] = '127.0.0.1'
        self.assertIsNone(auth.noauth_refusal(environ))


    def test_a_forwarded_request_is_refused_unless_its_proxy_is_trusted(self):
        base = {'gunicorn.socket': _Socket(('127.0.0.1', 8774)),
                'REMOTE_ADDR': '127.0.0.1'}
        for header, value in (('HTTP_X_FORWARDED_FOR', '198.51.100.7'),
                              ('HTTP_X_REAL_IP', '198.51.100.7'),
                              ('HTTP_FORWARDED', 'for=198.51.100.7'),
                              ('HTTP_X_FORWARDED_FOR', '127.0.0.1'),
                              ('HTTP_FORWARDED', 'by=x')):
            environ = dict(base, **{header: value})
            why = auth.noauth_refusal(environ)
            self.assertIn('noauth_trusted_proxies', why, (header, value))
            # A trusted proxy still may not forward a network client.
            why = auth.noauth_refusal(environ, ['127.0.0.1'])
            if value == '127.0.0.1':
                self.assertIsNone(why)
            else:
                self.assertIsNotNone(why, (header, value))
        environ = dict(base, HTTP_FORWARDED='for="[::1]:1234"')
        self.assertIsNone(auth.noauth_refusal(environ, ['::1', '127.0.0.1']))
        self.assertIsNotNone(auth.noauth_refusal(environ, ['127.0.0.2']))
        # X-Forwarded-Proto/Host name no client: served as before.
        environ = dict(base, HTTP_X_FORWARDED_PROTO='https')
        self.assertIsNone(auth.noauth_refusal(environ))

class ListenTest(_ConfTest):

    def setUp(self):
        super().setUp()
        CONF.set_override('auth_strategy', 'noauth', 'api')

    def test_noauth_loopback_is_fine(self):
        for addr in ('127.0.0.1', '::1', 'localhost', '127.0.0.5'):
            CONF.set_override('listen', addr, 'api')
            auth.check_listen(CONF)

    def test_noauth_on_network_refused(self):
        for addr in ('0.0.0.0', '192.0.2.10', '::'):
            CONF.set_override('listen', addr, 'api')
            exc = self.assertRaises(auth.InsecureConfig, auth.check_listen,
                                    CONF)
            self.assertIn('insecure_noauth_on_network', str(exc))
            self.assertIn(addr, str(exc))

    def test_override_and_keystone_allow_network(self):
        CONF.set_override('listen', '0.0.0.0', 'api')
        CONF.set_override('insecure_noauth_on_network', True, 'api')
        auth.check_listen(CONF)
        CONF.set_override('insecure_noauth_on_network', False, 'api')
        CONF.set_override('auth_strategy', 'keystone', 'api')
        auth.check_listen(CONF)
        CONF.set_override('auth_strategy', 'noauth', 'api')

    def test_default_listen_is_loopback(self):
        self.assertEqual('127.0.0.1', CONF.api.listen)

    def test_default_strategy_is_keystone(self):
        CONF.clear_override('auth_strategy', 'api')
        self.assertEqual('keystone', CONF.api.auth_strategy)

    def test_override_warns_loudly(self):
        CONF.set_override('auth_strategy', 'noauth', 'api')
        CONF.set_override('listen', '0.0.0.0', 'api')
        CONF.set_override('insecure_noauth_on_network', True, 'api')
        with mock.patch.object(auth.LOG, 'warning') as warning:
            auth.check_listen(CONF)
        self.assertIn('ANYONE WHO CAN REACH THIS API IS ADMIN',
                      warning.call_args[0][0])


class KeystoneContextTest(_ConfTest):

    def setUp(self):
        super().setUp()
        CONF.set_override('auth_strategy', 'keystone', 'api')

    def test_context_from_validated_headers(self):
        ctxt = auth.context_from_request({
            'X-Identity-Status': 'Confirmed', 'X-User-Id': 'u1',
            'X-Project-Id': 'p1', 'X-Roles': 'member,reader'}, CONF)
        self.assertEqual(('u1', 'p1', False), (ctxt.user_id, ctxt.project_id,
                                               ctxt.is_admin))
        self.assertEqual(['member', 'reader'], ctxt.roles)
        ctxt = auth.context_from_request({
            'X-Identity-Status': 'Confirmed', 'X-User-Id': 'u1',
            'X-Project-Id': 'p1', 'X-Roles': 'reader,admin'}, CONF)
        self.assertTrue(ctxt.is_admin)

    def test_unconfirmed_is_401(self):
        for headers in ({}, {'X-Identity-Status': 'Invalid',
                             'X-User-Id': 'u', 'X-Project-Id': 'p'},
                        {'X-Auth-Token': 'admin:admin'}):
            self.assertRaises(auth.Unauthorized, auth.context_from_request,
                              headers, CONF)

    def test_app_without_token_is_401_and_versions_public(self):
        self.useFixture(nm_fixtures.Database())
        self.useFixture(fake_rpc.FakeTransport())
        # Known without asking Keystone (it is not running here).
        CONF.set_override('www_authenticate_uri', 'http://192.0.2.1/v3',
                          'keystone_authtoken')
        self.addCleanup(CONF.clear_override, 'www_authenticate_uri',
                        'keystone_authtoken')
        client = api_app.create_app().test_client()
        self.assertEqual(200, client.get('/').status_code)
        response = client.get('/v2.1/servers')
        self.assertEqual(401, response.status_code)
        self.assertEqual('Keystone uri="http://192.0.2.1/v3"',
                         response.headers['WWW-Authenticate'])
        self.assertIn('unauthorized', response.get_json())
        # A client's own identity headers never pass auth_token.
        response = client.get('/v2.1/servers', headers={
            'X-Identity-Status': 'Confirmed', 'X-User-Id': 'admin',
            'X-Project-Id': 'admin', 'X-Roles': 'admin'})
        self.assertEqual(401, response.status_code)
