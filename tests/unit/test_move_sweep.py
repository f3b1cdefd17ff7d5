"""The stuck-move sweep on a real (SQLite) database: a stalled step is
re-sent once, then rolled back with move_failed; a live migration still
running on its source is left alone."""
import time

from nova_moves.conductor import recovery
from nova_moves.db import api as db_api
from nova_moves import states
from tests.unit import fixtures as nm_fixtures


def _sweep(test, compute):
    """One sweep with a timeout of 0: everything stalled is stuck."""
    time.sleep(0.01)
    return recovery.recover_interrupted_moves(
        timeout=0, compute_rpcapi=compute, ctxt=test.ctxt)


class SweepTest(nm_fixtures.TwoHostsTestCase):

    _sweep = _sweep

    def _finish_lost(self):
        uuid = self.boot_on_h1(states.RESIZE_PREP)
        migration = self.migrate_to_h2(uuid)
        db_api.allocations_replace(uuid, {self.rps['h2']: {'VCPU': 1}})
        # The source finished resize_instance; its finish_resize cast was
        # lost with the broker's queues.
        self.source_done(migration)
        return uuid, migration

    def test_lost_finish_resize_is_resent_then_rolled_back(self):
        uuid, migration = self._finish_lost()
        compute = nm_fixtures.RecordingCompute()
        self.assertEqual([uuid], self._sweep(compute))
        # The destination, asked first, does not run it.
        self.assertEqual([('move_step_status', 'h2'), ('finish_resize', 'h2')],
                         compute.sent)
        self.assertEqual(1, db_api.migration_get(
            migration['uuid'])['step_retries'])
        # Lost again: rolled back, the source asked to power its copy on.
        self.assertEqual([uuid], self._sweep(compute))
        self.assertEqual(('finish_revert_resize', 'h1'), compute.sent[-1])
        self.assertEqual(states.M_ERROR,
                         db_api.migration_get(migration['uuid'])['status'])
        server = db_api.instance_get(uuid)
        self.assertIsNone(server['task_state'])
        self.assertEqual('h1', server['host'])
        self.assertEqual({uuid: {self.rps['h1']: {'VCPU': 1}}},
                         db_api.allocations_all())

    def _live(self, status):
        uuid = self.boot_on_h1(states.MIGRATING)
        migration = db_api.migration_create({
            'instance_uuid': uuid, 'migration_type': states.LIVE_MIGRATION,
            'status': states.M_ACCEPTED, 'source_compute': 'h1',
            'source_node': 'h1', 'dest_compute': 'h2', 'dest_node': 'h2'})
        db_api.move_advance(migration['uuid'],
                            status=[states.M_ACCEPTED, status],
                            allocations={'op': 'park_source'})
        return uuid, migration

    def test_running_live_migration_is_asked_and_left_alone(self):
        uuid, migration = self._live(states.M_RUNNING)
        compute = nm_fixtures.RecordingCompute(running=True)
        self.assertEqual([], self._sweep(compute))
        self.assertEqual([('live_migration_status', 'h1')], compute.sent)
        self.assertEqual(states.M_RUNNING,
                         db_api.migration_get(migration['uuid'])['status'])

    def test_live_migration_its_source_does_not_know_is_rolled_back(self):
        uuid, migration = self._live(states.M_RUNNING)
        compute = nm_fixtures.RecordingCompute(running=None)  # no answer
        self.assertEqual([uuid], self._sweep(compute))
        self.assertEqual(states.M_ERROR,
                         db_api.migration_get(migration['uuid'])['status'])
        self.assertEqual(('rollback_live_migration_at_destination', 'h2'),
                         compute.sent[-1])
        self.assertIsNone(db_api.instance_get(uuid)['task_state'])
        self.assertEqual({uuid: {self.rps['h1']: {'VCPU': 1}}},
                         db_api.allocations_all())

    def test_slow_cold_step_is_asked_and_left_alone(self):
        uuid, migration = self._finish_lost()
        compute = nm_fixtures.RecordingCompute(running=True)
        for _ in range(3):
            self.assertEqual([], self._sweep(compute))
        self.assertEqual([('move_step_status', 'h2')] * 3, compute.sent)
        row = db_api.migration_get(migration['uuid'])
        self.assertEqual((states.M_POST_MIGRATING, 0),
                         (row['status'], row['step_retries'] or 0))

    def test_unreachable_host_is_asked_once_per_sweep(self):
        first, _ = self._finish_lost()
        second, _ = self._finish_lost()
        compute = nm_fixtures.RecordingCompute(running=None)
        # Both re-sent (the host runs them when it is back); one question.
        self.assertEqual({first, second}, set(self._sweep(compute)))
        self.assertEqual(1, compute.sent.count(('move_step_status', 'h2')))

    def test_every_live_status_is_recoverable(self):
        for status in states.LIVE_MIGRATION_IN_FLIGHT:
            uuid, migration = self._live(status)
            compute = nm_fixtures.RecordingCompute(running=False)
            self._sweep(compute)
            if status == states.M_QUEUED:
                # Its cast may have been lost: re-sent once, first.
                self.assertIn(('live_migration', 'h1'), compute.sent)
                self._sweep(compute)
            self.assertEqual(states.M_ERROR, db_api.migration_get(
                migration['uuid'])['status'], status)
            self.assertIsNone(db_api.instance_get(uuid)['task_state'])
            self.assertEqual({self.rps['h1']: {'VCPU': 1}},
                             db_api.allocations_get(uuid))


class LifecycleSweepTest(nm_fixtures.TwoHostsTestCase):
    """The sweep's part for the lifecycle actions (no migration record,
    conductor/lifecycle_sweep.py)."""

    def setUp(self):
        super().setUp()
        db_api.service_report('h1', 'nova-moves-compute', 'compute', 'nova')

    _sweep = _sweep

    def test_a_lost_cast_is_sent_again(self):
        uuid = self.boot_on_h1(states.PAUSING)
        compute = nm_fixtures.RecordingCompute(running=False)
        self.assertEqual([uuid], self._sweep(compute))
        self.assertEqual([('move_step_status', 'h1'),
                          ('pause_instance', 'h1')], compute.sent)
        self.assertEqual(states.PAUSING,
                         db_api.instance_get(uuid)['task_state'])

    def test_a_running_action_is_left_alone(self):
        uuid = self.boot_on_h1(states.SHELVING)
        compute = nm_fixtures.RecordingCompute(running=True)
        self.assertEqual([], self._sweep(compute))
        self.assertEqual(states.SHELVING,
                         db_api.instance_get(uuid)['task_state'])

    def test_same_host_rebuild_is_never_failed_as_an_evacuation(self):
        uuid = self.boot_on_h1(states.REBUILDING)
        compute = nm_fixtures.RecordingCompute(running=False)
        self.assertEqual([uuid], self._sweep(compute))
        self.assertEqual(('rebuild_instance_same_host', 'h1'),
                         compute.sent[-1])
        server = db_api.instance_get(uuid)
        self.assertEqual((states.ACTIVE, states.REBUILDING),
                         (server['vm_state'], server['task_state']))

    def test_a_host_that_is_down_gives_the_task_state_back(self):
        uuid = self.boot_on_h1(states.POWERING_OFF)
        db_api.service_update(
            db_api.service_get_by_host_and_binary(
                'h1', 'nova-moves-compute')['id'], {'forced_down': True})
        compute = nm_fixtures.RecordingCompute(running=None)
        self.assertEqual([uuid], self._sweep(compute))
        server = db_api.instance_get(uuid)
        self.assertEqual((states.ACTIVE, None),
                         (server['vm_state'], server['task_state']))
        self.assertIn('is down', db_api.instance_fault_get_latest(uuid)[
            'message'])

    def test_an_unshelve_no_host_took_is_undone(self):
        uuid = self.boot_on_h1(states.UNSHELVING)
        db_api.instance_update(uuid, {'vm_state': states.SHELVED_OFFLOADED,
                                      'host': None, 'node': None})
        compute = nm_fixtures.RecordingCompute(running=False)
        self.assertEqual([uuid], self._sweep(compute))
        server = db_api.instance_get(uuid)
        self.assertEqual((states.SHELVED_OFFLOADED, None, None),
                         (server['vm_state'], server['task_state'],
                          server['host']))
        self.assertEqual({}, db_api.allocations_all())

    def test_a_boot_is_never_sent_again_and_is_error_on_a_down_host(self):
        uuid = self.boot_on_h1(states.SPAWNING)
        db_api.instance_update(uuid, {'vm_state': states.BUILDING})
        compute = nm_fixtures.RecordingCompute(running=False)
        # Its cast may be late; its request is gone: nothing re-sent.
        self.assertEqual([], self._sweep(compute))
        self.assertEqual([('move_step_status', 'h1')], compute.sent)
        db_api.service_update(
            db_api.service_get_by_host_and_binary(
                'h1', 'nova-moves-compute')['id'], {'forced_down': True})
        self.assertEqual([uuid], self._sweep(
            nm_fixtures.RecordingCompute(running=None)))
        server = db_api.instance_get(uuid)
        self.assertEqual((states.ERROR, None),
                         (server['vm_state'], server['task_state']))
        self.assertIn('is down',
                      db_api.instance_fault_get_latest(uuid)['message'])
