"""move_advance's migration half (db/step_sql.py) on both of its paths:
one UPDATE ... RETURNING with the phase appended in SQL (PostgreSQL,
SQLite), and the read-first compare-and-swap (MySQL, MariaDB). Both must
write the same rows and refuse the same stale steps with the same
reasons."""
import datetime
import json

import testscenarios
import testtools

from nova_moves.db import api as db_api
from nova_moves.db import session as db_session
from nova_moves import exception
from nova_moves import states
from tests.unit import fixtures as nm_fixtures

SMALL = {'flavorid': 's', 'name': 'small', 'vcpus': 1, 'memory_mb': 512,
         'root_gb': 1}


def _to_second(row):
    return dict(row, updated_at=(row['updated_at'] or '')[:19])


class StepSqlTest(testscenarios.WithScenarios, testtools.TestCase):

    scenarios = [('returning', {'returning': True}),
                 ('read_first', {'returning': False})]

    def use_database(self):
        """SQLite here; the real servers in tests/functional/
        test_step_sql_databases.py."""
        self.useFixture(nm_fixtures.Database())

    def setUp(self):
        super().setUp()
        self.use_database()
        if self.returning is not None:  # both paths on one database
            engine = db_session.get_engine()
            self.patch(engine.dialect, 'update_returning', self.returning)
        nm_fixtures.node('h1')
        nm_fixtures.node('h2')
        server = db_api.instance_create({
            'display_name': 'vm', 'project_id': 'p', 'user_id': 'u',
            'host': 'h1', 'node': 'h1', 'flavor': SMALL,
            'vm_state': states.ACTIVE, 'power_state': 1})
        self.uuid = server['uuid']
        db_api.move_start(server['uuid'], states.MIGRATING, [states.ACTIVE],
                          'live-migration', 'req-1', 'u', 'p')
        self.migration = db_api.migration_create({
            'instance_uuid': server['uuid'],
            'migration_type': states.LIVE_MIGRATION,
            'status': states.M_QUEUED, 'source_compute': 'h1',
            'dest_compute': 'h2'})

    def phases(self):
        return [p for p, _ in json.loads(
            db_api.migration_get(self.migration['uuid'])['phases'])]

    def advance(self, **kwargs):
        return db_api.move_advance(self.migration['uuid'], **kwargs)

    def test_phases_are_appended_passed_first_and_not_twice(self):
        rows = self.advance(status=[states.M_QUEUED, states.M_RUNNING],
                            passed_phases=[[states.M_PREPARING,
                                            '2030-01-01T00:00:02']])
        self.assertEqual(states.M_RUNNING, rows['migration']['status'])
        self.assertEqual(['queued', 'preparing', 'running'],
                         self.phases())
        at = json.loads(rows['migration']['phases'])[1][1]
        self.assertEqual('2030-01-01T00:00:02.000000', at)
        # A step re-entered in its own status stamps nothing again.
        rows = self.advance(status=[[states.M_QUEUED, states.M_RUNNING],
                                    states.M_RUNNING])
        self.assertEqual(['queued', 'preparing', 'running'],
                         self.phases())
        # The row returned is the row as written (no read after; to the
        # second: MySQL's DATETIME keeps no fraction).
        self.assertEqual(_to_second(db_api.migration_get(
            self.migration['uuid'])), _to_second(rows['migration']))

    def test_a_migration_without_phases_gets_a_fresh_list(self):
        db_api.migration_update(self.migration['uuid'], {'phases': None})
        self.advance(status=[states.M_QUEUED, states.M_RUNNING])
        self.assertEqual(['running'], self.phases())

    def test_stale_steps_are_refused_with_the_reason(self):
        conflict = self.assertRaises(
            exception.MoveConflict, self.advance,
            status=[states.M_RUNNING, states.M_COMPLETED])
        self.assertIn('migration is queued, expected running', str(conflict))
        conflict = self.assertRaises(
            exception.MoveConflict, self.advance,
            status=[states.M_QUEUED], expected_values={'dest_compute': 'h3'})
        self.assertIn('dest_compute is h2, not h3', str(conflict))
        conflict = self.assertRaises(
            exception.MoveConflict, self.advance,
            status=[states.M_QUEUED],
            claimed=datetime.datetime(2000, 1, 1))
        self.assertIn('changed meanwhile', str(conflict))
        self.assertRaises(exception.MigrationNotFound, db_api.move_advance,
                          '00000000-0000-0000-0000-000000000000',
                          status=[states.M_QUEUED])
        self.assertEqual(['queued'], self.phases())
        self.assertEqual(states.M_QUEUED, db_api.migration_get(
            self.migration['uuid'])['status'])

    def test_by_integer_id_and_a_null_expected_value(self):
        rows = db_api.move_advance(
            self.migration['id'], status=[states.M_QUEUED, states.M_RUNNING],
            expected_values={'dest_node': None})
        self.assertEqual(states.M_RUNNING, rows['migration']['status'])
