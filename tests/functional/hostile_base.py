"""What the hostile-input tests (test_hostile_input, test_hostile_fuzz)
share: one stack per database with a flavor, a server and a service to
aim at, raw requests that bypass apiclient's checks, and the assertion
that an answer is a 4xx carrying Nova's fault body."""
import requests

from tests.functional import base
from tests.functional import databases

# An id past every Integer column (PostgreSQL answered such ids with 500).
HUGE = '9' * 23


class HostileInputTestCase(base.StackTestCase):

    COMPUTES = 1
    # Fuzzed actions may start moves that are still running at the end.
    CHECK_INVARIANTS = False

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.small = cls.stack.client().create_flavor('hostile-small')
        cls.server = cls.stack.client().boot('hostile', cls.small['id'])
        services = cls.stack.client().get('/os-services', version='2.53',
                                          expect=200).json()['services']
        cls.service_id = services[0]['id']

    def raw(self, method, path, data=None, params=None, token='alice:proj-a',
            headers=None, version='2.95'):
        all_headers = {'X-Auth-Token': token,
                       'OpenStack-API-Version': 'compute %s' % version,
                       'Content-Type': 'application/json'}
        all_headers.update(headers or {})
        url = self.stack.endpoint + path
        return requests.request(method, url, data=data, params=params,
                                headers=all_headers, timeout=60)

    def admin_raw(self, *args, **kw):
        return self.raw(*args, token='admin:admin', **kw)

    def assertFault(self, response, low=400, high=499, echo=None):
        self.assertTrue(low <= response.status_code <= high,
                        '%s %s -> %s %s' % (
                            response.request.method,
                            response.request.url[:200],
                            response.status_code, response.text[:300]))
        body = response.json()
        fault = list(body.values())[0]
        self.assertEqual(response.status_code, fault['code'])
        if echo:
            self.assertNotIn(echo, fault['message'])
        return fault['message']


# The same tests run on each database: a test module mixes its tests
# (a plain class, so it is never loaded without a database) into these.
class OnPostgreSQL(databases.FreshDatabase):
    ADMIN_URL = databases.PG_ADMIN_URL
    URL_FORMAT = databases.PG_URL_FORMAT


class OnMySQL(databases.FreshDatabase):
    ADMIN_URL = databases.MYSQL_ADMIN_URL
    URL_FORMAT = databases.MYSQL_URL_FORMAT
