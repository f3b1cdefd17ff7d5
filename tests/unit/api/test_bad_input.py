"""Bad query strings and bodies through the real Flask app: every one is
a 4xx whose message names the problem, never a 500."""
import testtools

from nova_moves import conf
from nova_moves.db import api as db_api
from tests.fixtures import rpc as fake_rpc
from tests.unit import fixtures as nm_fixtures

ADMIN = {'X-Auth-Token': 'admin:admin'}


class BadInputTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        # The policy enforcer looks for its file through a parsed CONF.
        conf.CONF([], project='nova_moves', default_config_files=[])
        self.useFixture(nm_fixtures.Database())
        self.useFixture(fake_rpc.FakeTransport())
        self.client = nm_fixtures.api_client(self)
        flavor = nm_fixtures.flavor()
        self.instance = db_api.instance_create({
            'display_name': 'vm', 'user_id': 'admin', 'project_id': 'admin',
            'vm_state': 'active', 'task_state': None, 'flavor': flavor})

    def get(self, path, version='2.87'):
        headers = dict(ADMIN, **{'OpenStack-API-Version':
                                 'compute %s' % version})
        return self.client.get('/v2.1' + path, headers=headers)

    def post_action(self, data, content_type):
        return self.client.post(
            '/v2.1/servers/%s/action' % self.instance['uuid'], data=data,
            headers=dict(ADMIN, **{'Content-Type': content_type}))

    def assertFault(self, response, code, *words):
        self.assertEqual(code, response.status_code, response.get_data())
        fault = list(response.get_json().values())[0]
        self.assertEqual(code, fault['code'])
        for word in words:
            self.assertIn(word, fault['message'])

    def test_request_values_echoed_as_a_short_prefix_only(self):
        headers = dict(ADMIN, **{'OpenStack-API-Version': 'compute 2.95'})
        for path, body in (
                ('/v2.1/servers/%s/action' % self.instance['uuid'],
                 {'resize': {'flavorRef': 'f' * 100000}}),
                ('/v2.1/servers', {'server': {
                    'name': 'x', 'flavorRef': 'f' * 100000,
                    'imageRef': 'fake', 'networks': 'none'}})):
            response = self.client.post(path, json=body, headers=headers)
            self.assertEqual(400, response.status_code)
            message = response.get_json()['badRequest']['message']
            self.assertIn('f' * 64 + '...', message)
            self.assertNotIn('f' * 65, message)
        response = self.client.get('/v2.1/flavors/' + 'g' * 3000,
                                   headers=headers)
        self.assertEqual(404, response.status_code)
        self.assertLess(len(response.data), 200)

    def test_instance_actions_bad_times_are_400(self):
        path = '/servers/%s/os-instance-actions' % self.instance['uuid']
        self.assertFault(self.get(path + '?changes-since=yesterday'), 400,
                         'changes-since', 'yesterday')
        self.assertFault(self.get(path + '?changes-before=2026-13-01'), 400,
                         'changes-before')
        self.assertFault(self.get(path + '?limit=-1'), 400, 'limit')
        # Past year 9999 once in UTC (was a 500: OverflowError).
        self.assertFault(self.get(
            path + '?changes-since=9999-12-31T23:59:59-14:00'), 400,
            'changes-since')
        self.assertEqual(200, self.get(
            path + '?changes-since=2026-01-01T00:00:00Z').status_code)

    def test_migrations_bad_times_and_order_are_400(self):
        self.assertFault(self.get('/os-migrations?changes-since=x'), 400,
                         'changes-since')
        self.assertFault(self.get(
            '/os-migrations?changes-since=2026-02-01T00:00:00'
            '&changes-before=2026-01-01T00:00:00'), 400, 'changes-before')
        self.assertFault(self.get('/os-migrations?limit=ten'), 400, 'limit')

    def test_body_that_is_not_json(self):
        self.assertFault(self.post_action('{"migrate": ', 'application/json'),
                         400, 'not valid JSON')
        self.assertFault(self.post_action('migrate=1', 'text/plain'), 415,
                         'text/plain')
        # A form's media type: its body is read by the form parser, so
        # the action sees none (as Flask's request.data gives it).
        for content_type in ('application/x-www-form-urlencoded',
                             'multipart/form-data; boundary=b'):
            self.assertFault(self.post_action('migrate=1', content_type),
                             400, 'must be an object')
        self.assertFault(self.post_action('', 'text/plain'), 400,
                         'must be an object')
        # Nothing was changed by the refused requests.
        instance = db_api.instance_get(self.instance['uuid'])
        self.assertIsNone(instance['task_state'])
        self.assertEqual([], db_api.migration_get_all())
