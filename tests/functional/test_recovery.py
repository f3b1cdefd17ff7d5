"""Moves interrupted by a dead process are rolled back by the conductors.

oslo.messaging acknowledges a message before the handler runs, so a
conductor killed mid-flow loses it. The test writes into the stack's
database exactly the state such a flow leaves behind (what the API and
the conductor write before they cast), then waits for the running
conductor's sweep to put the server back."""
import time
import uuid

from nova_moves.db import api as db_api
from tests.functional import base
from tests.functional import stack_db


class InterruptedMoveRecoveryTest(base.StackTestCase):
    COMPUTES = 2
    # The resize_instance step gets its own, long timeout: a move inside
    # its step's timeout is left to its flow.
    EXTRA_CONF = {'DEFAULT': {'stuck_move_timeout': 2,
                              'move_step_timeouts': 'migrating:600'}}

    def setUp(self):
        super().setUp()
        stack_db.use_stack_database(self)

    def _interrupt(self, server, task_state, migration_type, status,
                   move_allocation=True):
        """What the API and a conductor that died half-way leave."""
        db_api.instance_update(server['id'], {'task_state': task_state},
                               expected_task_state=[None])
        migration = db_api.migration_create({
            'uuid': str(uuid.uuid4()), 'instance_uuid': server['id'],
            'migration_type': migration_type, 'status': status,
            'source_compute': server['OS-EXT-SRV-ATTR:host'],
            'source_node': server['OS-EXT-SRV-ATTR:host']})
        if move_allocation:
            db_api.allocations_move(server['id'], migration['uuid'])
        return migration

    def _wait_recovered(self, server_id, status='ACTIVE'):
        server = self.admin.wait_for_status(server_id, status, timeout=30)
        self.assertIsNone(server['OS-EXT-STS:task_state'])
        return server

    def test_cold_migration_lost_by_conductor_is_rolled_back(self):
        server = self.boot('lost-migrate')
        # The API records the action before its cast; the cast is lost.
        db_api.action_start(server['id'], 'migrate', 'req-lost', 'admin',
                            'admin')
        migration = self._interrupt(server, 'resize_prep', 'migration',
                                    'pre-migrating')
        self.assertNotIn(server['id'], self.admin.placement()['allocations'])
        recovered = self._wait_recovered(server['id'])
        self.assertEqual(server['OS-EXT-SRV-ATTR:host'],
                         recovered['OS-EXT-SRV-ATTR:host'])
        self.assertEqual('error',
                         db_api.migration_get(migration['uuid'])['status'])
        allocations = self.admin.placement()['allocations']
        self.assertIn(server['id'], allocations)
        self.assertNotIn(migration['uuid'], allocations)
        # The user sees why in the instance action.
        action = self.admin.get(
            '/servers/%s/os-instance-actions/req-lost' % server['id'],
            version='2.84').json()['instanceAction']
        self.assertEqual('Error', action['message'])
        [event] = action['events']
        self.assertEqual('conductor_recover_interrupted_move',
                         event['event'])
        self.assertEqual('Error', event['result'])
        self.assertIn('rolled back', event['details'])

    def test_live_migration_lost_before_the_conductor_is_rolled_back(self):
        server = self.boot('lost-live')
        self._interrupt(server, 'migrating', 'live-migration', 'accepted',
                        move_allocation=False)
        self._wait_recovered(server['id'])

    def test_resize_without_a_migration_row_is_released(self):
        server = self.boot('lost-early')
        db_api.instance_update(server['id'], {'task_state': 'resize_prep'},
                               expected_task_state=[None])
        self._wait_recovered(server['id'])

    def test_a_move_in_progress_is_left_alone(self):
        server = self.boot('busy')
        # A migration that got past its first step belongs to its flow
        # until its step's timeout ([DEFAULT] move_step_timeouts).
        migration = self._interrupt(server, 'resize_migrating', 'migration',
                                    'migrating')
        time.sleep(5)
        shown = self.admin.server(server['id'])
        self.assertEqual('resize_migrating', shown['OS-EXT-STS:task_state'])
        # Put it back by hand so the invariants hold for the next test.
        db_api.allocations_move(migration['uuid'], server['id'])
        db_api.migration_update(migration['id'], {'status': 'error'})
        db_api.instance_update(server['id'], {'task_state': None})
