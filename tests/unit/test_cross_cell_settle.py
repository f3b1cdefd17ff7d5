"""Confirm and revert of a cross-cell resize (conductor/tasks/
cross_cell_settle.py) with the databases and the computes mocked: each
half written in its own cell, in the order the doc says; a failure
before the source cell changed gives the request back."""
from unittest import mock

import testtools

from nova_moves.conductor.tasks import cross_cell_settle as settle
from nova_moves import states

MIGRATION = {'uuid': 'm', 'instance_uuid': 'i', 'source_compute': 's',
             'dest_compute': 'd', 'id': 7}
PATH = 'nova_moves.conductor.tasks.cross_cell_settle.'


class SettleTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.calls = []
        for name in ('db_api', 'cc_db', 'mappings', 'cell_clients'):
            patcher = mock.patch(PATH + name)
            self.addCleanup(patcher.stop)
            setattr(self, name, patcher.start())
        self.target = mock.patch(PATH + 'cells.target').start()
        self.addCleanup(mock.patch.stopall)
        self.db = mock.Mock()
        self.db.migration_get.return_value = dict(MIGRATION)
        self.db.instance_get.return_value = {
            'power_state': states.POWER_RUNNING, 'old_flavor': {'id': 1},
            'flavor': {'id': 2}}
        self.clients = mock.Mock()
        self.compute = self.clients.compute.return_value
        self.compute.finish_revert_snapshot_based_resize_at_source \
            .return_value = states.POWER_RUNNING

    def test_confirm(self):
        settle.confirm(None, self.db, self.clients, 'm')
        self.compute.confirm_snapshot_based_resize_at_source \
            .assert_called_once_with(None, 's', 'i', 'm')
        self.db_api.allocations_delete.assert_called_once_with('m')
        self.cc_db.server_purge.assert_called_once_with('i')
        last = self.db.move_advance.call_args_list[-1]
        self.assertEqual(['confirming', 'confirmed'], last.kwargs['status'])
        self.assertEqual('active', last.kwargs['instance_values']['vm_state'])
        self.db_api.settle_abandon.assert_not_called()

    def test_confirm_failing_at_the_source_gives_the_request_back(self):
        self.compute.confirm_snapshot_based_resize_at_source.side_effect = \
            RuntimeError('source down')
        settle.confirm(None, self.db, self.clients, 'm')
        self.db_api.settle_abandon.assert_called_once_with(
            'confirm_resize', MIGRATION)
        self.db.instance_fault_create.assert_called_once()
        self.db_api.allocations_delete.assert_not_called()
        self.cc_db.server_purge.assert_not_called()

    def test_revert(self):
        settle.revert(None, self.db, self.clients, 'm')
        ops = [c.kwargs.get('allocations') for c in
               self.db.move_advance.call_args_list]
        self.assertEqual([None, {'op': 'drop_dest'},
                          {'op': 'return_source'}], ops)
        end = self.db.move_advance.call_args_list[-1].kwargs
        self.assertEqual(['reverting', 'reverted'], end['status'])
        self.assertEqual(({'id': 1}, False),
                         (end['instance_values']['flavor'],
                          end['instance_values']['hidden']))
        self.cc_db.mapping_set_cell.assert_called_once()
        self.cc_db.server_purge.assert_called_once_with('i')

    def test_revert_failing_at_the_destination_gives_the_request_back(self):
        self.compute.revert_snapshot_based_resize_at_dest.side_effect = \
            RuntimeError('dest down')
        settle.revert(None, self.db, self.clients, 'm')
        self.db_api.settle_abandon.assert_called_once_with(
            'revert_resize', MIGRATION)
        self.assertEqual(1, self.db.move_advance.call_count)  # its check
        self.cc_db.mapping_set_cell.assert_not_called()

    def test_revert_failing_at_the_source_puts_the_server_back_in_error(self):
        self.compute.finish_revert_snapshot_based_resize_at_source \
            .side_effect = RuntimeError('source down')
        settle.revert(None, self.db, self.clients, 'm')
        kwargs = self.db.move_failed.call_args.kwargs
        self.assertEqual((['reverting'], 'error', False),
                         (kwargs['expected_status'],
                          kwargs['instance_values']['vm_state'],
                          kwargs['instance_values']['hidden']))
        self.cc_db.mapping_set_cell.assert_called_once()
        self.cc_db.server_purge.assert_called_once_with('i')


class HandOverTest(testtools.TestCase):
    """conductor/tasks/migrate.py hands a move its cell cannot place to
    the cross-cell task; whose undo runs depends on whether a cell was
    chosen."""

    def _task(self, target_cell):
        from nova_moves.conductor.tasks import migrate
        task = migrate.MigrationTask(
            mock.Mock(), 'i', None, None, False, None, None, mock.Mock(),
            mock.Mock(), mock.Mock(), cross_cell=True,
            cell_clients=mock.Mock())
        task.migration = {'uuid': 'm'}
        patcher = mock.patch.object(
            migrate.cross_cell_task, 'CrossCellMigrationTask')
        self.addCleanup(patcher.stop)
        cross = patcher.start().return_value
        cross.target_cell = target_cell
        cross.run.side_effect = RuntimeError('boom')
        self.assertRaises(RuntimeError, task._cross_cell, {}, {})
        return task

    def test_no_cell_chosen_is_the_same_cell_undo(self):
        task = self._task(None)
        task.rollback(RuntimeError('boom'))
        task.db.move_failed.assert_called_once()

    def test_a_chosen_cell_was_undone_by_the_cross_cell_task(self):
        task = self._task(mock.Mock())
        task.rollback(RuntimeError('boom'))
        task.db.move_failed.assert_not_called()
