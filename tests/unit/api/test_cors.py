"""[cors]: with only ``allowed_origin`` set, a browser's preflight for
the headers the compute API needs (X-Auth-Token, OpenStack-API-Version)
is answered with the CORS headers, and the responses expose the
request id and microversion headers (Nova's defaults)."""
from unittest import mock

from oslo_middleware import cors
import testtools

from nova_moves.api import pipeline
from nova_moves import conf
from nova_moves.db import api as db_api
from tests.fixtures import rpc as fake_rpc
from tests.unit import fixtures as nm_fixtures

CONF = conf.CONF
ORIGIN = 'https://dashboard.example'


class CorsDefaultsTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        CONF([], project='nova_moves', default_config_files=[])
        CONF.register_opts(cors.CORS_OPTS, 'cors')
        CONF.set_override('allowed_origin', [ORIGIN], 'cors')
        self.addCleanup(CONF.clear_override, 'allowed_origin', 'cors')
        self.useFixture(nm_fixtures.Database())
        self.useFixture(fake_rpc.FakeTransport())
        self.client = nm_fixtures.api_client(self)  # noauth

    def preflight(self, headers, origin=ORIGIN):
        return self.client.options('/v2.1/servers', headers={
            'Origin': origin,
            'Access-Control-Request-Method': 'POST',
            'Access-Control-Request-Headers': headers})

    def test_preflight_allows_the_token_and_microversion_headers(self):
        response = self.preflight('X-Auth-Token, OpenStack-API-Version, '
                                  'Content-Type')
        self.assertEqual(200, response.status_code)
        self.assertEqual(ORIGIN,
                         response.headers['Access-Control-Allow-Origin'])
        allowed = {h.strip().lower() for h in response.headers[
            'Access-Control-Allow-Headers'].split(',')}
        self.assertLessEqual({'x-auth-token', 'openstack-api-version'},
                             allowed)

    def test_other_origin_gets_no_cors_headers(self):
        response = self.preflight('X-Auth-Token', origin='https://evil.x')
        self.assertNotIn('Access-Control-Allow-Origin', response.headers)

    def test_actual_response_exposes_request_id_and_version(self):
        response = self.client.get('/v2.1/flavors', headers={
            'Origin': ORIGIN, 'X-Auth-Token': 'admin:admin'})
        self.assertEqual(200, response.status_code)
        exposed = {h.strip().lower() for h in response.headers[
            'Access-Control-Expose-Headers'].split(',')}
        self.assertLessEqual({'x-openstack-request-id',
                              'openstack-api-version'}, exposed)


class NoCorsRequestTest(testtools.TestCase):
    """A request without Origin (not OPTIONS or HEAD) skips
    oslo.middleware's cors: its response is the one cors's webob round
    trip gave, header by header (a relative Location made absolute)."""

    def setUp(self):
        super().setUp()
        self.client = nm_fixtures.app_client(self, 'h1')
        self.server = db_api.instance_create({
            'display_name': 'vm', 'user_id': 'u', 'project_id': 'admin',
            'vm_state': 'active', 'host': 'h1', 'node': 'h1',
            'power_state': 1, 'flavor': nm_fixtures.flavor(),
            'image_ref': 'img'})

    def _both(self, method, path, **kwargs):
        """The response through the pipeline, and through it with cors's
        webob round trip for every request (as before)."""
        fast = self.client.open(path, method=method, **kwargs)
        with mock.patch.object(pipeline.Cors, '__call__', lambda self, e, s:
                               self.cors(e, s)):
            slow = self.client.open(path, method=method, **kwargs)
        return fast, slow

    @staticmethod
    def _shown(response):
        ids = ('x-openstack-request-id', 'x-compute-request-id')
        return (response.status, response.get_data(), sorted(
            (name, '-' if name.lower() in ids else value)
            for name, value in response.headers.items()))

    def test_same_responses(self):
        admin = {'X-Auth-Token': 'admin:admin'}
        server = '/v2.1/servers/%s' % self.server['uuid']
        for method, path, kwargs in (
                ('GET', '/', {}), ('GET', '/v2.1/', {}),
                ('GET', '/v2.1/flavors', {'headers': admin}),
                ('GET', '/v2.1/flavors', {}),
                ('GET', '/v2.1/servers/nope', {'headers': admin}),
                ('DELETE', '/v2.1/flavors', {'headers': admin}),
                ('GET', server, {'headers': dict(
                    admin, **{'OpenStack-API-Version': 'compute 2.96'})}),
                ('GET', server, {'headers': dict(
                    admin, **{'OpenStack-API-Version': 'compute 9.0'})}),
                ('POST', server + '/action', {'headers': admin,
                                              'json': {'nope': None}}),
                ('POST', server + '/action', {'headers': admin,
                                              'data': b'{'}),
                ('GET', '/v2.1/flavors%00', {'headers': admin}),
                ('GET', '/healthcheck', {})):
            fast, slow = self._both(method, path, **kwargs)
            self.assertEqual(self._shown(slow), self._shown(fast),
                             (method, path))

    def test_what_webob_did_is_done(self):
        """Apps of every shape: a relative Location, a status without a
        reason, a body written, a response started when its body is
        read, a HEAD; each answered as cors.CORS (webob) answers it."""
        def relative(environ, start_response):
            start_response('201 Created', [('Location', 'tags/a'),
                                           ('X-A', '1')])
            return [b'x']

        def no_reason(environ, start_response):
            start_response('200', [('Content-Length', '2')])
            return [b'ok']

        def writes(environ, start_response):
            write = start_response('200 OK', [])
            write(b'written ')
            return [b'and returned']

        def lazy(environ, start_response):
            start_response('202 Accepted', [('X-Lazy', 'yes')])
            yield b'late'

        for app in (relative, no_reason, writes, lazy):
            for method in ('GET', 'POST', 'HEAD'):
                out = []
                for wrapped in (pipeline.Cors(app), cors.CORS(app, CONF)):
                    environ = {'REQUEST_METHOD': method,
                               'PATH_INFO': '/v2.1/servers/x/tags',
                               'SCRIPT_NAME': '', 'SERVER_NAME': 'api',
                               'SERVER_PORT': '8774', 'HTTP_HOST': 'api',
                               'wsgi.url_scheme': 'http'}
                    started = []

                    def start_response(status, headers, exc_info=None):
                        started.append((status, list(headers)))
                    body = wrapped(environ, start_response)
                    out.append((b''.join(body), started))
                    if hasattr(body, 'close'):
                        body.close()
                self.assertEqual(out[1], out[0], (app.__name__, method))
