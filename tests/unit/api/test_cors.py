"""[cors]: with only ``allowed_origin`` set, a browser's preflight for
the headers the compute API needs (X-Auth-Token, OpenStack-API-Version)
is answered with the CORS headers, and the responses expose the
request id and microversion headers (Nova's defaults)."""
from oslo_middleware import cors
import testtools

from nova_moves import conf
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
