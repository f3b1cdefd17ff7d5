"""db/cross_cell.py on two SQLite cell databases (cells.target): the
server's rows copied hidden into another cell and purged from it, the
migration copied and followed, and the hidden copy left out of lists."""
import os
import shutil
import tempfile

import testtools

from nova_moves import cells
from nova_moves.db import api as db_api
from nova_moves.db import cross_cell as cc_db
from tests.unit import fixtures as nm_fixtures

FLAVOR = {'id': 1, 'flavorid': '1', 'name': 'small', 'vcpus': 1,
          'memory_mb': 512, 'root_gb': 1}


class CrossCellDbTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.Database())
        path = tempfile.mkdtemp(prefix='nm-unit-cell2-')
        self.addCleanup(shutil.rmtree, path, True)
        other = os.path.join(path, 'cell2.sqlite')
        shutil.copyfile(nm_fixtures._migrated_template(), other)
        self.cell2 = cells.Cell(uuid='c2', name='cell2',
                                database_connection='sqlite:///' + other,
                                transport_url='rabbit://cell2/')
        self.instance = db_api.instance_create({
            'user_id': 'u', 'project_id': 'p', 'vm_state': 'active',
            'task_state': 'resize_prep', 'host': 'h1', 'node': 'h1',
            'flavor': FLAVOR})
        self.uuid = self.instance['uuid']
        db_api.action_start(self.uuid, 'resize', 'req-1', 'u', 'p')
        db_api.action_event_start(self.uuid, 'req-1', 'conductor_x')

    def test_copy_hidden_then_purge(self):
        rows = cc_db.server_rows(self.uuid)
        with cells.target(self.cell2):
            cc_db.server_copy(rows, hidden=True)
            cc_db.server_copy(rows, hidden=True)  # a retry replaces it
            copy = db_api.instance_get(self.uuid)
            self.assertEqual((True, 'resize_prep', FLAVOR),
                             (copy['hidden'], copy['task_state'],
                              copy['flavor']))
            self.assertEqual([], db_api.instance_get_all())
            [action] = db_api.actions_get(self.uuid)
            self.assertEqual(['conductor_x'], [
                e['event'] for e in db_api.action_events_get(action['id'])])
            cc_db.server_set(self.uuid, {'hidden': False,
                                         'flavor': dict(FLAVOR, vcpus=2)})
            self.assertEqual([self.uuid], [
                i['uuid'] for i in db_api.instance_get_all()])
            self.assertEqual(2, db_api.instance_get(self.uuid)['flavor'][
                'vcpus'])
            cc_db.server_purge(self.uuid)
            self.assertRaises(Exception, db_api.instance_get, self.uuid)
            self.assertEqual([], db_api.actions_get(self.uuid))
        # The source cell's rows are untouched.
        self.assertFalse(db_api.instance_get(self.uuid)['hidden'])
        self.assertEqual(1, len(db_api.actions_get(self.uuid)))

    def test_migration_copy_follows(self):
        migration = {'uuid': 'm-1', 'instance_uuid': self.uuid,
                     'migration_type': 'resize', 'status': 'pre-migrating',
                     'source_compute': 'h1', 'dest_compute': 'h9',
                     'created_at': '2026-11-29T17:00:00'}
        with cells.target(self.cell2):
            cc_db.migration_copy(migration)
            cc_db.migration_copy(migration)  # replaced, not doubled
            cc_db.migration_set('m-1', {'status': 'finished'})
            [row] = db_api.migration_get_all(instance_uuid=self.uuid)
            self.assertEqual(('finished', True, 'h9'),
                             (row['status'], row['cross_cell_move'],
                              row['dest_compute']))
        self.assertEqual([], db_api.migration_get_all(
            instance_uuid=self.uuid))
