"""Request specs through the API: a boot writes its server's spec (with
the instance mapping, in the API database), a confirmed resize updates
its flavor, a delete removes it, and GET /servers/{id} of a server whose
cell is down shows its flavor, image and zone from it (Nova's 2.69
partial show). One cell (the API tables in [database]) and two cells on
SQLite, as tests/unit/api/test_cell_routing.py builds them."""
import os

import testtools

from nova_moves.api import cell_routing
from nova_moves.db import api as db_api
from nova_moves.db import mappings
from nova_moves.db import request_specs
from nova_moves import states
from tests.unit.api import test_cell_routing
from tests.unit import fixtures as nm_fixtures

OWNER = test_cell_routing.OWNER


def at(version):
    return dict(OWNER, **{'OpenStack-API-Version': 'compute %s' % version})


class OneCellSpecTest(testtools.TestCase):
    """No [api_database] connection: the spec sits next to the mapping
    in the [database] database, as the mappings do."""

    def setUp(self):
        super().setUp()
        self.client = nm_fixtures.app_client(self)
        nm_fixtures.compute('h1', zone='az1')
        nm_fixtures.compute('h2', zone='az1')
        self.small = nm_fixtures.flavor()
        self.big = nm_fixtures.flavor(vcpus=2, memory_mb=1024)

    def boot(self, **server):
        response = self.client.post('/v2.1/servers', headers=OWNER, json={
            'server': dict({'name': 'vm',
                            'flavorRef': self.small['flavorid']}, **server)})
        self.assertEqual(202, response.status_code, response.get_json())
        return response.get_json()['server']['id']

    def test_boot_writes_the_spec_and_delete_removes_it(self):
        uuid = self.boot(imageRef='img-1', availability_zone='az1')
        spec = request_specs.get(uuid)
        self.assertEqual({'flavor': request_specs.flavor_of(self.small),
                          'image_id': 'img-1', 'availability_zone': 'az1',
                          'project_id': 'p1', 'user_id': 'alice'}, spec)
        volume_backed = request_specs.get(self.boot())
        self.assertIsNone(volume_backed['image_id'])
        self.assertIsNone(volume_backed['availability_zone'])
        response = self.client.delete('/v2.1/servers/' + uuid,
                                      headers=OWNER)
        self.assertEqual(204, response.status_code, response.get_data())
        self.assertIsNone(request_specs.get(uuid))

    def test_confirm_resize_writes_the_new_flavor(self):
        uuid = self.boot(imageRef='img-1')
        db_api.instance_update(uuid, {
            'vm_state': states.RESIZED, 'task_state': None, 'host': 'h2',
            'node': 'h2', 'flavor': self.big, 'old_flavor': self.small})
        db_api.migration_create({
            'instance_uuid': uuid, 'migration_type': states.RESIZE,
            'status': states.M_FINISHED, 'source_compute': 'h1',
            'source_node': 'h1', 'dest_compute': 'h2', 'dest_node': 'h2',
            'old_flavor_id': self.small['flavorid'],
            'new_flavor_id': self.big['flavorid']})
        response = self.client.post('/v2.1/servers/%s/action' % uuid,
                                    headers=OWNER,
                                    json={'confirmResize': None})
        self.assertEqual(204, response.status_code, response.get_data())
        spec = request_specs.get(uuid)
        self.assertEqual(request_specs.flavor_of(self.big), spec['flavor'])
        self.assertEqual('img-1', spec['image_id'])

    def test_a_pinned_zone_is_the_specs(self):
        uuid = self.boot()
        db_api.instance_update(uuid, {'vm_state': states.ACTIVE,
                                      'task_state': None, 'host': 'h1',
                                      'node': 'h1'})
        for wanted in ('az1', None):
            response = self.client.put(
                '/v2.1/servers/' + uuid, headers=at('2.104'),
                json={'server': {'pinned_availability_zone': wanted}})
            self.assertEqual(200, response.status_code, response.get_data())
            self.assertEqual(wanted, request_specs.get(uuid)[
                'availability_zone'])

    def test_an_unshelve_into_a_zone_is_the_specs(self):
        uuid = self.boot()
        db_api.instance_update(uuid, {
            'vm_state': states.SHELVED_OFFLOADED, 'task_state': None,
            'host': None, 'node': None})
        response = self.client.post(
            '/v2.1/servers/%s/action' % uuid, headers=at('2.77'),
            json={'unshelve': {'availability_zone': 'az1'}})
        self.assertEqual(202, response.status_code, response.get_data())
        self.assertEqual('az1', request_specs.get(uuid)['availability_zone'])


class TwoCellSpecTest(test_cell_routing._CellsBase):
    """A separate API database: the boot's spec is there whichever cell
    the server went to, and its show while that cell is down has it."""

    def down(self, mapping):
        here = os.path.dirname(db_api.get_engine().url.database)
        blocker = os.path.join(here, 'not-a-directory')
        open(blocker, 'w').close()
        mappings.cell_update(mapping['uuid'], {
            'database_connection': 'sqlite:///%s' % os.path.join(
                blocker, 'x.sqlite')})
        cell_routing.forget_cells()

    def boot_image(self, **server):
        response = self.client.post('/v2.1/servers', headers=OWNER, json={
            'server': dict({'name': 'vm',
                            'flavorRef': self.flavor['flavorid']},
                           **server)})
        self.assertEqual(202, response.status_code, response.get_json())
        return response.get_json()['server']['id']

    def show(self, uuid, version):
        response = self.client.get('/v2.1/servers/' + uuid,
                                   headers=at(version))
        self.assertEqual(200, response.status_code, response.get_data())
        return response.get_json()['server']

    def test_partial_show_from_the_spec(self):
        uuid = self.boot_image(imageRef='img-1')
        self.assertEqual(self.cell2['uuid'], self.mapped_cell(uuid))
        self.assertEqual('img-1', request_specs.get(uuid)['image_id'])
        self.down(self.cell2)
        body = self.show(uuid, '2.69')
        self.assertEqual('UNKNOWN', body['status'])
        self.assertEqual({'id': 'img-1', 'links': [{
            'rel': 'bookmark',
            'href': body['image']['links'][0]['href']}]}, body['image'])
        self.assertTrue(body['image']['links'][0]['href'].endswith(
            '/images/img-1'))
        self.assertEqual({'vcpus': 2, 'ram': 1024, 'disk': 1,
                          'ephemeral': 0, 'swap': 0,
                          'original_name': self.flavor['name'],
                          'extra_specs': {}}, body['flavor'])
        self.assertEqual('UNKNOWN', body['OS-EXT-AZ:availability_zone'])
        self.assertEqual('alice', body['user_id'])
        self.assertEqual(0, body['OS-EXT-STS:power_state'])
        self.assertEqual(uuid, body['links'][0]['href'].rsplit('/', 1)[1])
        self.assertNotIn('server_groups', body)
        self.assertEqual([], self.show(uuid, '2.71')['server_groups'])

    def test_partial_show_of_a_volume_backed_server_in_a_zone(self):
        uuid = self.boot_image()
        mapping = mappings.instance_mapping_get(uuid)
        # The zone asked for at boot (the cells' hosts have none here).
        spec = dict(request_specs.get(uuid), availability_zone='az2')
        mappings.instance_mapping_delete(uuid)
        mappings.instance_mapping_create(uuid, mapping['cell_id'], 'p1',
                                         'alice', spec=spec)
        self.down(self.cell2)
        body = self.show(uuid, '2.69')
        self.assertEqual('', body['image'])
        self.assertEqual('az2', body['OS-EXT-AZ:availability_zone'])

    def test_server_without_a_spec_keeps_the_mapping_record(self):
        uuid = self.boot_image(imageRef='img-1')
        mapping = mappings.instance_mapping_get(uuid)
        mappings.instance_mapping_delete(uuid)  # its spec too
        mappings.instance_mapping_create(uuid, mapping['cell_id'], 'p1',
                                         'alice')
        self.down(self.cell2)
        body = self.show(uuid, '2.69')
        self.assertNotIn('flavor', body)
        self.assertNotIn('image', body)
        self.assertEqual('UNKNOWN', body['OS-EXT-AZ:availability_zone'])
        self.assertEqual('alice', body['user_id'])

    def test_delete_in_a_cell_removes_the_spec(self):
        uuid = self.boot_image(imageRef='img-1')
        response = self.client.delete('/v2.1/servers/' + uuid,
                                      headers=OWNER)
        self.assertEqual(204, response.status_code, response.get_data())
        self.assertIsNone(request_specs.get(uuid))
        self.assertTrue(mappings.instance_mapping_get(uuid)[
            'queued_for_delete'])

    def test_confirm_in_a_cell_writes_the_api_database(self):
        uuid = self.boot_image(imageRef='img-1')
        bigger = nm_fixtures.flavor(vcpus=3, memory_mb=1024)
        with self.target(self.cell2):
            db_api.instance_update(uuid, {
                'vm_state': states.RESIZED, 'task_state': None,
                'host': 'h2', 'node': 'h2', 'flavor': bigger,
                'old_flavor': self.flavor})
            db_api.migration_create({
                'instance_uuid': uuid, 'migration_type': states.RESIZE,
                'status': states.M_FINISHED, 'source_compute': 'h2',
                'source_node': 'h2', 'dest_compute': 'h2',
                'dest_node': 'h2', 'old_flavor_id': self.flavor['flavorid'],
                'new_flavor_id': bigger['flavorid']})
        response = self.client.post('/v2.1/servers/%s/action' % uuid,
                                    headers=OWNER,
                                    json={'confirmResize': None})
        self.assertEqual(204, response.status_code, response.get_data())
        self.assertEqual(request_specs.flavor_of(bigger),
                         request_specs.get(uuid)['flavor'])
        self.down(self.cell2)
        self.assertEqual(3, self.show(uuid, '2.69')['flavor']['vcpus'])
