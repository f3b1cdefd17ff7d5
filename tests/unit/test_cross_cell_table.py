"""The cross-cell resize's table (nova_moves/moves/cross_cell.py) against
the flow that runs it: the conductor's task and settle, the sweep's
choice of step, and the guards shared with the cold table (the API's
settle_start serves both)."""
import testtools

from nova_moves.compute import cross_cell_rpcapi
from nova_moves.conductor.tasks import cross_cell as task
from nova_moves import moves
from nova_moves.moves import cold
from nova_moves.moves import cross_cell
from nova_moves import states


class CrossCellTableTest(testtools.TestCase):

    def test_registered_but_not_by_type(self):
        self.assertIn(cross_cell, moves.KINDS)
        self.assertIs(cold, moves.kind_of(states.RESIZE))
        self.assertIs(cross_cell, moves.kind_of_migration(
            {'migration_type': states.RESIZE, 'cross_cell_move': True}))
        self.assertIs(cold, moves.kind_of_migration(
            {'migration_type': states.MIGRATION, 'cross_cell_move': False}))

    def test_every_compute_step_has_a_client(self):
        for step in cross_cell.STEPS:
            if step.host != moves.CONDUCTOR:
                self.assertTrue(callable(getattr(
                    cross_cell_rpcapi.CrossCellComputeAPI, step.name)),
                    step.name)

    def test_request_phases_are_the_cold_ones(self):
        """The API starts a confirm or revert with db settle_start (the
        cold table's 'request' guards): the same statuses here."""
        for mine, theirs in (
                ('confirm_snapshot_based_resize_at_source',
                 'confirm_resize'),
                ('revert_snapshot_based_resize_at_dest', 'revert_resize')):
            self.assertEqual(moves.guard_of(cold, theirs, 'request'),
                             moves.guard_of(cross_cell, mine, 'request'))

    def test_undo_of_each_step_before_the_flip(self):
        """move_failed accepts each step's statuses, and clears the
        task_states the steps set (the cold types' undo)."""
        undo = {name: moves.fail_guard(cross_cell, name)['expected_status']
                for name in cross_cell.BEFORE_FLIP}
        self.assertEqual([states.M_PRE_MIGRATING],
                         undo['conductor.migrate_server'])
        self.assertEqual([states.M_PRE_MIGRATING, states.M_MIGRATING],
                         undo['prep_snapshot_based_resize_at_source'])
        self.assertEqual([states.M_POST_MIGRATING],
                         undo['finish_snapshot_based_resize_at_dest'])
        tasks = {t for s in cross_cell.STEPS for g in s.guards()
                 for t in g.task_states()}
        self.assertLessEqual(tasks,
                             set(moves.MOVE_TASK_STATES[states.RESIZE]))
        self.assertLessEqual(
            {st for s in cross_cell.STEPS for g in s.guards()
             for st in g.status if st not in
             states.MIGRATION_TERMINAL_STATUSES}, set(moves.UNSETTLED))

    def test_the_sweep_finds_each_step_before_the_flip(self):
        cases = [
            ((states.M_PRE_MIGRATING, states.RESIZE_PREP),
             'conductor.migrate_server'),
            ((states.M_MIGRATING, states.RESIZE_MIGRATING),
             'prep_snapshot_based_resize_at_source'),
            # The snapshot is made: the next step (not started).
            ((states.M_POST_MIGRATING, states.RESIZE_MIGRATED),
             'finish_snapshot_based_resize_at_dest'),
            ((states.M_POST_MIGRATING, states.RESIZE_FINISH),
             'finish_snapshot_based_resize_at_dest'),
            ((states.M_FINISHED, None), None),
            ((states.M_CONFIRMING, None), None),
            ((states.M_REVERTING, states.RESIZE_REVERTING), None),
        ]
        for (status, task_state), expected in cases:
            row = task._stalled_step({'status': status}, task_state)
            self.assertEqual(expected, row and row.name, (status, task_state))
            if row is not None:
                self.assertEqual(moves.ROLL_BACK, row.sweep)

    def test_allocation_changes_name_a_cell_and_an_op(self):
        names = {s.name for s in cross_cell.STEPS}
        for name, (where, op) in cross_cell.ALLOCATIONS.items():
            self.assertIn(name, names)
            self.assertIn(where, ('source', 'target'))
            self.assertIn(op, ('claim', 'drop_source', 'drop_dest',
                               'return_source'))
        for step in cross_cell.STEPS:
            # Written by the conductor in the right cell, not by
            # guard_of's single-database op.
            self.assertIsNone(step.allocations, step.name)

    def test_the_guards_chain(self):
        g = moves.guard_of
        self.assertEqual(
            {'status': [states.M_PRE_MIGRATING, states.M_MIGRATING],
             'task_state': [states.RESIZE_PREP, states.RESIZE_MIGRATING]},
            g(cross_cell, 'prep_snapshot_based_resize_at_source', 'start'))
        self.assertEqual(
            {'status': [states.M_POST_MIGRATING, states.M_FINISHED],
             'task_state': [states.RESIZE_FINISH, None]},
            g(cross_cell, 'finish_snapshot_based_resize_at_dest'))
        self.assertEqual(
            {'status': [states.M_REVERTING, states.M_REVERTED],
             'task_state': [states.RESIZE_REVERTING, None]},
            g(cross_cell, 'finish_revert_snapshot_based_resize_at_source'))


class SweepStalledTest(testtools.TestCase):
    """conductor/tasks/cross_cell.sweep_stalled: the copy the server is
    mapped to, before the flip, its step's compute asked first."""

    def setUp(self):
        super().setUp()
        from unittest import mock
        self.mock = mock
        self.db = self._patch('nova_moves.conductor.tasks.cross_cell.db_api')
        self.cells = self._patch(
            'nova_moves.conductor.tasks.cross_cell.cell_clients')
        self.cells.available.return_value = True
        self.maps = self._patch(
            'nova_moves.conductor.tasks.cross_cell.mappings')
        self.undo = self._patch(
            'nova_moves.conductor.tasks.cross_cell.undo_before_flip')
        self.clients = self._patch(
            'nova_moves.conductor.tasks.cross_cell._clients')
        self.asked = self.clients.return_value.compute.return_value
        self.asked.move_step_status.return_value = False
        self.db.move_claim.return_value = 'stamp'
        self.maps.instance_mapping_get.return_value = {'cell_uuid': 'c1'}
        self.cells.own_cell.return_value.uuid = 'c1'

    def _patch(self, name):
        patcher = self.mock.patch(name)
        self.addCleanup(patcher.stop)
        return patcher.start()

    def _sweep(self, status, task_state, hidden=False):
        self.db.instance_get.return_value = {'task_state': task_state,
                                             'hidden': hidden}
        return task.sweep_stalled(None, {
            'uuid': 'm', 'instance_uuid': 'i', 'status': status,
            'updated_at': None, 'source_compute': 's',
            'dest_compute': 'd', 'cross_cell_move': True})

    def test_rolls_back_a_step_before_the_flip(self):
        self.assertTrue(self._sweep(states.M_POST_MIGRATING,
                                    states.RESIZE_FINISH))
        args, kwargs = self.undo.call_args
        self.assertEqual('finish_snapshot_based_resize_at_dest', args[6])
        self.assertEqual(('stamp', True), (kwargs['claimed'],
                                           kwargs['guest_off']))
        self.asked.move_step_status.assert_called_once_with(None, 'd', 'm')

    def test_waits_for_a_step_still_running(self):
        self.asked.move_step_status.return_value = True
        self.assertFalse(self._sweep(states.M_MIGRATING,
                                     states.RESIZE_MIGRATING))
        self.undo.assert_not_called()

    def test_leaves_the_hidden_copy(self):
        self.assertFalse(self._sweep(states.M_MIGRATING,
                                     states.RESIZE_MIGRATING, hidden=True))
        self.assertFalse(self._sweep(states.M_CONFIRMING, None,
                                     hidden=True))
        self.undo.assert_not_called()
        self.db.move_claim.assert_not_called()

    def test_runs_a_stalled_confirm_or_revert_again(self):
        settle = self._patch(
            'nova_moves.conductor.tasks.cross_cell.cross_cell_settle')
        settle.CONFIRM = 'confirm_snapshot_based_resize_at_source'
        self.maps.host_mapping_get.return_value = {'cell_uuid': 'c0'}
        self.assertTrue(self._sweep(states.M_CONFIRMING, None))
        self.assertEqual('m', settle.confirm.call_args[0][3])
        # The confirm's host, the source, was asked first.
        self.asked.move_step_status.assert_called_once_with(None, 's', 'm')
        self.assertTrue(self._sweep(states.M_REVERTING,
                                    states.RESIZE_REVERTING))
        self.assertEqual('m', settle.revert.call_args[0][3])
        self.undo.assert_not_called()

    def test_a_confirm_still_running_is_left(self):
        settle = self._patch(
            'nova_moves.conductor.tasks.cross_cell.cross_cell_settle')
        self.maps.host_mapping_get.return_value = {'cell_uuid': 'c0'}
        self.asked.move_step_status.return_value = True
        self.assertFalse(self._sweep(states.M_CONFIRMING, None))
        settle.confirm.assert_not_called()
        self.db.move_claim.return_value = None
        self.asked.move_step_status.reset_mock()
        self.assertFalse(self._sweep(states.M_REVERTING,
                                     states.RESIZE_REVERTING))
        self.asked.move_step_status.assert_not_called()
        settle.revert.assert_not_called()

    def test_finishes_the_source_side_of_a_flipped_move(self):
        # The finish step's conductor flipped the mapping to the
        # destination's cell and failed before hiding the source copy.
        self.maps.instance_mapping_get.return_value = {'cell_uuid': 'c2'}
        self.maps.host_mapping_get.return_value = {'cell_uuid': 'c2'}
        self.assertTrue(self._sweep(states.M_POST_MIGRATING,
                                    states.RESIZE_FINISH))
        self.undo.assert_not_called()
        args, kwargs = self.db.move_advance.call_args
        self.assertEqual(('m',), args)
        self.assertEqual([states.M_POST_MIGRATING, states.M_FINISHED],
                         kwargs['status'])
        self.assertEqual({'hidden': True, 'vm_state': states.RESIZED},
                         kwargs['instance_values'])
        self.assertEqual('stamp', kwargs['claimed'])

    def test_leaves_a_flipped_move_it_cannot_finish(self):
        self.maps.instance_mapping_get.return_value = {'cell_uuid': 'c2'}
        # Mapped to a cell that is not the destination's.
        self.maps.host_mapping_get.return_value = {'cell_uuid': 'c3'}
        self.assertFalse(self._sweep(states.M_POST_MIGRATING,
                                     states.RESIZE_FINISH))
        # At another step than the finish.
        self.maps.host_mapping_get.return_value = {'cell_uuid': 'c2'}
        self.assertFalse(self._sweep(states.M_MIGRATING,
                                     states.RESIZE_MIGRATING))
        # Another conductor claimed it.
        self.db.move_claim.return_value = None
        self.assertFalse(self._sweep(states.M_POST_MIGRATING,
                                     states.RESIZE_FINISH))
        self.db.move_advance.assert_not_called()
        self.undo.assert_not_called()

    def test_a_lost_claim_does_nothing(self):
        self.db.move_claim.return_value = None
        self.assertFalse(self._sweep(states.M_PRE_MIGRATING,
                                     states.RESIZE_PREP))
        self.undo.assert_not_called()
