"""nova-moves-manage api_db and cell_v2, in process on real SQLite
databases (the API tables in the [database] one, as a one-cell
deployment has them; a second cell's database beside it): Nova's exit
codes and messages, passwords masked, and the instance mappings the API
writes at boot and delete."""
import argparse
import contextlib
import io
import os
from unittest import mock

import testtools

from nova_moves.cmd import manage_cell_v2
from nova_moves.cmd import manage_cells
from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves.db import api_migration
from nova_moves.db import mappings
from nova_moves.db import migration
from nova_moves.db import request_specs
from nova_moves import exception
from nova_moves import states
from tests.unit import fixtures as nm_fixtures

CONF = conf.CONF
RABBIT = 'rabbit://nova:s3cret@mq1:5672/cell1'
RABBIT2 = 'rabbit://nova:s3cret@mq2:5672/cell2'


def args(**values):
    defaults = {'verbose': False, 'name': None, 'transport_url': None,
                'database_connection': None, 'disabled': False,
                'cell_uuid': None, 'strict': False, 'force': False,
                'db_connection': None, 'disable': False, 'enable': False,
                'by_service': False, 'quiet': False, 'uuid': None,
                'version': None}
    defaults.update(values)
    return argparse.Namespace(**defaults)


class _Base(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.db = self.useFixture(nm_fixtures.Database())
        manage_cells.conf_transport_url()  # registers the option
        self.useFixture(nm_fixtures.Override('transport_url', RABBIT))
        self.dir = os.path.dirname(self.db.url[len('sqlite:///'):])

    def run_cmd(self, fn, **values):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = fn(args(**values))
        return code, out.getvalue()

    def other_cell_db(self, name='cell2', hosts=()):
        """Another cell's database at head, with compute services."""
        url = 'sqlite:///%s' % os.path.join(self.dir, name + '.sqlite')
        migration.db_sync_url(url)
        saved = CONF.database.connection
        db_api.dispose_engines()
        CONF.set_override('connection', url, group='database')
        try:
            for host in hosts:
                db_api.service_report(host, 'nova-moves-compute', 'compute',
                                      'nova')
        finally:
            db_api.dispose_engines()
            CONF.set_override('connection', saved, group='database')
        return url

    def server(self, host='h1', **values):
        return db_api.instance_create(dict({
            'display_name': 'vm', 'user_id': 'u', 'project_id': 'p',
            'vm_state': states.ACTIVE, 'host': host, 'node': host,
            'flavor': nm_fixtures.SMALL}, **values))


class ApiDbTest(_Base):

    def test_sync_and_version(self):
        code, out = self.run_cmd(manage_cells.api_db_sync)
        self.assertEqual(0, code)
        head = api_migration.head_version()
        self.assertEqual('API database at revision %s\n' % head, out)
        self.assertEqual((0, head + '\n'),
                         self.run_cmd(manage_cells.api_db_version))


class CellsTest(_Base):

    def test_map_cell0_default_and_again(self):
        self.assertEqual((0, ''), self.run_cmd(manage_cell_v2.map_cell0))
        cell0 = mappings.cell_get(mappings.CELL0_UUID)
        self.assertEqual(('cell0', 'none:///'),
                         (cell0['name'], cell0['transport_url']))
        self.assertEqual(
            self.db.url.replace('nova_moves.sqlite',
                                'nova_moves_cell0.sqlite'),
            cell0['database_connection'])
        self.assertEqual((0, 'Cell0 is already setup\n'),
                         self.run_cmd(manage_cell_v2.map_cell0))

    def test_map_cell0_given_connection(self):
        self.run_cmd(manage_cell_v2.map_cell0,
                     database_connection='sqlite:////x/c0.sqlite')
        self.assertEqual('sqlite:////x/c0.sqlite', mappings.cell_get(
            mappings.CELL0_UUID)['database_connection'])

    def test_cell0_default_connection_keeps_the_password(self):
        self.useFixture(nm_fixtures.Override(
            'connection', 'postgresql+psycopg2://nova:p%40ss@db/nova',
            'database'))
        self.assertEqual('postgresql+psycopg2://nova:p@ss@db/nova_cell0',
                         manage_cell_v2.cell0_default_connection())

    def test_create_cell(self):
        code, out = self.run_cmd(
            manage_cells.create_cell, name='cell1', transport_url=RABBIT,
            database_connection='sqlite:////x/c1.sqlite', verbose=True,
            disabled=True)
        self.assertEqual(0, code)
        cell = mappings.cell_get(out.strip())
        self.assertEqual(('cell1', RABBIT, 'sqlite:////x/c1.sqlite', True),
                         (cell['name'], cell['transport_url'],
                          cell['database_connection'], cell['disabled']))

    def test_create_cell_from_config(self):
        code, out = self.run_cmd(manage_cells.create_cell, name='c')
        self.assertEqual(0, code)
        self.assertEqual(
            '--transport-url not provided in the command line, using the '
            'value [DEFAULT]/transport_url from the configuration file\n'
            '--database_connection not provided in the command line, using '
            'the value [database]/connection from the configuration file\n',
            out)
        cell = mappings.cell_list()[0]
        self.assertEqual((RABBIT, self.db.url), (cell['transport_url'],
                                                 cell['database_connection']))

    def test_create_cell_without_transport_url(self):
        self.useFixture(nm_fixtures.Override('transport_url', ''))
        code, out = self.run_cmd(manage_cells.create_cell)
        self.assertEqual(1, code)
        self.assertEqual('Must specify --transport-url if '
                         '[DEFAULT]/transport_url is not set in the '
                         'configuration file.\n', out)
        self.assertEqual([], mappings.cell_list())

    def test_create_cell_invalid_transport_url(self):
        code, out = self.run_cmd(manage_cells.create_cell,
                                 transport_url='no-scheme')
        self.assertEqual(1, code)
        self.assertTrue(out.startswith('Invalid transport URL: '), out)

    def test_create_cell_duplicate(self):
        self.run_cmd(manage_cells.create_cell, transport_url=RABBIT,
                     database_connection='sqlite:////x/c1.sqlite')
        uuid = mappings.cell_list()[0]['uuid']
        code, out = self.run_cmd(
            manage_cells.create_cell, transport_url=RABBIT2,
            database_connection='sqlite:////x/c1.sqlite')
        self.assertEqual(2, code)
        self.assertEqual(
            'The specified transport_url and/or database_connection '
            'combination already exists for another cell with uuid %s.\n'
            % uuid, out)
        self.assertEqual(1, len(mappings.cell_list()))

    def test_list_cells_masks_passwords(self):
        self.run_cmd(manage_cell_v2.map_cell0)
        self.run_cmd(manage_cells.create_cell, name='cell1',
                     transport_url=RABBIT,
                     database_connection='mysql+pymysql://nova:dbpw@db/c1')
        code, out = self.run_cmd(manage_cells.list_cells)
        self.assertEqual(0, code)
        self.assertNotIn('s3cret', out)
        self.assertNotIn('dbpw', out)
        self.assertIn('rabbit://nova:****@mq1:5672/cell1', out)
        self.assertIn('mysql+pymysql://nova:****@db/c1', out)
        self.assertIn('none:///', out)
        self.assertIn('sqlite:////', out)
        lines = out.splitlines()
        self.assertEqual(['Name', 'UUID', 'Transport URL',
                          'Database Connection', 'Disabled'],
                         [c.strip() for c in lines[1].split('|')[1:-1]])
        # Sorted by name: cell0 before cell1.
        self.assertLess(out.index('cell0'), out.index('cell1'))
        code, out = self.run_cmd(manage_cells.list_cells, verbose=True)
        self.assertIn(RABBIT, out)
        self.assertIn('nova:dbpw@db', out)

    def test_mask_passwd_in_url(self):
        mask = manage_cells.mask_passwd_in_url
        self.assertEqual('rabbit://a:****@h1:5672,c:****@h2/v',
                         mask('rabbit://a:b@h1:5672,c:d:e@h2/v'))
        self.assertEqual('mysql://nova:****@db/nova?charset=utf8',
                         mask('mysql://nova:p@ss@db/nova?charset=utf8'))
        self.assertEqual('sqlite:////x/y.sqlite',
                         mask('sqlite:////x/y.sqlite'))
        self.assertEqual('none:///', mask('none:///'))
        self.assertEqual('rabbit://u@h/', mask('rabbit://u@h/'))


class _TwoCells(_Base):
    """cell0, cell1 (this database: h1, h2) and cell2 (its own: h3)."""

    def setUp(self):
        super().setUp()
        nm_fixtures.compute('h1')
        nm_fixtures.compute('h2')
        self.run_cmd(manage_cell_v2.map_cell0)
        self.cell1 = mappings.cell_create({
            'name': 'cell1', 'transport_url': RABBIT,
            'database_connection': self.db.url})
        self.cell2 = mappings.cell_create({
            'name': 'cell2', 'transport_url': RABBIT2,
            'database_connection': self.other_cell_db(hosts=['h3'])})


class HostsTest(_TwoCells):

    def test_discover_hosts(self):
        code, out = self.run_cmd(manage_cells.discover_hosts, verbose=True)
        self.assertEqual(0, code)
        self.assertEqual([
            'Found 3 cell mappings.',
            'Skipping cell0 since it does not contain hosts.',
            "Getting computes from cell 'cell1': %s" % self.cell1['uuid'],
            'Creating host mapping for service h1',
            'Creating host mapping for service h2',
            'Found 2 unmapped computes in cell: %s' % self.cell1['uuid'],
            "Getting computes from cell 'cell2': %s" % self.cell2['uuid'],
            'Creating host mapping for service h3',
            'Found 1 unmapped computes in cell: %s' % self.cell2['uuid']],
            out.splitlines())
        self.assertEqual({'h1': 'cell1', 'h2': 'cell1', 'h3': 'cell2'},
                         {h['host']: h['cell_name']
                          for h in mappings.host_mapping_list()})
        # Again: nothing new (quiet without --verbose); --strict says so.
        self.assertEqual((0, ''), self.run_cmd(manage_cells.discover_hosts))
        self.assertEqual((1, ''), self.run_cmd(manage_cells.discover_hosts,
                                               strict=True))

    def test_discover_hosts_past_a_cell_down(self):
        down = mappings.cell_create({
            'name': 'down', 'transport_url': 'rabbit://x/',
            'database_connection': 'sqlite:////nonexistent/dir/c.sqlite'})
        code, out = self.run_cmd(manage_cells.discover_hosts)
        self.assertEqual(1, code)
        self.assertTrue(out.startswith(
            'ERROR: Cannot read the database of cell %s: ' % down['uuid']),
            out)
        # The other cells' hosts are mapped all the same.
        self.assertEqual(['h1', 'h2', 'h3'], [
            h['host'] for h in mappings.host_mapping_list()])

    def test_discover_hosts_one_cell(self):
        code, out = self.run_cmd(manage_cells.discover_hosts,
                                 cell_uuid=self.cell2['uuid'], strict=True)
        self.assertEqual((0, ''), (code, out))
        self.assertEqual(['h3'], [h['host']
                                  for h in mappings.host_mapping_list()])

    def test_discover_hosts_unknown_cell(self):
        self.assertEqual((1, 'Cell with uuid nope was not found.\n'),
                         self.run_cmd(manage_cells.discover_hosts,
                                      cell_uuid='nope'))

    def test_discover_hosts_collision(self):
        # Another discover_hosts mapped h1 between the check and the write.
        with mock.patch.object(mappings, 'host_mapping_get',
                               return_value=None):
            mappings.host_mapping_create('h1', self.cell1['id'])
            code, out = self.run_cmd(manage_cells.discover_hosts)
        self.assertEqual(2, code)
        self.assertTrue(out.startswith(
            'ERROR: Duplicate host mapping was encountered.'), out)
        self.assertIn("Host 'h1' mapping already exists", out)

    def test_list_hosts(self):
        self.run_cmd(manage_cells.discover_hosts)
        code, out = self.run_cmd(manage_cells.list_hosts)
        self.assertEqual(0, code)
        rows = [[c.strip() for c in line.split('|')[1:-1]]
                for line in out.splitlines() if line.startswith('|')]
        self.assertEqual([['Cell Name', 'Cell UUID', 'Hostname'],
                          ['cell1', self.cell1['uuid'], 'h1'],
                          ['cell1', self.cell1['uuid'], 'h2'],
                          ['cell2', self.cell2['uuid'], 'h3']], rows)
        code, out = self.run_cmd(manage_cells.list_hosts,
                                 cell_uuid=self.cell2['uuid'])
        self.assertIn('h3', out)
        self.assertNotIn('h1', out)
        self.assertEqual((1, 'Cell with uuid x was not found.\n'),
                         self.run_cmd(manage_cells.list_hosts, cell_uuid='x'))

    def test_delete_cell(self):
        self.assertEqual((1, 'Cell with uuid x was not found.\n'),
                         self.run_cmd(manage_cells.delete_cell,
                                      cell_uuid='x'))
        self.run_cmd(manage_cells.discover_hosts)
        uuid = self.cell1['uuid']
        self.assertEqual(
            (2, 'There are existing hosts mapped to cell with uuid %s.\n'
             % uuid), self.run_cmd(manage_cells.delete_cell, cell_uuid=uuid))
        server = self.server()
        self.run_cmd(manage_cell_v2.map_instances, cell_uuid=uuid)
        # A live server: refused, with --force too.
        self.assertEqual(
            (3, 'There are existing instances mapped to cell with uuid '
             '%s.\n' % uuid), self.run_cmd(
                manage_cells.delete_cell, cell_uuid=uuid, force=True))
        db_api.instance_destroy(server['uuid'])
        with mock.patch.object(mappings, 'host_mapping_list',
                               return_value=[]):
            code, out = self.run_cmd(manage_cells.delete_cell,
                                     cell_uuid=uuid)
        self.assertEqual(4, code)
        self.assertTrue(out.startswith(
            'There are instance mappings to cell with uuid %s, but all '
            'instances have been deleted in the cell.\n' % uuid), out)
        self.assertEqual((0, ''), self.run_cmd(
            manage_cells.delete_cell, cell_uuid=uuid, force=True))
        self.assertRaises(exception.CellMappingNotFound, mappings.cell_get,
                          uuid)
        self.assertIsNone(mappings.instance_mapping_get(server['uuid']))
        self.assertEqual(['h3'], [h['host']
                                  for h in mappings.host_mapping_list()])
        # An empty cell goes without --force.
        self.assertEqual((0, ''), self.run_cmd(
            manage_cells.delete_cell, cell_uuid=mappings.CELL0_UUID))

    def test_update_cell(self):
        uuid = self.cell2['uuid']
        self.assertEqual((1, 'Cell with uuid x was not found.\n'),
                         self.run_cmd(manage_cells.update_cell,
                                      cell_uuid='x'))
        self.assertEqual((0, ''), self.run_cmd(
            manage_cells.update_cell, cell_uuid=uuid, name='gen2',
            transport_url='rabbit://n:p@mq9/c2'))
        cell = mappings.cell_get(uuid)
        self.assertEqual(('gen2', 'rabbit://n:p@mq9/c2'),
                         (cell['name'], cell['transport_url']))
        # Not given: kept (not this host's [database] connection).
        self.assertEqual(self.cell2['database_connection'],
                         cell['database_connection'])
        code, out = self.run_cmd(manage_cells.update_cell, cell_uuid=uuid,
                                 db_connection=self.db.url)
        self.assertEqual(3, code)
        self.assertIn('already exists for another cell with uuid %s'
                      % self.cell1['uuid'], out)
        self.assertEqual(
            (4, 'Cell cannot be disabled and enabled at the same time.\n'),
            self.run_cmd(manage_cells.update_cell, cell_uuid=uuid,
                         disable=True, enable=True))
        self.assertEqual((5, 'Cell0 cannot be disabled.\n'), self.run_cmd(
            manage_cells.update_cell, cell_uuid=mappings.CELL0_UUID,
            disable=True))
        self.assertEqual((0, ''), self.run_cmd(
            manage_cells.update_cell, cell_uuid=uuid, disable=True))
        self.assertTrue(mappings.cell_get(uuid)['disabled'])
        self.assertEqual((0, 'Cell %s is already disabled\n' % uuid),
                         self.run_cmd(manage_cells.update_cell,
                                      cell_uuid=uuid, disable=True))
        self.assertEqual((0, ''), self.run_cmd(
            manage_cells.update_cell, cell_uuid=uuid, enable=True))
        self.assertFalse(mappings.cell_get(uuid)['disabled'])
        self.assertEqual((0, 'Cell %s is already enabled\n' % uuid),
                         self.run_cmd(manage_cells.update_cell,
                                      cell_uuid=uuid, enable=True))
        with mock.patch.object(mappings, 'cell_update',
                               side_effect=exception.CellMappingNotFound(
                                   uuid=uuid)):
            code, out = self.run_cmd(manage_cells.update_cell,
                                     cell_uuid=uuid, name='x')
        self.assertEqual(2, code)
        self.assertTrue(out.startswith('Unable to update CellMapping: '))


class SimpleCellSetupTest(_Base):

    def test_no_hosts(self):
        code, out = self.run_cmd(manage_cell_v2.simple_cell_setup,
                                 transport_url=RABBIT)
        self.assertEqual((1, 'No hosts found to map to cell, exiting.\n'),
                         (code, out))
        # cell0 is mapped (and synced) already, as Nova leaves it.
        self.assertEqual(['cell0'], [c['name']
                                     for c in mappings.cell_list()])

    def test_todays_deployment_in_one_command(self):
        nm_fixtures.compute('h1')
        nm_fixtures.compute('h2')
        live = self.server()
        gone = self.server()
        db_api.instance_destroy(gone['uuid'])
        code, out = self.run_cmd(manage_cell_v2.simple_cell_setup,
                                 transport_url=RABBIT)
        self.assertEqual((0, ''), (code, out))
        cell0, cell = sorted(mappings.cell_list(),
                             key=lambda c: c['uuid'] != mappings.CELL0_UUID)
        self.assertEqual(mappings.CELL0_UUID, cell0['uuid'])
        self.assertEqual((RABBIT, self.db.url),
                         (cell['transport_url'], cell['database_connection']))
        self.assertTrue(os.path.exists(os.path.join(
            self.dir, 'nova_moves_cell0.sqlite')))
        self.assertEqual({'h1': cell['uuid'], 'h2': cell['uuid']},
                         {h['host']: h['cell_uuid']
                          for h in mappings.host_mapping_list()})
        mapped = mappings.instance_mapping_get(live['uuid'])
        self.assertEqual((cell['id'], 'p', 'u', False),
                         (mapped['cell_id'], mapped['project_id'],
                          mapped['user_id'], mapped['queued_for_delete']))
        self.assertTrue(mappings.instance_mapping_get(
            gone['uuid'])['queued_for_delete'])
        # Again: done before, nothing doubled.
        code, out = self.run_cmd(manage_cell_v2.simple_cell_setup,
                                 transport_url=RABBIT)
        self.assertEqual((0, 'Cell0 is already setup\n'
                          'All hosts are already mapped to cell(s).\n'),
                         (code, out))
        self.assertEqual(2, len(mappings.cell_list()))
        self.assertEqual((0, 'Instance %s is in cell: None (%s)\n' % (
            live['uuid'], cell['uuid'])), self.run_cmd(
                manage_cell_v2.verify_instance, uuid=live['uuid']))
        self.assertEqual(
            (3, 'The instance with uuid %s has been deleted.\n'
             % gone['uuid']), self.run_cmd(manage_cell_v2.verify_instance,
                                           uuid=gone['uuid']))
        self.assertEqual((1, ''), self.run_cmd(
            manage_cell_v2.verify_instance, uuid='nope', quiet=True))

    def test_map_instances_fills_unmapped_boots(self):
        """A boot before simple_cell_setup has no cell (cell_id NULL);
        map_instances gives it this one."""
        server = self.server()
        mappings.instance_mapping_for_boot(server['uuid'], 'p', 'u',
                                           self.db.url)
        self.assertEqual((2, 'Instance %s is not mapped to a cell\n'
                          % server['uuid']), self.run_cmd(
            manage_cell_v2.verify_instance, uuid=server['uuid']))
        cell = mappings.cell_create({'name': 'c', 'transport_url': RABBIT,
                                     'database_connection': self.db.url})
        self.assertEqual((0, ''), self.run_cmd(
            manage_cell_v2.map_instances, cell_uuid=cell['uuid']))
        self.assertEqual(cell['id'], mappings.instance_mapping_get(
            server['uuid'])['cell_id'])
        self.assertEqual((1, 'Cell with uuid x was not found.\n'),
                         self.run_cmd(manage_cell_v2.map_instances,
                                      cell_uuid='x'))

    def test_map_instances_fills_missing_request_specs(self):
        """Servers booted before the API database kept request specs get
        theirs from their rows; deleted ones, and one already with a
        spec, are left alone."""
        live = self.server(image_ref='img-1', requested_az='az1')
        gone = self.server()
        db_api.instance_destroy(gone['uuid'])
        kept = self.server()
        cell = mappings.cell_create({'name': 'c', 'transport_url': RABBIT,
                                     'database_connection': self.db.url})
        mappings.instance_mapping_create(
            kept['uuid'], cell['id'], 'p', 'u', spec=request_specs.build(
                nm_fixtures.SMALL, 'img-kept', None, 'p', 'u'))
        self.assertEqual((0, ''), self.run_cmd(
            manage_cell_v2.map_instances, cell_uuid=cell['uuid']))
        self.assertEqual(request_specs.build(
            nm_fixtures.SMALL, 'img-1', 'az1', 'p', 'u'),
            request_specs.get(live['uuid']))
        self.assertIsNone(request_specs.get(gone['uuid']))
        self.assertEqual('img-kept',
                         request_specs.get(kept['uuid'])['image_id'])


class ApiWritesMappingsTest(testtools.TestCase):
    """The API maps a server at boot (to this API's cell) and queues the
    mapping for delete when the server is deleted."""

    HEADERS = {'X-Auth-Token': 'alice:p1',
               'OpenStack-API-Version': 'compute 2.1'}

    def setUp(self):
        super().setUp()
        self.client = nm_fixtures.app_client(self, 'h1')
        self.flavor = nm_fixtures.flavor()

    def boot(self):
        resp = self.client.post('/v2.1/servers', headers=self.HEADERS, json={
            'server': {'name': 'vm', 'imageRef': 'img',
                       'flavorRef': self.flavor['flavorid']}})
        self.assertEqual(202, resp.status_code, resp.get_data(as_text=True))
        return resp.get_json()['server']['id']

    def test_boot_and_delete(self):
        before = self.boot()  # no cell mapped yet: cell_id NULL
        self.assertIsNone(mappings.instance_mapping_get(before)['cell_id'])
        cell = mappings.cell_create({
            'name': 'cell1', 'transport_url': RABBIT,
            'database_connection': CONF.database.connection})
        uuid = self.boot()
        mapping = mappings.instance_mapping_get(uuid)
        self.assertEqual((cell['id'], 'p1', 'alice', False),
                         (mapping['cell_id'], mapping['project_id'],
                          mapping['user_id'], mapping['queued_for_delete']))
        resp = self.client.delete('/v2.1/servers/%s' % uuid,
                                  headers=self.HEADERS)
        self.assertEqual(204, resp.status_code)
        self.assertTrue(mappings.instance_mapping_get(uuid)[
            'queued_for_delete'])

    def test_boot_among_cells_none_of_which_is_ours(self):
        for name in ('a', 'b'):
            mappings.cell_create({'name': name, 'transport_url': name,
                                  'database_connection': 'sqlite:///' + name})
        with mock.patch.object(mappings.LOG, 'warning') as warn:
            uuid = self.boot()
        self.assertIsNone(mappings.instance_mapping_get(uuid)['cell_id'])
        self.assertIn('update_cell --database_connection',
                      warn.call_args[0][0])

    def test_mapping_not_written_leaves_no_server(self):
        # The mapping is written first (Nova's order): when it cannot be
        # (the database out of connections), no BUILD row is left that no
        # build would ever come for.
        # Nor can anything be cleaned up after it.
        with mock.patch.object(mappings, 'instance_mapping_for_boot',
                               side_effect=RuntimeError('boom')), \
                mock.patch.object(db_api, 'instance_destroy',
                                  side_effect=RuntimeError('no db')):
            resp = self.client.post(
                '/v2.1/servers', headers=self.HEADERS, json={'server': {
                    'name': 'vm', 'imageRef': 'img',
                    'flavorRef': self.flavor['flavorid']}})
        self.assertEqual(500, resp.status_code)
        self.assertEqual([], db_api.instance_get_all())

    def test_boot_undone_leaves_no_mapping(self):
        with mock.patch.object(db_api, 'instance_metadata_update',
                               side_effect=RuntimeError('boom')):
            resp = self.client.post(
                '/v2.1/servers', headers=self.HEADERS, json={'server': {
                    'name': 'vm', 'imageRef': 'img', 'metadata': {'a': 'b'},
                    'flavorRef': self.flavor['flavorid']}})
        self.assertEqual(500, resp.status_code)
        from nova_moves.db import api_session
        import sqlalchemy as sa
        with api_session.tx(writer=False) as conn:
            self.assertEqual(0, conn.execute(sa.text(
                'SELECT count(*) FROM instance_mappings')).scalar())


class SchedulerHostDiscoveryTest(_TwoCells):
    """[scheduler] discover_hosts_in_cells_interval: the same discovery,
    periodic in the scheduler."""

    def test_from_conf(self):
        from nova_moves.scheduler import host_discovery
        self.assertIsNone(host_discovery.HostDiscovery.from_conf())
        self.useFixture(nm_fixtures.Override(
            'discover_hosts_in_cells_interval', 0, 'scheduler'))
        self.assertEqual(60, host_discovery.HostDiscovery.from_conf().interval)

    def test_run_once(self):
        from nova_moves.scheduler import host_discovery
        discovery = host_discovery.HostDiscovery(5)
        self.assertEqual(['h1', 'h2', 'h3'], discovery.run_once())
        self.assertEqual([], discovery.run_once())
        with mock.patch.object(mappings, 'host_mapping_get',
                               return_value=None), \
                mock.patch.object(host_discovery.LOG, 'warning') as warn:
            self.assertEqual([], discovery.run_once())
            self.assertEqual([], discovery.run_once())
        self.assertEqual(1, warn.call_count)  # then debug
        self.assertIn('only be enabled on a single scheduler',
                      warn.call_args[0][0])

    def test_a_cell_down_holds_back_no_other(self):
        from nova_moves.scheduler import host_discovery
        mappings.cell_create({
            'name': 'down', 'transport_url': 'rabbit://x/',
            'database_connection': 'sqlite:////nonexistent/dir/c.sqlite'})
        with mock.patch.object(host_discovery.LOG, 'warning') as warn:
            self.assertEqual(['h1', 'h2', 'h3'],
                             host_discovery.HostDiscovery(5).run_once())
        self.assertIn('cannot read the database', warn.call_args[0][0])

    def test_thread_runs_at_start_and_stops(self):
        from nova_moves.scheduler import host_discovery
        discovery = host_discovery.HostDiscovery(3600)
        discovery.start()
        discovery.stop()
        discovery._thread.join(10)
        self.assertFalse(discovery._thread.is_alive())
        self.assertEqual(3, len(mappings.host_mapping_list()))


class StatusCheckTest(_Base):
    """status check's schema row covers the API schema too."""

    def test_both_at_head(self):
        from nova_moves.cmd import manage_status
        code, text = manage_status.check_database()
        self.assertEqual(manage_status.SUCCESS, code)
        self.assertIn('API schema at head (%s)' % api_migration.head_version(),
                      text)

    def test_api_schema_behind(self):
        from nova_moves.cmd import manage_status
        with mock.patch.object(api_migration, 'db_version',
                               return_value=None):
            code, text = manage_status.check_database()
        self.assertEqual(manage_status.FAILURE, code)
        self.assertIn('API schema at None, head is %s: run nova-moves-manage '
                      'db sync.' % api_migration.head_version(), text)
        self.useFixture(nm_fixtures.Override(
            'connection', self.db.url, 'api_database'))
        with mock.patch.object(api_migration, 'db_version',
                               return_value=None):
            code, text = manage_status.check_database()
        self.assertIn('run nova-moves-manage api_db sync.', text)
