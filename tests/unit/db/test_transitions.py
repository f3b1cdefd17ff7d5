"""move_start / move_advance / move_failed and consumer generations on a
real (SQLite) database: each one transaction, stale steps refused."""
import testtools

from nova_moves.db import api as db_api
from nova_moves.db.phases import view as _phases_view
from nova_moves import exception
from nova_moves import states
from tests.unit import fixtures as nm_fixtures

SMALL = {'flavorid': 's', 'name': 'small', 'vcpus': 1, 'memory_mb': 512,
         'root_gb': 1}
BIG = dict(SMALL, flavorid='b', name='big', vcpus=2)


def phases_of(migration):
    return _phases_view(migration['phases'])


class TransitionsTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.Database())
        nm_fixtures.node('h1')
        nm_fixtures.node('h2')
        self.rps = nm_fixtures.providers()
        self.server = db_api.instance_create({
            'display_name': 'vm', 'project_id': 'p', 'user_id': 'u',
            'host': 'h1', 'node': 'h1', 'flavor': SMALL,
            'vm_state': states.ACTIVE, 'power_state': 1})
        self.uuid = self.server['uuid']
        db_api.allocations_replace(self.uuid, {self.rps['h1']: {'VCPU': 1}})

    def _start_resize(self):
        db_api.move_start(self.uuid, states.RESIZE_PREP, [states.ACTIVE],
                          'resize', 'req-1', 'u', 'p')
        return db_api.migration_start(self.uuid, {
            'instance_uuid': self.uuid, 'migration_type': states.RESIZE,
            'status': states.M_PRE_MIGRATING, 'source_compute': 'h1',
            'source_node': 'h1', 'dest_compute': 'h2', 'dest_node': 'h2',
            'old_flavor_id': 's', 'new_flavor_id': 'b'}, SMALL, BIG)

    def test_move_start_is_all_or_nothing(self):
        rows = db_api.move_start(
            self.uuid, states.MIGRATING, [states.ACTIVE], 'live-migration',
            'req-1', 'u', 'p', migration={
                'migration_type': states.LIVE_MIGRATION,
                'status': states.M_ACCEPTED, 'source_compute': 'h1'})
        self.assertEqual(states.MIGRATING, rows['instance']['task_state'])
        self.assertEqual(self.uuid, rows['migration']['instance_uuid'])
        self.assertRaises(exception.UnexpectedTaskState, db_api.move_start,
                          self.uuid, states.REBUILDING, [states.ACTIVE],
                          'evacuate', 'req-2', 'u', 'p',
                          migration={'migration_type': states.EVACUATION,
                                     'status': states.M_ACCEPTED})
        self.assertEqual(1, len(db_api.migration_get_all(
            instance_uuid=self.uuid)))
        self.assertEqual(1, len(db_api.actions_get(self.uuid)))

    def test_a_second_cold_move_start_while_one_runs_writes_nothing(self):
        # A repeated migrate_server while the first is still preparing:
        # the task_state compare-and-swap alone would let it through.
        first = self._start_resize()
        before = (db_api.allocations_get(self.uuid),
                  db_api.allocations_get(first['uuid']),
                  db_api.instance_get(self.uuid))
        self.assertRaises(
            exception.MoveConflict, db_api.cold_move_start, self.uuid,
            lambda server: ({'instance_uuid': self.uuid,
                             'migration_type': states.MIGRATION,
                             'status': states.M_PRE_MIGRATING,
                             'source_compute': 'h1'}, SMALL, SMALL))
        self.assertEqual([first['uuid']], [
            m['uuid'] for m in db_api.migration_get_all(
                instance_uuid=self.uuid)])
        self.assertEqual(before, (db_api.allocations_get(self.uuid),
                                  db_api.allocations_get(first['uuid']),
                                  db_api.instance_get(self.uuid)))

    def test_a_cold_start_that_must_wait_is_written_queued(self):
        # The gate decides before the migration's row is written: a move
        # that must wait is inserted queued, both phases stamped, not
        # inserted pre-migrating and then compare-and-swapped.
        other = db_api.migration_create({
            'uuid': 'a0000000-0000-0000-0000-000000000000',
            'instance_uuid': 'b0000000-0000-0000-0000-000000000000',
            'migration_type': states.LIVE_MIGRATION,
            'status': states.M_ACCEPTED, 'source_compute': 'h2'})
        self.assertTrue(db_api.move_queue_enter(
            other['uuid'], other['instance_uuid'], 'h2', 'live',
            {'kwargs': {}}, states.M_ACCEPTED, 1, 1, 'c1')['admitted'])
        db_api.move_start(self.uuid, states.RESIZE_PREP, [states.ACTIVE],
                          'migrate', 'req-1', 'u', 'p')
        statements = self.useFixture(nm_fixtures.Statements())
        migration, _server, _generation, entered = db_api.cold_move_start(
            self.uuid, lambda server: ({
                'instance_uuid': self.uuid,
                'migration_type': states.MIGRATION,
                'status': states.M_PRE_MIGRATING, 'source_compute': 'h1'},
                SMALL, SMALL),
            gate={'kind': 'cold', 'limits': (1, 1), 'me': 'c1',
                  'request': {'kwargs': {}}})
        self.assertFalse(entered['admitted'])
        self.assertEqual([], statements.starting('UPDATE migrations'))
        stored = db_api.migration_get(migration['uuid'])
        self.assertEqual(states.M_QUEUED, stored['status'])
        self.assertEqual(states.M_QUEUED, migration['status'])
        self.assertEqual([states.M_PRE_MIGRATING, states.M_QUEUED],
                         [p['phase'] for p in phases_of(stored)])
        # Admitted later, it resumes where it would have started.
        db_api.migration_update(other['uuid'],
                                {'status': states.M_COMPLETED})
        self.assertEqual([migration['uuid']], [
            r['migration_uuid'] for r in db_api.move_queue_admit(1, 1,
                                                                 'c1')])
        self.assertEqual(states.M_PRE_MIGRATING,
                         db_api.migration_get(migration['uuid'])['status'])

    def test_advance_compares_both_rows_and_refuses_stale_steps(self):
        migration = self._start_resize()
        rows = db_api.move_advance(
            migration['uuid'],
            status=[states.M_PRE_MIGRATING, states.M_MIGRATING],
            task_state=[states.RESIZE_PREP, states.RESIZE_MIGRATING])
        self.assertEqual(states.M_MIGRATING, rows['migration']['status'])
        self.assertEqual(states.RESIZE_MIGRATING,
                         rows['instance']['task_state'])
        # The same message delivered twice: the second changes nothing.
        self.assertRaises(
            exception.MoveConflict, db_api.move_advance, migration['uuid'],
            status=[states.M_PRE_MIGRATING, states.M_MIGRATING],
            task_state=[states.RESIZE_PREP, states.RESIZE_MIGRATING])
        # A step for another destination is stale too.
        self.assertRaises(
            exception.MoveConflict, db_api.move_advance, migration['uuid'],
            status=[states.M_MIGRATING],
            expected_values={'dest_compute': 'h3'})
        # The status alone matching is not enough: task_state is checked.
        self.assertRaises(
            exception.MoveConflict, db_api.move_advance, migration['uuid'],
            status=[states.M_MIGRATING, states.M_POST_MIGRATING],
            task_state=[states.RESIZE_MIGRATED, None])
        self.assertEqual(states.M_MIGRATING,
                         db_api.migration_get(migration['uuid'])['status'])

    def test_move_failed_puts_everything_back_once(self):
        migration = self._start_resize()
        db_api.allocations_replace(self.uuid, {self.rps['h2']: {'VCPU': 2}})
        rows = db_api.move_failed(migration['uuid'], fault={
            'code': 500, 'message': 'boom', 'host': 'h2'})
        self.assertEqual(states.M_ERROR, rows['migration']['status'])
        instance = rows['instance']
        self.assertIsNone(instance['task_state'])
        self.assertEqual(SMALL, instance['flavor'])
        self.assertEqual('h1', instance['host'])
        self.assertEqual({self.uuid: {self.rps['h1']: {'VCPU': 1}}},
                         db_api.allocations_all())
        self.assertEqual('boom',
                         db_api.instance_fault_get_latest(self.uuid)[
                             'message'])
        # A second undo (the sweep, a late failure) is refused.
        self.assertRaises(exception.MoveConflict, db_api.move_failed,
                          migration['uuid'])

    def test_each_status_change_stamps_its_phase(self):
        migration = self._start_resize()
        db_api.move_advance(migration['uuid'],
                            status=[states.M_PRE_MIGRATING,
                                    states.M_MIGRATING])
        # A step that keeps the status adds nothing.
        db_api.move_advance(migration['uuid'], status=[states.M_MIGRATING],
                            values={'dest_host': '10.0.0.2'})
        # A stale step writes nothing, its phase neither.
        self.assertRaises(exception.MoveConflict, db_api.move_advance,
                          migration['uuid'],
                          status=[states.M_PRE_MIGRATING,
                                  states.M_FINISHED])
        db_api.move_failed(migration['uuid'])
        phases = phases_of(db_api.migration_get(migration['uuid']))
        self.assertEqual([states.M_PRE_MIGRATING, states.M_MIGRATING,
                          states.M_ERROR], [p['phase'] for p in phases])
        times = [p['started_at'] for p in phases]
        self.assertEqual(sorted(times), times)
        rows = db_api.move_start(
            self.uuid, states.MIGRATING, [states.ACTIVE], 'live-migration',
            'req-2', 'u', 'p', migration={
                'migration_type': states.LIVE_MIGRATION,
                'status': states.M_ACCEPTED, 'source_compute': 'h1'})
        live = rows['migration']
        db_api.migration_update(live['id'], {'status': states.M_QUEUED},
                                expected_status=[states.M_ACCEPTED])
        self.assertEqual([states.M_ACCEPTED, states.M_QUEUED],
                         [p['phase'] for p in phases_of(
                             db_api.migration_get(live['id']))])

    def test_claim_for_a_rolled_back_move_fails(self):
        migration = self._start_resize()
        read = db_api.consumer_generation_get(self.uuid)
        db_api.move_failed(migration['uuid'])
        # The late scheduler claim states the generation its conductor
        # read before the rollback.
        self.assertRaises(exception.ConsumerGenerationConflict,
                          db_api.allocations_replace, self.uuid,
                          {self.rps['h2']: {'VCPU': 2}},
                          consumer_generation=read)
        self.assertEqual({self.rps['h1']: {'VCPU': 1}},
                         db_api.allocations_get(self.uuid))

    def test_generations_only_move_forward(self):
        seen = []
        migration = self._start_resize()
        seen.append(db_api.consumer_generation_get(self.uuid))
        db_api.allocations_replace(self.uuid, {self.rps['h2']: {'VCPU': 2}})
        seen.append(db_api.consumer_generation_get(self.uuid))
        db_api.move_failed(migration['uuid'])
        seen.append(db_api.consumer_generation_get(self.uuid))
        db_api.allocations_delete(self.uuid)
        seen.append(db_api.consumer_generation_get(self.uuid))
        self.assertEqual(sorted(set(seen)), seen)

    def _finished(self):
        migration = self._start_resize()
        db_api.migration_update(migration['uuid'],
                                {'status': states.M_FINISHED})
        db_api.instance_update(self.uuid, {'vm_state': states.RESIZED,
                                           'task_state': None})
        return migration

    def _revert_start(self):
        return db_api.settle_start(
            'revert_resize', instance_uuid=self.uuid,
            action={'instance_uuid': self.uuid, 'action': 'revertResize',
                    'request_id': 'req-revert', 'user_id': 'u',
                    'project_id': 'p'})[0]

    def test_a_revert_starts_in_one_transaction(self):
        migration = self._finished()
        self.assertEqual(migration['uuid'], self._revert_start()['uuid'])
        self.assertEqual(states.M_REVERTING, db_api.migration_get(
            migration['uuid'])['status'])
        self.assertEqual(states.RESIZE_REVERTING,
                         db_api.instance_get(self.uuid)['task_state'])
        self.assertIsNotNone(db_api.action_get_by_request_id(
            self.uuid, 'req-revert'))

    def test_a_revert_of_a_busy_server_writes_nothing(self):
        migration = self._finished()
        db_api.instance_update(self.uuid, {'task_state': 'powering-off'})
        error = self.assertRaises(exception.InstanceInvalidState,
                                  self._revert_start)
        self.assertIn('powering-off', str(error))
        self.assertEqual(states.M_FINISHED, db_api.migration_get(
            migration['uuid'])['status'])
        self.assertIsNone(db_api.action_get_by_request_id(
            self.uuid, 'req-revert'))

    def test_a_confirm_starts_by_migration_with_its_facts(self):
        # The drain's and the auto-confirm's start: the same guard as the
        # API's, and the facts the confirm's cast carries (compute 1.8).
        migration = self._finished()
        started, facts = db_api.settle_start(
            'confirm_resize', migration_uuid=migration['uuid'])
        self.assertEqual(migration['uuid'], started['uuid'])
        self.assertEqual({'dest', 'vm_state'}, set(facts))
        self.assertEqual(states.M_CONFIRMING, db_api.migration_get(
            migration['uuid'])['status'])
        self.assertRaises(exception.Conflict, db_api.settle_start,
                          'confirm_resize', migration_uuid=migration['uuid'])
