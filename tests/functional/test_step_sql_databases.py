"""A move step's SQL on the real database servers: the guarded UPDATE
... RETURNING with the phase appended by the statement (PostgreSQL), the
read-first compare-and-swap (MariaDB, which returns no rows from an
UPDATE), and the step's events written with their action found inside
their own statements. The same checks as tests/unit/db/test_step_sql.py
(SQLite), each on a fresh database of the machine's server as the
openstack_citest user (tools/test-setup.sh); skipped when unreachable.
No processes: only the database layer runs here."""
from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves.db import migration
from nova_moves import states
from tests.functional import databases
from tests.unit.db import test_step_sql


class _OnServer:
    """test_step_sql.StepSqlTest on a fresh database of a server (a
    mixin: the classes below name the server)."""

    ADMIN_URL = None
    URL_FORMAT = None
    scenarios = [('server', {'returning': None})]

    def setUp(self):
        try:
            name = databases.create_database(self.ADMIN_URL, 'nm_step')
        except Exception as exc:
            self.skipTest('%s unavailable: %s' % (type(self).__name__, exc))
        self.addCleanup(self._drop, name)
        self._url = self.URL_FORMAT % name
        super().setUp()

    def _drop(self, name):
        db_api.dispose_engines()
        databases.drop_database(self.ADMIN_URL, name)

    def use_database(self):
        db_api.dispose_engines()
        conf.CONF.set_override('connection', self._url, group='database')
        self.addCleanup(conf.CONF.clear_override, 'connection',
                        group='database')
        self.addCleanup(db_api.dispose_engines)
        migration.db_sync()

    def test_step_events_find_their_action(self):
        rows = self.advance(
            status=[states.M_QUEUED, states.M_RUNNING],
            event={'name': 'compute_step', 'host': 'h1', 'result': None},
            events=[{'name': 'conductor_done', 'result': 'Success',
                     'whole': True, 'start_time': '2030-01-01T00:00:00'}],
            request_id='req-1')
        self.assertEqual(states.M_RUNNING, rows['migration']['status'])
        action = db_api.action_get_by_request_id(self.uuid, 'req-1')
        events = {e['event']: e['result']
                  for e in db_api.action_events_get(action['id'])}
        self.assertEqual({'compute_step': None, 'conductor_done': 'Success'},
                         events)


class PostgreSQLStepSqlTest(_OnServer, test_step_sql.StepSqlTest):
    ADMIN_URL = databases.PG_ADMIN_URL
    URL_FORMAT = databases.PG_URL_FORMAT


class MySQLStepSqlTest(_OnServer, test_step_sql.StepSqlTest):
    ADMIN_URL = databases.MYSQL_ADMIN_URL
    URL_FORMAT = databases.MYSQL_URL_FORMAT
