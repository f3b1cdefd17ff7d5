"""Every [database] option oslo.db documents takes effect: passed to
create_engine, used by nova_moves.db.retry, or named as unsupported."""
import inspect
import threading

from oslo_config import cfg
from oslo_db import options as db_options
from oslo_db.sqlalchemy import engines
import sqlalchemy as sa
import testtools

from nova_moves.conf import database as database_conf
from nova_moves.db import engine_opts
from nova_moves.db import session
from tests.unit import fixtures as nm_fixtures


class EngineOptsTest(testtools.TestCase):

    def _conf(self, **overrides):
        conf = cfg.ConfigOpts()
        database_conf.register_opts(conf)
        conf([])
        for name, value in overrides.items():
            conf.set_override(name, value, group='database')
        return conf

    def test_every_option_is_accounted_for(self):
        names = {o.name for o in db_options.database_opts}
        passed = set(engine_opts.engine_kwargs(self._conf()))
        self.assertEqual(
            set(), names - passed - engine_opts.HANDLED_ELSEWHERE -
            engine_opts.UNSUPPORTED)

    def test_kwargs_are_create_engine_arguments(self):
        accepted = set(inspect.signature(engines.create_engine).parameters)
        self.assertEqual(set(), set(engine_opts.engine_kwargs(
            self._conf())) - accepted)

    def test_check_in_does_not_yield(self):
        # oslo.db's eventlet courtesy (time.sleep(0) per check-in) is off:
        # the engine it builds from our arguments has no such listener.
        engine = engines.create_engine(
            'sqlite://', **dict(engine_opts.engine_kwargs(self._conf()),
                                max_pool_size=None, max_overflow=None,
                                pool_timeout=None))
        self.addCleanup(engine.dispose)
        self.assertFalse(sa.event.contains(engine, 'checkin',
                                           engines._thread_yield))

    def test_values_come_from_the_configuration(self):
        kwargs = engine_opts.engine_kwargs(self._conf(
            max_pool_size=17, mysql_sql_mode='ANSI', pool_timeout=7,
            connection_parameters='read_timeout=5'))
        self.assertEqual(17, kwargs['max_pool_size'])
        self.assertEqual('ANSI', kwargs['mysql_sql_mode'])
        self.assertEqual(7, kwargs['pool_timeout'])
        self.assertEqual('read_timeout=5', kwargs['connection_parameters'])
        # oslo.db's default: no "consider enabling TRADITIONAL" warning.
        self.assertEqual('TRADITIONAL', engine_opts.engine_kwargs(
            self._conf())['mysql_sql_mode'])


class BusyPoolTest(testtools.TestCase):
    """Connections opened past the pool are closed when given back: with
    oslo.db's default of 5 (and with 20), a conductor running dozens of
    steps at once started and ended a PostgreSQL backend per
    transaction."""

    def test_a_busy_process_keeps_its_connections(self):
        self.useFixture(nm_fixtures.Database())
        busy = 40
        # The reader: SQLite's writer serializes its transactions.
        engine = session.get_engine(writer=False)
        barrier = threading.Barrier(busy)
        errors = []

        def hold():
            try:
                with engine.connect() as conn:
                    conn.execute(sa.text('SELECT 1'))
                    barrier.wait(10)  # all checked out at once
            except Exception as exc:
                errors.append(exc)
        threads = [threading.Thread(target=hold) for _ in range(busy)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        self.assertEqual([], errors)
        self.assertEqual(busy, engine.pool.checkedin())
        # The other databases get the same default through oslo.db.
        conf = cfg.ConfigOpts()
        database_conf.register_opts(conf)
        conf([])
        self.assertEqual(database_conf.MAX_POOL_SIZE,
                         engine_opts.engine_kwargs(conf)['max_pool_size'])
