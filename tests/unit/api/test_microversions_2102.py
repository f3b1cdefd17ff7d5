"""Microversions 2.101-2.104 through the WSGI app on SQLite: flavors
without rxtx_factor/disabled and with a name filter (2.102), unknown
query parameters refused on every API (2.102), /os-volumes_boot never
served (2.103), PUT pinned_availability_zone (2.104)."""
import re

import flask
import testtools

from nova_moves.api import common
from nova_moves.api import query_params
from nova_moves.api import routes
from nova_moves.db import api as db_api
from nova_moves import states
from tests.unit import fixtures as nm_fixtures

ADMIN = {'X-Auth-Token': 'admin:admin'}
OWNER = {'X-Auth-Token': 'alice:p1'}


def _at(version, token=ADMIN):
    return dict(token, **{'OpenStack-API-Version': 'compute %s' % version})


class _Base(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.client = nm_fixtures.app_client(self, 'h1', 'h2')
        self.flavor = nm_fixtures.flavor(vcpus=1, memory_mb=512, root_gb=1,
                                         name='small')

    def server(self, **values):
        return db_api.instance_create(dict({
            'display_name': 'vm', 'user_id': 'alice', 'project_id': 'p1',
            'vm_state': states.ACTIVE, 'host': 'h1', 'node': 'h1',
            'power_state': 1, 'flavor': self.flavor, 'image_ref': 'img'},
            **values))


class FlavorsTest(_Base):

    def _flavor(self, version, path='/v2.1/flavors/detail', **query):
        return self.client.get(path, headers=_at(version),
                               query_string=query)

    def test_rxtx_factor_and_disabled_gone_at_2_102(self):
        old = self._flavor('2.101').get_json()['flavors'][0]
        new = self._flavor('2.102').get_json()['flavors'][0]
        self.assertIn('rxtx_factor', old)
        self.assertIn('OS-FLV-DISABLED:disabled', old)
        self.assertNotIn('rxtx_factor', new)
        self.assertNotIn('OS-FLV-DISABLED:disabled', new)
        shown = self.client.get('/v2.1/flavors/%s' % new['id'],
                                headers=_at('2.102')).get_json()['flavor']
        self.assertNotIn('rxtx_factor', shown)

    def test_name_filter_from_2_102(self):
        nm_fixtures.flavor(vcpus=2, memory_mb=1024, root_gb=2, name='big')
        for path in ('/v2.1/flavors', '/v2.1/flavors/detail'):
            named = self._flavor('2.102', path, name='big')
            self.assertEqual(['big'], [f['name'] for f in
                                       named.get_json()['flavors']])
            # Below 2.102 the parameter is unknown, so ignored.
            self.assertEqual(2, len(self._flavor(
                '2.101', path, name='big').get_json()['flavors']))

    def test_rxtx_factor_refused_at_2_102(self):
        body = {'flavor': {'name': 'f', 'ram': 64, 'vcpus': 1, 'disk': 1,
                           'rxtx_factor': 2.0}}
        refused = self.client.post('/v2.1/flavors', headers=_at('2.102'),
                                   json=body)
        self.assertEqual(400, refused.status_code)
        self.assertIn('rxtx_factor', refused.get_json()['badRequest'][
            'message'])
        made = self.client.post('/v2.1/flavors', headers=_at('2.101'),
                                json=body)
        self.assertEqual(2.0, made.get_json()['flavor']['rxtx_factor'])
        del body['flavor']['rxtx_factor']
        body['flavor']['name'] = 'g'
        made = self.client.post('/v2.1/flavors', headers=_at('2.102'),
                                json=body)
        self.assertEqual(200, made.status_code)
        self.assertNotIn('rxtx_factor', made.get_json()['flavor'])
        for query in ({'rxtx_factor': '1.0'}, {'sort_key': 'rxtx_factor'}):
            self.assertEqual(400, self._flavor('2.102', **query).status_code)
            self.assertEqual(200, self._flavor('2.101', **query).status_code)


class StrictQueryTest(_Base):

    def test_unknown_parameter_400_at_2_102_ignored_below(self):
        uuid = self.server()['uuid']
        for path in ('/v2.1/servers', '/v2.1/servers/detail',
                     '/v2.1/servers/%s' % uuid, '/v2.1/flavors',
                     '/v2.1/os-services', '/v2.1/os-migrations',
                     '/v2.1/os-aggregates', '/v2.1/limits'):
            # The servers lists close at 2.75 (Nova's index_query_v275).
            below, strict = (('2.74', '2.75') if path.startswith(
                '/v2.1/servers') and not path.endswith(uuid)
                else ('2.101', '2.102'))
            self.assertEqual(200, self.client.get(
                path + '?foo=1', headers=_at(below)).status_code, path)
            refused = self.client.get(path + '?foo=1', headers=_at(strict))
            self.assertEqual(400, refused.status_code, path)
            self.assertIn("Additional properties are not allowed ('foo' was "
                          "unexpected)",
                          refused.get_json()['badRequest']['message'])
            # The declared ones still pass.
        self.assertEqual(200, self.client.get(
            '/v2.1/servers/detail?limit=1&sort_key=display_name&name=v',
            headers=_at('2.102')).status_code)

    def test_not_only_get(self):
        uuid = self.server()['uuid']
        response = self.client.put(
            '/v2.1/servers/%s?foo=1' % uuid, headers=_at('2.102'),
            json={'server': {'name': 'n'}})
        self.assertEqual(400, response.status_code)
        self.assertEqual(200, self.client.put(
            '/v2.1/servers/%s?foo=1' % uuid, headers=_at('2.101'),
            json={'server': {'name': 'n'}}).status_code)

    def test_every_get_route_declares_and_refuses(self):
        """So a new route cannot forget: each GET row has an OpenAPI
        operation (its parameter declaration) and refuses ?bogus=1."""
        unversioned = {'versions', 'openapi', 'v20', 'v20_slash', 'v21',
                       'v21_slash', 'identity_version',
                       'identity_version_slash'}
        table = dict(routes.ROUTES, **routes.IDENTITY_ROUTES)
        checked = 0
        for path, methods in table.items():
            for method, (name, _handler) in methods.items():
                self.assertTrue(query_params.declared(name), name)
                if method != 'GET' or name in unversioned:
                    continue
                url = re.sub(r'{[^{}]+}', 'x', path) + '?bogus=1'
                response = self.client.get(url, headers=_at('2.102'))
                self.assertEqual(400, response.status_code, url)
                self.assertIn("'bogus' was unexpected",
                              response.get_json()['badRequest']['message'])
                checked += 1
        self.assertGreater(checked, 60)


class VolumesBootTest(_Base):

    def test_os_volumes_boot_is_404(self):
        for version in ('2.1', '2.102', '2.103', '2.104'):
            for method in ('get', 'post'):
                self.assertEqual(404, getattr(self.client, method)(
                    '/v2.1/os-volumes_boot', headers=_at(version),
                    json={}).status_code)


class PinnedZoneTest(_Base):

    def put(self, uuid, value, version='2.104', token=OWNER):
        return self.client.put(
            '/v2.1/servers/%s' % uuid, headers=_at(version, token),
            json={'server': {'pinned_availability_zone': value}})

    def pinned(self, uuid):
        return self.client.get('/v2.1/servers/%s' % uuid,
                               headers=_at('2.104', OWNER)).get_json()[
            'server']['pinned_availability_zone']

    def test_unpin_then_repin_to_current_zone(self):
        uuid = self.server(requested_az='nova',
                           availability_zone='nova')['uuid']
        response = self.put(uuid, None)
        self.assertEqual(200, response.status_code)
        self.assertIsNone(response.get_json()['server'][
            'pinned_availability_zone'])
        self.assertIsNone(self.pinned(uuid))
        # The moves read requested_az: unpinned, any zone next time.
        self.assertIsNone(db_api.instance_get(uuid)['requested_az'])
        shown = self.client.get('/v2.1/servers/%s' % uuid,
                                headers=_at('2.104', ADMIN)).get_json()
        self.assertEqual('nova', shown['server'][
            'OS-EXT-AZ:availability_zone'])
        response = self.put(uuid, 'nova')
        self.assertEqual(200, response.status_code)
        self.assertEqual('nova', self.pinned(uuid))

    def test_next_move_follows_the_pin(self):
        """Every move builds its scheduler request from requested_az:
        unpinned, the next one may pick any zone."""
        uuid = self.server(requested_az='nova',
                           availability_zone='nova')['uuid']

        def zone_asked():
            with self.client.application.test_request_context():
                flask.g.context = None
                return common.request_spec(
                    db_api.instance_get(uuid))['availability_zone']
        self.assertEqual('nova', zone_asked())
        self.put(uuid, None)
        self.assertIsNone(zone_asked())
        self.put(uuid, 'nova')
        self.assertEqual('nova', zone_asked())

    def test_idempotent(self):
        uuid = self.server(requested_az='nova',
                           availability_zone='nova')['uuid']
        self.assertEqual(200, self.put(uuid, 'nova').status_code)
        self.assertEqual('nova', self.pinned(uuid))
        other = self.server()['uuid']
        self.assertEqual(200, self.put(other, None).status_code)
        self.assertIsNone(self.pinned(other))

    def test_conflicts(self):
        pinned = self.server(requested_az='nova',
                             availability_zone='nova')['uuid']
        # One pinned zone for another: unpin first.
        self.assertEqual(409, self.put(pinned, 'az2').status_code)
        unpinned = self.server()['uuid']
        # The server is in 'nova', not 'az2'.
        response = self.put(unpinned, 'az2')
        self.assertEqual(409, response.status_code)
        self.assertIn('az2', response.get_json()['conflictingRequest'][
            'message'])
        self.assertIsNone(self.pinned(unpinned))

    def test_refused_below_2_104(self):
        uuid = self.server(requested_az='nova',
                           availability_zone='nova')['uuid']
        for version in ('2.96', '2.103'):
            self.assertEqual(400, self.put(uuid, None, version).status_code)
        self.assertEqual('nova', self.pinned(uuid))
