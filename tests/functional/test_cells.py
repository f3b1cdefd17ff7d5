"""Cells v2 set up with the real ``nova-moves-manage`` console script,
as an operator does it: an API database on PostgreSQL of its own
([api_database] connection), two cells -- one on PostgreSQL, one on
SQLite -- each synced with ``db sync`` from its own configuration file,
their compute services discovered into host mappings, the passwords
masked in list_cells, and a cell with hosts refused delete_cell but for
--force. And today's one-cell deployment (SQLite, no [api_database])
mapped by the one documented command, simple_cell_setup."""
import datetime
import os
import shutil
import subprocess
import tempfile
import uuid

import sqlalchemy as sa
import testtools

from nova_moves.db import models
from nova_moves.harness import stack as nm_stack
from tests.functional import databases

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TRANSPORT = 'rabbit://nova:mqpass@127.0.0.1:5672/%s'


def _add_server(url, project='p1'):
    """A server row, as a boot before the upgrade left it (no mapping)."""
    engine = sa.create_engine(url)
    server = str(uuid.uuid4())
    try:
        with engine.begin() as conn:
            conn.execute(models.Instance.__table__.insert().values(
                uuid=server, user_id='u1', project_id=project,
                vm_state='active', power_state=1, flavor='{}', progress=0,
                deleted=0, auto_disk_config=False,
                created_at=datetime.datetime.utcnow()))
    finally:
        engine.dispose()
    return server


def _add_computes(url, hosts):
    """Compute services in a cell's database, as the agents' first
    reports (through their conductor) leave them."""
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            for host in hosts:
                conn.execute(models.Service.__table__.insert().values(
                    uuid=str(uuid.uuid4()), host=host,
                    binary='nova-moves-compute', topic='compute',
                    disabled=False, forced_down=False, report_count=1,
                    created_at=datetime.datetime.utcnow()))
    finally:
        engine.dispose()


class CellsManageTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = tempfile.mkdtemp(prefix='nm-cells-')
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        names = {}
        for kind in ('api', 'cell1', 'cell0'):
            try:
                names[kind] = databases.create_database(
                    databases.PG_ADMIN_URL, prefix='nm_cells_' + kind)
            except Exception as exc:
                self.skipTest('PostgreSQL unavailable: %s' % exc)
            self.addCleanup(databases.drop_database, databases.PG_ADMIN_URL,
                            names[kind])
        self.urls = {kind: databases.PG_URL_FORMAT % name
                     for kind, name in names.items()}
        self.urls['cell2'] = 'sqlite:///%s' % os.path.join(self.tmp,
                                                           'cell2.sqlite')
        self.api_conf = self.config('api', self.urls['cell1'], 'cell1')
        self.cell2_conf = self.config('cell2', self.urls['cell2'], 'cell2')

    def config(self, name, database, vhost):
        path = os.path.join(self.tmp, name + '.conf')
        with open(path, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\ntransport_url = %s\n'
                    '[database]\nconnection = %s\n'
                    '[api_database]\nconnection = %s\n' % (
                        self.tmp, TRANSPORT % vhost, database,
                        self.urls['api']))
        return path

    def manage(self, *args, config=None, expect=0):
        env = dict(os.environ, PYTHONPATH=ROOT)
        proc = subprocess.run(
            [nm_stack._script('nova-moves-manage'), '--config-file',
             config or self.api_conf] + list(args), env=env, cwd=self.tmp,
            capture_output=True, text=True, timeout=300)
        self.assertEqual(expect, proc.returncode,
                         '%s: %s%s' % (args, proc.stdout, proc.stderr))
        return proc.stdout

    def table(self, out):
        return [[cell.strip() for cell in line.split('|')[1:-1]]
                for line in out.splitlines() if line.startswith('|')][1:]

    def test_two_cells_and_their_hosts(self):
        # Schemas: the API database, and each cell's from its own config
        # ([api_database] set: db sync leaves the API tables alone).
        out = self.manage('api_db', 'sync')
        self.assertIn('API database at revision api0002', out)
        self.assertEqual('api0002\n', self.manage('api_db', 'version'))
        out = self.manage('db', 'sync')
        self.assertIn('Database at revision', out)
        self.assertNotIn('API database', out)
        self.manage('db', 'sync', config=self.cell2_conf)
        _add_computes(self.urls['cell1'], ['compute1', 'compute2'])
        _add_computes(self.urls['cell2'], ['compute3'])

        self.assertEqual('', self.manage(
            'cell_v2', 'map_cell0', '--database_connection',
            self.urls['cell0']))
        # cell0's schema as doc/cells.md gives it: db sync with an overlay
        # naming only cell0's database (the servers lists read cell0).
        cell0_conf = os.path.join(self.tmp, 'cell0.conf')
        with open(cell0_conf, 'w') as f:
            f.write('[database]\nconnection = %s\n' % self.urls['cell0'])
        self.manage('--config-file', cell0_conf, 'db', 'sync')
        engine = sa.create_engine(self.urls['cell0'])
        try:
            self.assertIn('instances', sa.inspect(engine).get_table_names())
        finally:
            engine.dispose()
        cell1 = self.manage(
            'cell_v2', 'create_cell', '--name', 'cell1', '--transport-url',
            TRANSPORT % 'cell1', '--database_connection', self.urls['cell1'],
            '--verbose').strip()
        cell2 = self.manage(
            'cell_v2', 'create_cell', '--name', 'cell2', '--verbose',
            config=self.cell2_conf).splitlines()[-1]
        self.assertTrue(uuid.UUID(cell1) and uuid.UUID(cell2))
        # The same database twice: refused (2).
        self.manage('cell_v2', 'create_cell', '--name', 'again',
                    '--database_connection', self.urls['cell1'],
                    '--transport-url', TRANSPORT % 'other', expect=2)

        cells = self.table(self.manage('cell_v2', 'list_cells'))
        self.assertEqual(['cell0', 'cell1', 'cell2'], [c[0] for c in cells])
        self.assertEqual('none:///', cells[0][2])
        self.assertEqual('rabbit://nova:****@127.0.0.1:5672/cell1',
                         cells[1][2])
        self.assertNotIn(databases.CITEST + '@', cells[1][3])
        self.assertIn(':****@127.0.0.1', cells[1][3])
        self.assertEqual(self.urls['cell2'], cells[2][3])
        verbose = self.manage('cell_v2', 'list_cells', '--verbose')
        self.assertIn(self.urls['cell1'], verbose)

        out = self.manage('cell_v2', 'discover_hosts', '--verbose')
        self.assertIn('Found 3 cell mappings.', out)
        self.assertIn('Skipping cell0 since it does not contain hosts.', out)
        self.assertIn('Found 2 unmapped computes in cell: %s' % cell1, out)
        self.assertIn('Found 1 unmapped computes in cell: %s' % cell2, out)
        self.manage('cell_v2', 'discover_hosts', '--strict', expect=1)
        hosts = self.table(self.manage('cell_v2', 'list_hosts'))
        self.assertEqual([['cell1', cell1, 'compute1'],
                          ['cell1', cell1, 'compute2'],
                          ['cell2', cell2, 'compute3']], hosts)
        self.assertEqual([['cell2', cell2, 'compute3']], self.table(
            self.manage('cell_v2', 'list_hosts', '--cell_uuid', cell2)))

        # A new compute in cell2, discovered in that cell alone.
        _add_computes(self.urls['cell2'], ['compute4'])
        self.manage('cell_v2', 'discover_hosts', '--cell_uuid', cell2,
                    '--strict')
        out = self.manage('cell_v2', 'delete_cell', '--cell_uuid', cell2,
                          expect=2)
        self.assertEqual('There are existing hosts mapped to cell with '
                         'uuid %s.\n' % cell2, out)
        self.manage('cell_v2', 'update_cell', '--cell_uuid', cell2,
                    '--disable')
        self.assertEqual('True', self.table(self.manage(
            'cell_v2', 'list_cells'))[2][4])
        self.manage('cell_v2', 'delete_cell', '--cell_uuid', cell2,
                    '--force')
        self.assertEqual(['compute1', 'compute2'], [h[2] for h in self.table(
            self.manage('cell_v2', 'list_hosts'))])
        self.manage('cell_v2', 'delete_cell', '--cell_uuid', cell2,
                    expect=1)

    def test_one_cell_deployment_in_one_command(self):
        url = 'sqlite:///%s' % os.path.join(self.tmp, 'nova_moves.sqlite')
        config = os.path.join(self.tmp, 'one-cell.conf')
        with open(config, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\ntransport_url = %s\n'
                    '[database]\nconnection = %s\n' % (
                        self.tmp, TRANSPORT % 'one', url))
        out = self.manage('db', 'sync', config=config)
        self.assertIn('API database at revision api0002', out)
        self.manage('cell_v2', 'simple_cell_setup', config=config, expect=1)
        _add_computes(url, ['compute1'])
        server = _add_server(url)
        self.manage('cell_v2', 'simple_cell_setup', config=config)
        cells = self.table(self.manage('cell_v2', 'list_cells',
                                       config=config))
        self.assertEqual(2, len(cells))
        self.assertEqual(url.replace('nova_moves.sqlite',
                                     'nova_moves_cell0.sqlite'), cells[1][3])
        cell = cells[0][1]
        self.assertEqual([['', cell, 'compute1']], self.table(
            self.manage('cell_v2', 'list_hosts', config=config)))
        self.assertEqual('Instance %s is in cell: None (%s)\n' % (
            server, cell), self.manage('cell_v2', 'verify_instance',
                                       '--uuid', server, config=config))
        out = self.manage('status', 'check', config=config, expect=2)
        self.assertIn('API schema at head (api0002)', out)
