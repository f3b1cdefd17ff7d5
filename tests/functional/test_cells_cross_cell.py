"""Cross-cell resize and cold migrate (doc/cells.md "Cross-cell resize")
on real processes over real RabbitMQ (harness/cell_stack.py): two cells,
each its own database (SQLite; cell1 on PostgreSQL in the second class),
broker vhost, conductor and scheduler.
cell1 has one host, so a move of a server there has no host in its
cell; cell2 has a big host and a small one whose hypervisor fails the
spawn from the snapshot.

The policy file allows ``compute:servers:resize:cross_cell`` for the
tests that move across; the one that checks the default empties it (the
API reads the file again at the next request). At each end the rows,
the migrations and the allocations are checked in both cells'
databases, and the instance mapping in the API database."""
import json
import os
import shutil
import signal
import tempfile
import time

import sqlalchemy as sa
import testtools

from nova_moves.db import api_models
from nova_moves.db import models
from nova_moves.harness import cell_stack
from tests.functional import cells_base
from tests.functional import rpc_injector

FAULTS = models.InstanceFault.__table__
MAPPINGS = api_models.InstanceMapping.__table__
CELLS = api_models.CellMapping.__table__
RULE = 'compute:servers:resize:cross_cell'
STUCK = 8  # stuck_move_timeout: the sweep's
SLOW = 6  # seconds cell2-compute3 spawns from a snapshot


class CrossCellTest(cells_base.CellReads, testtools.TestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.policy_dir = tempfile.mkdtemp(prefix='nm-crosscell-policy-')
        cls.policy_file = os.path.join(cls.policy_dir, 'policy.json')
        cls.set_policy(None)
        # cell1's host removes a moved-away copy slowly (a confirm).
        computes = [[{'name': 'cell1-compute1',
                      'compute': {'vcpus': 4, 'memory_mb': 8192,
                                  'operation_seconds': {
                                      'confirm_snapshot_based_resize_at_'
                                      'source': SLOW}}}],
                    [{'name': 'cell2-compute1',
                      'compute': {'vcpus': 8, 'memory_mb': 16384}},
                     # Fits only a small server, and fails its spawn.
                     {'name': 'cell2-compute2',
                      'compute': {'vcpus': 1, 'memory_mb': 1024,
                                  'fail_operations':
                                  'finish_snapshot_based_resize_at_dest'}},
                     # Fits only a small server, and spawns it slowly.
                     {'name': 'cell2-compute3',
                      'compute': {'vcpus': 1, 'memory_mb': 1024,
                                  'operation_seconds': {
                                      'finish_snapshot_based_resize_at_dest':
                                      SLOW}}}]]
        cls.stack = cell_stack.CellsStack(
            cells=2, computes=computes, database_url=cls.cell1_database(),
            keep_workdir=bool(os.environ.get('NOVA_MOVES_KEEP_LOGS')),
            extra_conf={'DEFAULT': {'stuck_move_timeout': STUCK},
                        'quota': {'instances': -1, 'cores': -1, 'ram': -1},
                        'oslo_policy': {'policy_file': cls.policy_file}})
        cells_base.start(cls.stack)
        cls.admin = cls.stack.client()
        cls.small = cls.admin.create_flavor('small', 1, 512, 1)
        cls.medium = cls.admin.create_flavor('medium', 2, 1024, 1)
        cls.engines = {cell: sa.create_engine(url) for cell, url in
                       cls.stack.cell_database_urls.items()}
        cls.api_engine = sa.create_engine(cls.stack.api_database_url)

    @classmethod
    def cell1_database(cls):
        """cell1's database URL (None: a SQLite file)."""
        return None

    @classmethod
    def set_policy(cls, rule):
        with open(cls.policy_file, 'w') as f:
            json.dump({RULE: rule} if rule else {}, f)

    @classmethod
    def stop_cells(cls):
        try:
            cls.api_engine.dispose()
            super().stop_cells()
        finally:
            shutil.rmtree(cls.policy_dir, ignore_errors=True)

    def setUp(self):
        super().setUp()
        self.set_policy('rule:context_is_admin')

    # -- the databases ----------------------------------------------
    def mapped_cell(self, uuid):
        with self.api_engine.connect() as conn:
            return conn.execute(sa.select(CELLS.c.name).join(
                MAPPINGS, MAPPINGS.c.cell_id == CELLS.c.id).where(
                    MAPPINGS.c.instance_uuid == uuid)).scalar()

    def held(self, flavor):
        return {'VCPU': flavor['vcpus'], 'MEMORY_MB': flavor['ram'],
                'DISK_GB': flavor['disk']}

    def assert_only_in(self, cell, uuid, flavor, host):
        """The server is ``cell``'s alone: its row there (shown, on
        ``host``), its allocation its flavor; nothing of it in the other
        cell, no migration's allocation anywhere."""
        other = 'cell2' if cell == 'cell1' else 'cell1'
        self.assertEqual(cell, self.mapped_cell(uuid))
        row = self.row(cell, uuid)
        self.assertEqual((host, False, None, 0),
                         (row['host'], row['hidden'], row['task_state'],
                          row['deleted']))
        self.assertIsNone(self.row(other, uuid))
        self.assertEqual([], self.migrations(other, uuid))
        self.assertEqual(self.held(flavor), self.allocations(cell, uuid))
        self.assertEqual({}, self.allocations(other, uuid))
        for m in self.migrations(cell, uuid):
            for c in self.engines:
                self.assertEqual({}, self.allocations(c, m['uuid']))

    # -- API --------------------------------------------------------
    def act(self, uuid, body, statuses, version=None):
        response = self.admin.action(uuid, body, version=version)
        self.assertIn(response.status_code, (202, 204), response.text)
        return self.admin.wait_for_status(uuid, statuses, timeout=90)

    def assert_verify_resize_in_cell2(self, uuid, flavor, host):
        """The move's end: mapped to cell2, its copy there shown on the
        new host, cell1's hidden; the claim in cell2, the source half
        parked on the migration in cell1; the migration in both."""
        server = self.admin.server(uuid, version='2.47')
        self.assertEqual(('VERIFY_RESIZE', host, flavor['vcpus']),
                         (server['status'], server['OS-EXT-SRV-ATTR:host'],
                          server['flavor']['vcpus']))
        self.assertEqual('cell2', self.mapped_cell(uuid))
        target, source = self.row('cell2', uuid), self.row('cell1', uuid)
        self.assertEqual((host, False, 'resized'),
                         (target['host'], target['hidden'],
                          target['vm_state']))
        self.assertEqual(('cell1-compute1', True), (source['host'],
                                                    source['hidden']))
        [m1], [m2] = self.migrations('cell1', uuid), \
            self.migrations('cell2', uuid)
        self.assertEqual(m1['uuid'], m2['uuid'])
        self.assertEqual(('finished', 'finished', True, True),
                         (m1['status'], m2['status'], m1['cross_cell_move'],
                          m2['cross_cell_move']))
        self.assertEqual(self.held(flavor), self.allocations('cell2', uuid))
        self.assertEqual(self.held(self.small),
                         self.allocations('cell1', m1['uuid']))
        self.assertEqual({}, self.allocations('cell1', uuid))
        self.assertEqual({}, self.allocations('cell2', m1['uuid']))
        # The lists merge every cell, and the hidden copy is left out:
        # the server is listed once.
        listed = [s['id'] for s in self.admin.get(
            '/servers', expect=200).json()['servers']]
        self.assertEqual(1, listed.count(uuid))
        return m1['uuid']

    # -- tests ------------------------------------------------------
    def test_default_policy_keeps_the_move_in_its_cell(self):
        self.set_policy(None)
        uuid = self.boot('refused')
        response = self.admin.action(uuid, {'resize': {
            'flavorRef': self.medium['id']}})
        self.assertEqual(202, response.status_code, response.text)
        self.admin.wait_for(
            lambda: [m['status'] for m in self.migrations('cell1', uuid)]
            == ['error'], timeout=60, what='the move refused')
        server = self.admin.wait_for_status(uuid, 'ACTIVE')
        self.assertEqual('cell1-compute1', server['OS-EXT-SRV-ATTR:host'])
        self.assertFalse(self.migrations('cell1', uuid)[0]['cross_cell_move'])
        self.assert_only_in('cell1', uuid, self.small, 'cell1-compute1')
        # A host of another cell is not found (400), as before.
        response = self.admin.action(uuid, {'migrate': {
            'host': 'cell2-compute1'}}, version='2.56')
        self.assertEqual(400, response.status_code, response.text)
        # Live migration never leaves the cell.
        response = self.admin.action(uuid, {'os-migrateLive': {
            'host': 'cell2-compute1', 'block_migration': 'auto'}},
            version='2.30')
        self.assertEqual(400, response.status_code, response.text)

    def test_resize_to_another_cell_and_confirm(self):
        uuid = self.boot('resize-confirm')
        # Seed 000 (resize-api-cast-always), cross-cell: the API casts
        # migrate_server to the server's cell's conductor, as for a
        # same-cell move (test_resize), and nothing calls it.
        tap = rpc_injector.RpcTap(
            self.stack.cell_transport_url('cell1')).start()
        self.addCleanup(tap.stop)
        resized = self.act(uuid, {'resize': {
            'flavorRef': self.medium['id']}}, ('VERIFY_RESIZE', 'ERROR'))
        self.assertEqual('VERIFY_RESIZE', resized['status'], resized)
        sent = tap.find('migrate_server', instance_uuid=uuid)
        self.assertEqual([(False, True)], [
            (c.is_call, c.args.get('cross_cell')) for c in sent])
        migration = self.assert_verify_resize_in_cell2(
            uuid, self.medium, 'cell2-compute1')
        # The move's action, read in cell2: the conductor's event and
        # each compute step's, all Success.
        [action] = [a for a in self.admin.actions(uuid)
                    if a['action'] == 'resize']
        events = {e['event']: e['result'] for e in self.admin.action_detail(
            uuid, action['request_id'])['events']}
        self.assertEqual(
            {'conductor_migrate_server': 'Success',
             'compute_prep_snapshot_based_resize_at_dest': 'Success',
             'compute_prep_snapshot_based_resize_at_source': 'Success',
             'compute_finish_snapshot_based_resize_at_dest': 'Success'},
            events)
        confirmed = self.act(uuid, {'confirmResize': None}, ('ACTIVE',
                                                             'ERROR'))
        self.assertEqual(('ACTIVE', 'cell2-compute1', 2),
                         (confirmed['status'],
                          confirmed['OS-EXT-SRV-ATTR:host'],
                          confirmed['flavor']['vcpus']))
        self.assertEqual(['confirmed'], [
            m['status'] for m in self.migrations('cell2', uuid)])
        self.assert_only_in('cell2', uuid, self.medium, 'cell2-compute1')
        self.assertEqual({}, self.allocations('cell1', migration))

    def test_migrate_to_another_cell_and_revert(self):
        uuid = self.boot('migrate-revert')
        moved = self.act(uuid, {'migrate': {'host': 'cell2-compute1'}},
                         ('VERIFY_RESIZE', 'ERROR'), version='2.56')
        self.assertEqual('VERIFY_RESIZE', moved['status'], moved)
        self.assert_verify_resize_in_cell2(uuid, self.small,
                                           'cell2-compute1')
        reverted = self.act(uuid, {'revertResize': None}, ('ACTIVE',
                                                           'ERROR'))
        self.assertEqual(('ACTIVE', 'cell1-compute1'),
                         (reverted['status'],
                          reverted['OS-EXT-SRV-ATTR:host']))
        self.assertEqual(['reverted'], [
            m['status'] for m in self.migrations('cell1', uuid)])
        self.assert_only_in('cell1', uuid, self.small, 'cell1-compute1')
        # The guest runs again: the server can be stopped and started.
        self.assertEqual('SHUTOFF', self.act(uuid, {'os-stop': None},
                                             'SHUTOFF')['status'])

    def test_failed_spawn_is_undone_in_both_cells(self):
        uuid = self.boot('spawn-fails')
        response = self.admin.action(uuid, {'migrate': {
            'host': 'cell2-compute2'}}, version='2.56')
        self.assertEqual(202, response.status_code, response.text)
        self.admin.wait_for(
            lambda: [m['status'] for m in self.migrations('cell1', uuid)]
            == ['error'], timeout=90, what='the move undone')
        server = self.admin.wait_for_status(uuid, ('ACTIVE', 'ERROR'))
        self.assertEqual(('ACTIVE', 'cell1-compute1'),
                         (server['status'], server['OS-EXT-SRV-ATTR:host']))
        with self.engines['cell1'].connect() as conn:
            faults = [r.message for r in conn.execute(sa.select(
                FAULTS.c.message).where(FAULTS.c.instance_uuid == uuid))]
        self.assertTrue(any('finish_snapshot_based_resize_at_dest' in f
                            for f in faults), faults)
        self.assert_only_in('cell1', uuid, self.small, 'cell1-compute1')
        # The source guest runs again.
        self.assertEqual('SHUTOFF', self.act(uuid, {'os-stop': None},
                                             'SHUTOFF')['status'])

    def test_conductor_killed_mid_flow_is_rolled_back_by_the_sweep(self):
        """The source cell's (only) conductor dies while the destination
        spawns: the restarted one's sweep asks the destination, then
        undoes the move in both cells (the table's ROLL_BACK)."""
        uuid = self.boot('conductor-dies')
        response = self.admin.action(uuid, {'migrate': {
            'host': 'cell2-compute3'}}, version='2.56')
        self.assertEqual(202, response.status_code, response.text)
        self.admin.wait_for(
            lambda: self.row('cell1', uuid)['task_state'] ==
            'resize_finish', timeout=60, interval=0.05,
            what='the destination spawning')
        conductor = 'cell1-conductor1'
        self.assertEqual(-signal.SIGKILL, self.stack.kill(conductor))
        time.sleep(1)
        self.stack.restart(conductor)
        self.admin.wait_for(
            lambda: [m['status'] for m in self.migrations('cell1', uuid)]
            == ['error'], timeout=4 * STUCK + 60, what='the move undone')
        server = self.admin.wait_for_status(uuid, ('ACTIVE', 'ERROR'))
        self.assertEqual(('ACTIVE', 'cell1-compute1'),
                         (server['status'], server['OS-EXT-SRV-ATTR:host']))
        self.assert_only_in('cell1', uuid, self.small, 'cell1-compute1')
        self.assertEqual('SHUTOFF', self.act(uuid, {'os-stop': None},
                                             'SHUTOFF')['status'])

    def test_conductor_killed_in_a_confirm_runs_it_again(self):
        """The target cell's (only) conductor dies while the source
        removes its copy: the restarted one's sweep asks the source
        (waits while it still runs), then runs the confirm again from
        its start (the table's REDRIVE): confirmed, the server cell2's
        alone."""
        uuid = self.boot('confirm-dies')
        resized = self.act(uuid, {'resize': {
            'flavorRef': self.medium['id']}}, ('VERIFY_RESIZE', 'ERROR'))
        self.assertEqual('VERIFY_RESIZE', resized['status'], resized)
        response = self.admin.action(uuid, {'confirmResize': None})
        self.assertEqual(204, response.status_code, response.text)
        self.admin.wait_for(
            lambda: [m['status'] for m in self.migrations('cell2', uuid)]
            == ['confirming'], timeout=60, interval=0.05,
            what='the confirm started')
        conductor = 'cell2-conductor1'
        self.assertEqual(-signal.SIGKILL, self.stack.kill(conductor))
        time.sleep(1)
        self.stack.restart(conductor)
        self.admin.wait_for(
            lambda: [m['status'] for m in self.migrations('cell2', uuid)]
            == ['confirmed'], timeout=4 * STUCK + 60,
            what='the confirm run again')
        server = self.admin.wait_for_status(uuid, ('ACTIVE', 'ERROR'))
        self.assertEqual(('ACTIVE', 'cell2-compute1'),
                         (server['status'], server['OS-EXT-SRV-ATTR:host']))
        self.assert_only_in('cell2', uuid, self.medium, 'cell2-compute1')

    def test_delete_in_verify_resize_confirms_first(self):
        """Nova's _confirm_resize_on_deleting: the source cell's guest,
        rows and allocation go before the server is deleted."""
        uuid = self.boot('deleted-resized')
        resized = self.act(uuid, {'resize': {
            'flavorRef': self.medium['id']}}, ('VERIFY_RESIZE', 'ERROR'))
        self.assertEqual('VERIFY_RESIZE', resized['status'], resized)
        [migration] = self.migrations('cell1', uuid)
        self.admin.delete('/servers/%s' % uuid, expect=204)
        self.admin.wait_for(
            lambda: self.admin.get('/servers/%s' % uuid).status_code == 404,
            what='%s deleted' % uuid)
        self.assertIsNone(self.row('cell1', uuid))
        self.assertEqual([], self.migrations('cell1', uuid))
        self.assertNotEqual(0, self.row('cell2', uuid)['deleted'])
        self.assertEqual(['confirmed'], [
            m['status'] for m in self.migrations('cell2', uuid)])
        for cell in self.engines:
            for consumer in (uuid, migration['uuid']):
                self.assertEqual({}, self.allocations(cell, consumer))


class CrossCellPostgresTest(cells_base.PostgresCell1, CrossCellTest):
    """The same with cell1 (the source cell) on PostgreSQL and cell2 on
    SQLite: the rows are copied between two kinds of database."""
    PG_PREFIX = 'nm_crosscell'
