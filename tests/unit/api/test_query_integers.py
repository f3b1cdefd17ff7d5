"""Every integer query parameter of every route goes through
api/query.py: out of range or not an integer is a 400 naming the
parameter, on every route the OpenAPI document lists it for."""
import os
import re

import testtools

from nova_moves.api import openapi
from nova_moves.api import query
from nova_moves import conf
from nova_moves.db import api as db_api
from tests.fixtures import rpc as fake_rpc
from tests.unit import fixtures as nm_fixtures

ADMIN = {'X-Auth-Token': 'admin:admin',
         'OpenStack-API-Version': 'compute latest'}
API_DIR = os.path.dirname(openapi.__file__)


def integer_routes():
    """(path, parameter) for every GET whose query takes an integer."""
    found = []
    for path, item in openapi.build()['paths'].items():
        operation = item.get('get')
        if not operation:
            continue
        for param in operation['parameters']:
            if param.get('in') == 'query' and param['name'] in \
                    query.INTEGERS:
                found.append((path, param['name']))
    return found


class QueryIntegersTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        conf.CONF([], project='nova_moves', default_config_files=[])
        self.useFixture(nm_fixtures.Database())
        self.useFixture(fake_rpc.FakeTransport())
        self.client = nm_fixtures.api_client(self)
        self.instance = db_api.instance_create({
            'display_name': 'vm', 'user_id': 'admin', 'project_id': 'admin',
            'vm_state': 'active', 'task_state': None,
            'flavor': nm_fixtures.flavor()})

    def _url(self, path):
        return re.sub(r'{[^{}]+}', self.instance['uuid'], path)

    def test_the_routes_with_integer_parameters_are_known(self):
        routes = integer_routes()
        names = {name for _path, name in routes}
        # The four integer parameters, each on at least one route.
        self.assertEqual(set(query.INTEGERS), names)
        self.assertIn(('/v2.1/os-server-groups', 'offset'), routes)
        self.assertIn(('/v2.1/flavors/detail', 'minRam'), routes)

    def test_out_of_range_or_not_an_integer_is_a_400_naming_it(self):
        for path, name in integer_routes():
            low, high = query.INTEGERS[name]
            for value in (str(high + 1), str(low - 1), '9' * 23, '-' + '9' *
                          23, 'ten', '1.5', '1e3', '0x10', '', ' 1', '1_0',
                          '+1', '\u00b2'):
                url = '%s?%s=%s' % (self._url(path), name, value)
                response = self.client.get(url, headers=ADMIN)
                if response.status_code == 404:
                    break  # a path whose {id} is not a server
                self.assertEqual(400, response.status_code,
                                 '%s: %s' % (url, response.get_data()))
                message = response.get_json()['badRequest']['message']
                self.assertIn('query parameters %s.' % name, message)

    def test_in_range_is_accepted(self):
        for path, name in integer_routes():
            low, high = query.INTEGERS[name]
            for value in (max(low, 0), high):
                url = '%s?%s=%d' % (self._url(path), name, value)
                response = self.client.get(url, headers=ADMIN)
                self.assertNotEqual(400, response.status_code,
                                    '%s: %s' % (url, response.get_data()))
                self.assertLess(response.status_code, 500)

    def test_no_view_parses_a_query_integer_itself(self):
        """int() of a query value anywhere but query.py would bypass the
        range check."""
        offenders = []
        pattern = re.compile(r'int\((flask\.request\.)?args[\[.]')
        for name in sorted(os.listdir(API_DIR)):
            if not name.endswith('.py') or name == 'query.py':
                continue
            with open(os.path.join(API_DIR, name)) as source:
                for number, line in enumerate(source, 1):
                    if pattern.search(line):
                        offenders.append('%s:%d' % (name, number))
        self.assertEqual([], offenders)

    def test_parse_int(self):
        self.assertEqual(5, query.parse_int('limit', '5'))
        self.assertEqual(-3, query.parse_int('minRam', '-3'))
        self.assertRaises(Exception, query.parse_int, 'limit', '-1')
        self.assertRaises(Exception, query.parse_int, 'offset',
                          str(2 ** 31))
