"""A server group member's cross-cell resize (conductor/tasks/
cross_cell_group.py, CrossCellMigrationTask._schedule), the databases
and RPC mocked: the member joins the group in each cell asked before its
scheduler runs, and leaves a cell that found no host; a hard-affinity
member with other members asks no other cell."""
from unittest import mock

import testtools

from nova_moves import cells
from nova_moves.conductor.tasks import cross_cell as cc_task
from nova_moves.conductor.tasks import cross_cell_group
from nova_moves import exception

CELL_A = cells.Cell('a', 'cell-a', 'sqlite://a', 'fake:///a')
CELL_B = cells.Cell('b', 'cell-b', 'sqlite://b', 'fake:///b')


class ScheduleTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.addCleanup(mock.patch.stopall)
        mock.patch.object(cc_task.cell_clients, 'own_cell',
                          return_value=None).start()
        mock.patch.object(cc_task.cell_clients, 'other_cells',
                          return_value=[CELL_A, CELL_B]).start()
        mock.patch.object(cc_task, 'cc_db').start()
        self.db_api = mock.patch.object(cross_cell_group, 'db_api').start()
        self.seen = []
        self.db_api.server_group_join.side_effect = \
            lambda group, uuid: self.seen.append(('join', cells.current()))
        self.db_api.server_group_leave.side_effect = \
            lambda uuid: self.seen.append(('leave', cells.current()))
        self.clients = mock.Mock()

        def select(ctxt, spec, uuids, return_alternates):
            self.seen.append(('select', cells.current()))
            if cells.current() is CELL_A:
                raise exception.NoValidHost(reason='full')
            return [[{'host': 'hb', 'nodename': 'hb'}]]
        self.clients.scheduler.return_value.select_destinations \
            .side_effect = select
        self.db = mock.Mock()
        self.db.move_advance.return_value = {'migration': {'uuid': 'm'}}

    def task(self):
        return cc_task.CrossCellMigrationTask(
            None, 'i', {'uuid': 'm'}, {}, {}, self.db, self.clients)

    def test_joins_each_cell_asked_and_leaves_one_without_host(self):
        self.db_api.server_group_of_instance.return_value = {
            'uuid': 'g', 'policy': 'anti-affinity', 'members': ['i', 'o']}
        task = self.task()
        task._schedule()
        self.assertEqual(CELL_B, task.target_cell)
        self.assertEqual([('join', CELL_A), ('select', CELL_A),
                          ('leave', CELL_A), ('join', CELL_B),
                          ('select', CELL_B)], self.seen)

    def test_no_group_writes_nothing(self):
        self.db_api.server_group_of_instance.return_value = None
        self.task()._schedule()
        self.assertEqual([('select', CELL_A), ('select', CELL_B)], self.seen)

    def test_hard_affinity_with_others_asks_no_cell(self):
        self.db_api.server_group_of_instance.return_value = {
            'uuid': 'g', 'policy': 'affinity', 'members': ['i', 'o']}
        task = self.task()
        self.assertRaises(exception.NoValidHost, task._schedule)
        self.assertIsNone(task.target_cell)
        self.assertEqual([], self.seen)
