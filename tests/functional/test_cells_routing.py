"""The API routed through the cells v2 mappings, on real processes over
real RabbitMQ (harness/cell_stack.py): two cells, each its own SQLite
database, broker vhost, conductor, scheduler and two computes, made
with the real ``nova-moves-manage cell_v2`` commands. Servers land in
both cells (by room, or by a named host); show, stop/start, cold
migrate + confirm, resize + revert and delete each go to the server's
cell (its rows and allocations checked in that cell's database, nothing
in the other); a server no cell can fit is created in cell0 in ERROR.
The one-cell stack is unchanged: every other functional test runs it."""
import os

import sqlalchemy as sa
import testtools

from nova_moves.db import models
from nova_moves.harness import cell_stack
from tests.functional import cells_base

FAULTS = models.InstanceFault.__table__


class CellsRoutingTest(cells_base.CellReads, testtools.TestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # cell2's hosts are bigger: a boot naming no host goes there.
        computes = [[{'name': 'cell1-compute%d' % i,
                      'compute': {'vcpus': 4, 'memory_mb': 8192}}
                     for i in (1, 2)],
                    [{'name': 'cell2-compute%d' % i,
                      'compute': {'vcpus': 8, 'memory_mb': 16384}}
                     for i in (1, 2)]]
        cls.stack = cell_stack.CellsStack(
            cells=2, computes=computes, database_url=cls.cell1_database(),
            keep_workdir=bool(os.environ.get('NOVA_MOVES_KEEP_LOGS')),
            extra_conf={'quota': {'instances': -1, 'cores': -1,
                                  'ram': -1}})
        cells_base.start(cls.stack)
        cls.admin = cls.stack.client()
        cls.small = cls.admin.create_flavor('small', 1, 512, 1)
        cls.medium = cls.admin.create_flavor('medium', 2, 1024, 1)
        cls.huge = cls.admin.create_flavor('huge', 1, 65536, 1)
        cls.engines = {cell: sa.create_engine(url) for cell, url in dict(
            cls.stack.cell_database_urls,
            cell0=cls.stack.cell0_database_url).items()}

    @classmethod
    def cell1_database(cls):
        """cell1's database URL (None: a SQLite file)."""
        return None

    # -- the cells' databases ---------------------------------------
    def cells_with_row(self, uuid):
        return sorted(c for c in self.engines if self.row(c, uuid))

    def assert_held(self, cell, uuid, flavor):
        """The server's allocation in its cell is its flavor; the other
        cells hold nothing for it or its migrations."""
        self.assertEqual({'VCPU': flavor['vcpus'],
                          'MEMORY_MB': flavor['ram'],
                          'DISK_GB': flavor['disk']},
                         self.allocations(cell, uuid))
        consumers = [uuid] + [m['uuid'] for m in self.migrations(cell, uuid)]
        for other in self.engines:
            for consumer in consumers:
                if other != cell or consumer != uuid:
                    self.assertEqual({}, self.allocations(other, consumer),
                                     (other, consumer))

    # -- API --------------------------------------------------------
    def act(self, uuid, body, status):
        response = self.admin.action(uuid, body)
        self.assertIn(response.status_code, (202, 204), response.text)
        return self.admin.wait_for_status(uuid, (status, 'ERROR'))

    def test_boot_by_room_lands_in_the_roomier_cell(self):
        server = self.admin.boot('by-room', self.small['id'])
        self.assertEqual('ACTIVE', server['status'], server)
        self.assertEqual(['cell2'], self.cells_with_row(server['id']))
        self.assertEqual('cell2', self.stack.cell_of_host(
            server['OS-EXT-SRV-ATTR:host']))
        self.admin.delete('/servers/%s' % server['id'], expect=204)
        self.admin.get('/servers/%s' % server['id'], expect=404)
        self.assertEqual({}, self.allocations('cell2', server['id']))

    def test_nothing_fits_goes_to_cell0_in_error(self):
        server = self.admin.boot('nowhere', self.huge['id'])
        self.assertEqual('ERROR', server['status'])
        self.assertIn('No valid host was found.', server['fault']['message'])
        self.assertEqual(['cell0'], self.cells_with_row(server['id']))
        for cell in self.engines:
            self.assertEqual({}, self.allocations(cell, server['id']))
        # Shown and deleted there; any other action is a 409.
        response = self.admin.action(server['id'], {'migrate': None})
        self.assertEqual(409, response.status_code, response.text)
        self.admin.delete('/servers/%s' % server['id'], expect=204)
        self.assertEqual(1, self.row('cell0', server['id'])['deleted'] != 0)
        self.admin.get('/servers/%s' % server['id'], expect=404)

    def test_unknown_server_is_404(self):
        response = self.admin.get(
            '/servers/9d7a5c3e-0000-4000-8000-000000000000')
        self.assertEqual(404, response.status_code)
        self.assertIn('could not be found', response.text)

    def _moves_in(self, cell):
        host = '%s-compute1' % cell
        other = '%s-compute2' % cell
        server = self.admin.boot('in-' + cell, self.small['id'], host=host)
        uuid = server['id']
        self.assertEqual('ACTIVE', server['status'], server)
        self.assertEqual([cell], self.cells_with_row(uuid))
        self.assertEqual(host, self.admin.server(uuid)[
            'OS-EXT-SRV-ATTR:host'])
        self.assert_held(cell, uuid, self.small)
        # stop / start
        self.assertEqual('SHUTOFF', self.act(uuid, {'os-stop': None},
                                             'SHUTOFF')['status'])
        self.assertEqual('stopped', self.row(cell, uuid)['vm_state'])
        self.assertEqual('ACTIVE', self.act(uuid, {'os-start': None},
                                            'ACTIVE')['status'])
        # cold migrate + confirm: to the cell's other host
        self.assertEqual('VERIFY_RESIZE', self.act(
            uuid, {'migrate': None}, 'VERIFY_RESIZE')['status'])
        self.assertEqual(other, self.row(cell, uuid)['host'])
        confirmed = self.act(uuid, {'confirmResize': None}, 'ACTIVE')
        self.assertEqual(other, confirmed['OS-EXT-SRV-ATTR:host'])
        self.assertEqual(['confirmed'], [
            m['status'] for m in self.migrations(cell, uuid)])
        self.assert_held(cell, uuid, self.small)
        # resize + revert: the flavor is read from the API's database
        resp = self.admin.action(uuid, {'resize': {
            'flavorRef': self.medium['id']}})
        self.assertEqual(202, resp.status_code, resp.text)
        resized = self.admin.wait_for_status(uuid, ('VERIFY_RESIZE',
                                                    'ERROR'))
        self.assertEqual(('VERIFY_RESIZE', 2), (resized['status'],
                                                resized['flavor']['vcpus']))
        reverted = self.act(uuid, {'revertResize': None}, 'ACTIVE')
        self.assertEqual((other, 1), (reverted['OS-EXT-SRV-ATTR:host'],
                                      reverted['flavor']['vcpus']))
        self.assertEqual(['confirmed', 'reverted'], [
            m['status'] for m in self.migrations(cell, uuid)])
        self.assert_held(cell, uuid, self.small)
        # delete
        self.admin.delete('/servers/%s' % uuid, expect=204)
        self.admin.get('/servers/%s' % uuid, expect=404)
        self.assertNotEqual(0, self.row(cell, uuid)['deleted'])
        for consumer in [uuid] + [m['uuid'] for m in
                                  self.migrations(cell, uuid)]:
            self.assertEqual({}, self.allocations(cell, consumer))

    def test_moves_in_cell1(self):
        self._moves_in('cell1')

    def test_moves_in_cell2(self):
        self._moves_in('cell2')


class CellsRoutingPostgresTest(cells_base.PostgresCell1, CellsRoutingTest):
    """The same with cell1 (the API's home cell) on PostgreSQL, cell2 on
    SQLite: the issue's "one PostgreSQL, one SQLite"."""
    PG_PREFIX = 'nm_cellroute'
