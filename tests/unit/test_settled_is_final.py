"""Settled is final (issue 25): an undo that comes after its move settled
or advanced writes nothing (no fault, no Error event), and a stalled
step is acted on by exactly one of several sweeping conductors."""
import datetime
import time

from nova_moves.conductor import recovery
from nova_moves.conductor import steps
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import states
from tests.unit import fixtures as nm_fixtures


class SettledIsFinalTest(nm_fixtures.TwoHostsTestCase):

    def _server(self, task_state=states.RESIZE_PREP):
        uuid = self.boot_on_h1(task_state)
        db_api.action_start(uuid, 'migrate', 'req-1', 'u', 'p')
        return uuid

    def _post_migrating(self):
        uuid = self._server()
        migration = self.migrate_to_h2(uuid)
        self.source_done(migration)
        return uuid, db_api.migration_get(migration['uuid'])

    def _nothing_recorded(self, uuid):
        self.assertIsNone(db_api.instance_fault_get_latest(uuid))
        [action] = db_api.actions_get(uuid)
        self.assertEqual([], [e for e in db_api.action_events_get(
            action['id']) if e['result'] == 'Error'])

    def test_two_conductors_one_acts(self):
        uuid, migration = self._post_migrating()
        time.sleep(0.01)
        # Both conductors read the same stalled migration in their sweep.
        [seen_by_a] = db_api.migrations_unsettled()
        [seen_by_b] = db_api.migrations_unsettled()
        a = nm_fixtures.RecordingCompute()
        b = nm_fixtures.RecordingCompute()
        acted = [steps.redrive_or_fail(self.ctxt, seen_by_a, a),
                 steps.redrive_or_fail(self.ctxt, seen_by_b, b)]
        self.assertEqual([True, False], acted)
        self.assertEqual([('move_step_status', 'h2'),
                          ('finish_resize', 'h2')], a.sent)
        self.assertEqual([], b.sent)  # not even asked
        self.assertEqual(1, db_api.migration_get(
            migration['uuid'])['step_retries'])

    def test_step_advanced_after_the_claim_is_not_rolled_back(self):
        uuid, migration = self._post_migrating()
        claimed = db_api.move_claim(migration['uuid'], migration['status'],
                                    migration['updated_at'])
        self.assertIsNotNone(claimed)
        # The slow finish_resize starts its step after the claim.
        db_api.move_advance(
            migration['uuid'], status=[states.M_POST_MIGRATING],
            task_state=[states.RESIZE_MIGRATED, states.RESIZE_FINISH])
        self.assertRaises(
            exception.MoveConflict, db_api.move_failed, migration['uuid'],
            expected_status=[states.M_POST_MIGRATING], claimed=claimed,
            fault={'code': 500, 'message': 'late'},
            event=steps.error_event('late'))
        self.assertEqual(states.M_POST_MIGRATING,
                         db_api.migration_get(migration['uuid'])['status'])
        self._nothing_recorded(uuid)
        # A second claim on the stamp the sweep read first is lost too.
        self.assertIsNone(db_api.move_claim(
            migration['uuid'], migration['status'],
            migration['updated_at']))

    def test_failed_on_a_terminal_migration_writes_nothing(self):
        uuid, migration = self._post_migrating()
        db_api.move_advance(
            migration['uuid'],
            status=[states.M_POST_MIGRATING, states.M_FINISHED],
            task_state=[states.RESIZE_MIGRATED, None],
            instance_values={'vm_state': states.RESIZED})
        db_api.move_advance(
            migration['uuid'],
            status=[states.M_FINISHED, states.M_CONFIRMED],
            instance_values={'vm_state': states.ACTIVE},
            allocations={'op': 'drop_source'})
        self.assertRaises(
            exception.MoveConflict, db_api.move_failed, migration['uuid'],
            fault={'code': 500, 'message': 'late'},
            event=steps.error_event('late'))
        self._nothing_recorded(uuid)

    def test_interrupted_sweep_of_a_move_that_finished_meanwhile(self):
        """The sweep read the server stalled in resize_prep; by the time
        it looks for the migration the move finished: nothing written."""
        uuid, migration = self._post_migrating()
        stale = db_api.instance_get(uuid)
        stale['task_state'] = states.RESIZE_PREP
        db_api.move_advance(
            migration['uuid'],
            status=[states.M_POST_MIGRATING, states.M_FINISHED],
            task_state=[states.RESIZE_MIGRATED, None],
            instance_values={'vm_state': states.RESIZED})
        cutoff = datetime.datetime.now(
            datetime.timezone.utc).replace(tzinfo=None)
        self.assertFalse(recovery._recover(stale, cutoff, redrive=True))
        self._nothing_recorded(uuid)
        self.assertRaises(
            exception.MoveConflict, db_api.move_failed, instance_uuid=uuid,
            task_states=[states.RESIZE_PREP],
            fault={'code': 500, 'message': 'late'})
        self._nothing_recorded(uuid)
        shown = db_api.instance_get(uuid)
        self.assertEqual((states.RESIZED, None),
                         (shown['vm_state'], shown['task_state']))
