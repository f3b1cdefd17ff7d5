"""Which database errors mean "unreachable", oslo.db's retry around the
db api, and the API's 503 + Retry-After for a database that is not there
(a PostgreSQL URL on a port nothing listens on)."""
import fixtures
from oslo_db import exception as db_exc
import sqlalchemy as sa
import testtools

from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves.db import candidates
from nova_moves.db import retry
from tests.fixtures import rpc as fake_rpc
from tests.unit import fixtures as nm_fixtures

CONF = conf.CONF
REFUSED = ('connection to server at "127.0.0.1", port 1 failed: '
           'Connection refused')


def _operational(message):
    return sa.exc.OperationalError('SELECT 1', {}, Exception(message))


class IsUnavailableTest(testtools.TestCase):

    def test_connection_failures_are_unavailable(self):
        for message in (REFUSED, 'server closed the connection unexpectedly',
                        'FATAL: the database system is starting up',
                        "(2003, \"Can't connect to MySQL server\")",
                        'terminating connection due to administrator '
                        'command'):
            self.assertTrue(retry.is_unavailable(_operational(message)),
                            message)
        self.assertTrue(retry.is_unavailable(
            db_exc.DBConnectionError(_operational('x'))))

    def test_other_errors_are_not(self):
        self.assertFalse(retry.is_unavailable(
            _operational('syntax error at or near "SELEC"')))
        self.assertFalse(retry.is_unavailable(sa.exc.IntegrityError(
            'INSERT', {}, Exception('duplicate key: connection refused'))))
        self.assertFalse(retry.is_unavailable(ValueError(REFUSED)))


class RetryingTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        CONF.set_override('db_retry_interval', 0, group='database')
        self.addCleanup(CONF.clear_override, 'db_retry_interval',
                        group='database')
        self.calls = 0

    def _flaky(self, failures, error):
        def fn(value):
            self.calls += 1
            if self.calls <= failures:
                raise error
            return value
        fn.__module__ = 'nova_moves.db.fake'
        return fn

    def _reconnect(self, on):
        CONF.set_override('use_db_reconnect', on, group='database')
        self.addCleanup(CONF.clear_override, 'use_db_reconnect',
                        group='database')

    def test_unavailable_is_retried_until_it_answers(self):
        self._reconnect(True)
        fn = retry.retrying(self._flaky(3, _operational(REFUSED)))
        self.assertEqual('ok', fn('ok'))
        self.assertEqual(4, self.calls)

    def test_retries_are_bounded(self):
        self._reconnect(True)
        CONF.set_override('db_max_retries', 2, group='database')
        self.addCleanup(CONF.clear_override, 'db_max_retries',
                        group='database')
        fn = retry.retrying(self._flaky(10, _operational(REFUSED)))
        self.assertRaises(sa.exc.OperationalError, fn, 'ok')
        self.assertEqual(3, self.calls)

    def test_other_errors_and_reconnect_off_fail_at_once(self):
        self._reconnect(True)
        fn = retry.retrying(self._flaky(1, _operational('syntax error')))
        self.assertRaises(sa.exc.OperationalError, fn, 'ok')
        self.assertEqual(1, self.calls)
        self._reconnect(False)
        self.calls = 0
        fn = retry.retrying(self._flaky(1, _operational(REFUSED)))
        self.assertRaises(sa.exc.OperationalError, fn, 'ok')
        self.assertEqual(1, self.calls)

    def test_one_function_follows_the_options_between_calls(self):
        # The oslo.db wrapper is built once per set of option values, not
        # once for good: turning reconnects off (or the retries down)
        # applies from the next call on.
        fn = retry.retrying(self._flaky(2, _operational(REFUSED)))
        self._reconnect(True)
        self.assertEqual('ok', fn('ok'))
        self.assertEqual(3, self.calls)
        self._reconnect(False)
        self.calls = 0
        self.assertRaises(sa.exc.OperationalError, fn, 'ok')
        self.assertEqual(1, self.calls)
        self._reconnect(True)
        CONF.set_override('db_max_retries', 1, group='database')
        self.addCleanup(CONF.clear_override, 'db_max_retries',
                        group='database')
        self.calls = 0
        self.assertRaises(sa.exc.OperationalError, fn, 'ok')
        self.assertEqual(2, self.calls)

    def test_deadlocks_are_retried_with_or_without_reconnect(self):
        for on in (True, False):
            self._reconnect(on)
            self.calls = 0
            fn = retry.retrying(self._flaky(2, db_exc.DBDeadlock()))
            self.assertEqual('ok', fn('ok'))
            self.assertEqual(3, self.calls)

    def test_the_schedulers_placement_view_rides_it_out(self):
        # A class is not wrapped by db/api.py: without its own retry a
        # select_destinations during a database restart failed the move
        # (functional test_database_outage, now and then).
        self._reconnect(True)
        self.useFixture(nm_fixtures.Database())
        nm_fixtures.node('h1')
        view = db_api.PlacementView()
        real = candidates._tx

        def flaky(*args, **kwargs):
            self.calls += 1
            if self.calls <= 2:
                raise _operational(REFUSED)
            return real(*args, **kwargs)
        self.useFixture(fixtures.MonkeyPatch(
            'nova_moves.db.candidates._tx', flaky))
        found = view.candidates({'VCPU': 1})
        self.assertEqual(['h1'], [c['host'] for c in found])
        self.assertEqual(3, self.calls)

    def test_the_db_api_functions_are_wrapped(self):
        self.assertTrue(db_api.instance_get_all.retrying)
        self.assertFalse(hasattr(db_api.get_engine, 'retrying'))


class DatabaseDownApiTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        conf.CONF([], project='nova_moves', default_config_files=[])
        self.useFixture(fake_rpc.FakeTransport())
        db_api.dispose_engines()
        CONF.set_override('connection',
                          'postgresql+psycopg2://nobody@127.0.0.1:1/none',
                          group='database')
        CONF.set_override('max_retries', 0, group='database')
        self.addCleanup(CONF.clear_override, 'connection', group='database')
        self.addCleanup(CONF.clear_override, 'max_retries',
                        group='database')
        self.addCleanup(db_api.dispose_engines)
        self.addCleanup(CONF.set_default, 'use_db_reconnect', True,
                        group='database')
        self.client = nm_fixtures.api_client(self)

    def test_503_with_retry_after_not_500(self):
        response = self.client.get('/v2.1/servers',
                                   headers={'X-Auth-Token': 'admin:admin'})
        self.assertEqual(503, response.status_code, response.get_data())
        self.assertEqual(str(CONF.database.db_max_retry_interval),
                         response.headers['Retry-After'])
        fault = response.get_json()['serviceUnavailable']
        self.assertEqual(503, fault['code'])
        self.assertIn('database is unavailable', fault['message'])
