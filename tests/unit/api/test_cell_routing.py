"""The API routed through the cells v2 mappings (api/cell_routing.py,
api/boot_cells.py) on SQLite: an API database, cell1 (the API's own
[database]), cell2 and cell0, RPC on the fake driver. A server request
runs in its mapping's cell; boots go to the cell with room, else cell0
in ERROR; without an API database nothing is looked up. End to end with
real processes: tests/functional/test_cells_routing.py."""
import os
from unittest import mock

import testtools

from nova_moves.api import cell_routing
from nova_moves import cells
from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves.db import api_migration
from nova_moves.db import api_session
from nova_moves.db import mappings
from nova_moves.db import migration
from nova_moves.db import session
from nova_moves import states
from tests.unit import fixtures as nm_fixtures

OWNER = {'X-Auth-Token': 'alice:p1'}
ADMIN = {'X-Auth-Token': 'admin:admin'}


class _CellsBase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.client = nm_fixtures.app_client(self)
        here = os.path.dirname(db_api.get_engine().url.database)
        self.api_url = 'sqlite:///%s' % os.path.join(here, 'api.sqlite')
        self.useFixture(nm_fixtures.Override(
            'connection', self.api_url, 'api_database'))
        api_session.dispose_engines()
        self.addCleanup(api_session.dispose_engines)
        api_migration.db_sync()
        urls = {name: 'sqlite:///%s' % os.path.join(here, name + '.sqlite')
                for name in ('cell0', 'cell2')}
        for url in urls.values():
            migration.db_sync_url(url)
        self.addCleanup(session.dispose_engines)
        self.cell0 = mappings.cell_create({
            'uuid': mappings.CELL0_UUID, 'name': 'cell0',
            'transport_url': 'none:///',
            'database_connection': urls['cell0']})
        self.cell1 = mappings.cell_create({
            'name': 'cell1', 'transport_url': 'fake:///',
            'database_connection': db_api.get_engine().url.render_as_string(
                hide_password=False)})
        self.cell2 = mappings.cell_create({
            'name': 'cell2', 'transport_url': 'fake:///cell2',
            'database_connection': urls['cell2']})
        cell_routing.forget_cells()
        self.addCleanup(cell_routing.forget_cells)
        self.flavor = nm_fixtures.flavor(vcpus=2, memory_mb=1024)
        nm_fixtures.compute('h1', vcpus=2, memory_mb=2048)
        with self.target(self.cell2):
            nm_fixtures.compute('h2', vcpus=4, memory_mb=4096)

    @staticmethod
    def target(mapping):
        return cells.target(cells.Cell.from_mapping(mapping))

    def boot(self, name='vm'):
        response = self.client.post('/v2.1/servers', headers=OWNER, json={
            'server': {'name': name, 'flavorRef': self.flavor['flavorid']}})
        self.assertEqual(202, response.status_code, response.get_json())
        return response.get_json()['server']['id']

    def mapped_cell(self, uuid):
        return mappings.instance_mapping_get(uuid)['cell_uuid']



class CellRoutingTest(_CellsBase):

    def test_boot_goes_to_the_cell_with_room_and_requests_follow(self):
        uuid = self.boot()
        # cell2's h2 has the most room: the row and the mapping are there.
        self.assertEqual(self.cell2['uuid'], self.mapped_cell(uuid))
        self.assertRaises(Exception, db_api.instance_get, uuid)
        with self.target(self.cell2):
            self.assertEqual(states.BUILDING,
                             db_api.instance_get(uuid)['vm_state'])
            db_api.instance_update(uuid, {
                'vm_state': states.ACTIVE, 'task_state': None,
                'host': 'h2', 'node': 'h2'})
        response = self.client.get('/v2.1/servers/' + uuid, headers=OWNER)
        self.assertEqual(200, response.status_code)
        self.assertEqual('ACTIVE', response.get_json()['server']['status'])
        # An action's claim and action record go to cell2 too.
        response = self.client.post('/v2.1/servers/%s/action' % uuid,
                                    headers=OWNER, json={'os-stop': None})
        self.assertEqual(202, response.status_code, response.get_json())
        with self.target(self.cell2):
            self.assertEqual('powering-off',
                             db_api.instance_get(uuid)['task_state'])
            self.assertEqual(['create', 'stop'], sorted(
                a['action'] for a in db_api.actions_get(uuid)))

    def test_resize_reads_the_flavor_from_the_api_database(self):
        uuid = self.boot()
        with self.target(self.cell2):
            db_api.instance_update(uuid, {
                'vm_state': states.ACTIVE, 'task_state': None,
                'host': 'h2', 'node': 'h2'})
        bigger = nm_fixtures.flavor(vcpus=3, memory_mb=1024)
        response = self.client.post(
            '/v2.1/servers/%s/action' % uuid, headers=OWNER,
            json={'resize': {'flavorRef': bigger['flavorid']}})
        self.assertEqual(202, response.status_code, response.get_json())

    def test_no_mapping_is_404(self):
        uuid = self.boot()
        mappings.instance_mapping_delete(uuid)
        response = self.client.get('/v2.1/servers/' + uuid, headers=OWNER)
        self.assertEqual(404, response.status_code)
        self.assertEqual('Instance %s could not be found.' % uuid,
                         response.get_json()['itemNotFound']['message'])

    def test_nothing_fits_goes_to_cell0_in_error(self):
        huge = nm_fixtures.flavor(vcpus=1, memory_mb=8192)
        self.flavor = huge
        uuid = self.boot()
        self.assertEqual(mappings.CELL0_UUID, self.mapped_cell(uuid))
        response = self.client.get('/v2.1/servers/' + uuid, headers=OWNER)
        body = response.get_json()['server']
        self.assertEqual('ERROR', body['status'])
        self.assertIn('No valid host was found.', body['fault']['message'])
        with self.target(self.cell2):
            self.assertEqual({}, {k: v for k, v in db_api.allocations_get(
                uuid).items() if v})
        # An action is a 409; the delete works, in cell0.
        response = self.client.post('/v2.1/servers/%s/action' % uuid,
                                    headers=OWNER, json={'os-stop': None})
        self.assertEqual(409, response.status_code)
        # Not to another project: it does not exist for them.
        response = self.client.post(
            '/v2.1/servers/%s/action' % uuid,
            headers={'X-Auth-Token': 'bob:p2'}, json={'os-stop': None})
        self.assertEqual(404, response.status_code)
        response = self.client.delete('/v2.1/servers/' + uuid, headers=OWNER)
        self.assertEqual(204, response.status_code, response.get_json())
        self.assertTrue(mappings.instance_mapping_get(uuid)[
            'queued_for_delete'])
        with self.target(self.cell0):
            self.assertEqual(states.DELETED, db_api.instance_get(
                uuid, read_deleted=True)['vm_state'])

    def test_disabled_cell_is_not_chosen(self):
        mappings.cell_update(self.cell2['uuid'], {'disabled': True})
        cell_routing.forget_cells()
        uuid = self.boot()
        self.assertEqual(self.cell1['uuid'], self.mapped_cell(uuid))
        self.assertEqual(states.BUILDING,
                         db_api.instance_get(uuid)['vm_state'])

    def test_rpc_clients_are_the_cells(self):
        uuid = self.boot()
        with self.target(self.cell2):
            db_api.instance_update(uuid, {
                'vm_state': states.ACTIVE, 'task_state': None,
                'host': 'h2', 'node': 'h2'})
        services = self.client.application.extensions['nova_moves']
        seen = []
        original = services.for_cell

        def for_cell(cell):
            seen.append(cell.name)
            return original(cell)
        with mock.patch.object(services, 'for_cell', for_cell):
            self.client.post('/v2.1/servers/%s/action' % uuid,
                             headers=OWNER, json={'os-stop': None})
        self.assertIn('cell2', seen)
        cell2 = services.for_cell(cells.Cell.from_mapping(self.cell2))
        self.assertIsNot(services, cell2)
        self.assertIsNot(services.compute.client, cell2.compute.client)
        own = services.for_cell(cells.Cell(
            'c1', 'cell1', '', conf.CONF.transport_url))
        self.assertIs(services, own)


class OneCellTest(testtools.TestCase):
    """No API database: no lookup, the boot exactly as before."""

    def test_no_lookup(self):
        client = nm_fixtures.app_client(self, 'h1')
        flavor = nm_fixtures.flavor()
        with mock.patch.object(mappings, 'instance_mapping_get') as get, \
                mock.patch.object(cell_routing, 'cell_mappings') as cellmap:
            response = client.post('/v2.1/servers', headers=OWNER, json={
                'server': {'name': 'vm', 'flavorRef': flavor['flavorid']}})
            self.assertEqual(202, response.status_code)
            uuid = response.get_json()['server']['id']
            response = client.get('/v2.1/servers/' + uuid, headers=OWNER)
            self.assertEqual(200, response.status_code)
        get.assert_not_called()
        cellmap.assert_not_called()


class CellRoutingMoreTest(_CellsBase):

    def test_the_keeper_touches_the_move_in_its_cell(self):
        from nova_moves.api import move_sending
        seen = []

        def keep_alive(*args):
            seen.append(cells.current())
            return True
        keeper = move_sending.Keeper()
        cell2 = cells.Cell.from_mapping(self.cell2)
        with mock.patch.object(db_api, 'move_keep_alive', keep_alive), \
                self.target(self.cell2):
            with keeper.sending('u1', 'resize_prep'):
                start = list(keeper._starts.values())[0]
                keeper._touch(start)
        self.assertEqual([cell2], seen)
        self.assertEqual(cell2, start.cell)
