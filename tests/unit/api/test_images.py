"""GET /v2.1/images[/{id}] through the WSGI app on a real (SQLite)
database: the [api] image_names, the local image store's images (records
written by hand: the API reads only image.json, so no qemu-img is needed)
and the shelved servers' records, and who sees which."""
import json
import os

import fixtures
import testtools

from nova_moves.api import images
from nova_moves.db import api as db_api
from tests.unit import fixtures as nm_fixtures

ADMIN = {'X-Auth-Token': 'admin:admin'}
ALICE = {'X-Auth-Token': 'alice:p1'}
BOB = {'X-Auth-Token': 'bob:p2'}
PUBLIC = '7c0e5d0a-4a5e-4a0f-9d7b-2f0b8f7f0a01'
PRIVATE = '7c0e5d0a-4a5e-4a0f-9d7b-2f0b8f7f0a02'


def record(image_id, name, created_at, visibility='public', owner=None,
           **extra):
    return dict({
        'id': image_id, 'name': name, 'status': 'active',
        'created_at': created_at, 'updated_at': created_at,
        'kernel': 'kernel', 'initrd': 'initrd', 'disk': 'disk',
        'cmdline': '', 'size': 1234, 'virtual_size': 67108864,
        'disk_format': 'qcow2', 'container_format': 'bare',
        'visibility': visibility, 'owner': owner, 'min_disk': 0,
        'min_ram': 0, 'properties': {}}, **extra)


class ImagesAPITest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.client = nm_fixtures.app_client(self, 'h1')
        self.store = os.path.join(
            self.useFixture(fixtures.TempDir()).path, 'images')
        self.useFixture(nm_fixtures.Override('store_path', self.store,
                                             'image'))
        self.add(record(PUBLIC, 'cirros', '2026-11-01T10:00:00Z',
                        cmdline='dirty=10',
                        properties={'hw_machine_type': 'q35',
                                    'hw_rescue_bus': 'virtio',
                                    'size': 'not shown'}))
        self.add(record(PRIVATE, 'secret', '2026-11-02T10:00:00Z',
                        visibility='private', owner='p1'))

    def add(self, rec):
        folder = os.path.join(self.store, rec['id'])
        os.makedirs(folder)
        with open(os.path.join(folder, 'image.json'), 'w') as f:
            json.dump(rec, f)

    def list(self, headers=ALICE, query=''):
        response = self.client.get('/v2.1/images' + query, headers=headers)
        self.assertEqual(200, response.status_code, response.get_json())
        return response.get_json()['images']

    def names(self, headers=ALICE, query=''):
        return [i['name'] for i in self.list(headers, query)]

    def show(self, image_id, headers=ALICE):
        return self.client.get('/v2.1/images/%s' % image_id,
                               headers=headers)

    def test_store_images_in_glance_shape(self):
        shown = {i['id']: i for i in self.list()}
        cirros = shown[PUBLIC]
        self.assertEqual(
            ('cirros', 'active', 'public', None, 'qcow2', 'bare', 1234,
             67108864, '2026-11-01T10:00:00Z', 'dirty=10', 'q35',
             '/v2/images/%s' % PUBLIC),
            tuple(cirros[k] for k in (
                'name', 'status', 'visibility', 'owner', 'disk_format',
                'container_format', 'size', 'virtual_size', 'created_at',
                'os_command_line', 'hw_machine_type', 'self')))
        # A stable rescue's property, as Glance shows it.
        self.assertEqual('virtio', cirros['hw_rescue_bus'])
        # A property never replaces a core field.
        self.assertEqual(1234, cirros['size'])
        # The store's file names are not Glance fields.
        self.assertNotIn('kernel', cirros)
        self.assertEqual(cirros, self.show(PUBLIC).get_json())
        # The fake names are still there, first, with their uuid5 ids.
        listed = self.list()
        self.assertEqual(('fake', images.image_id('fake')),
                         (listed[0]['name'], listed[0]['id']))
        self.assertEqual(200, self.show(images.image_id('fake')).status_code)

    def test_private_images_to_their_project_and_admins(self):
        self.assertEqual(['fake', 'cirros', 'secret'], self.names(ALICE))
        self.assertEqual(['fake', 'cirros', 'secret'], self.names(ADMIN))
        self.assertEqual(['fake', 'cirros'], self.names(BOB))
        self.assertEqual(200, self.show(PRIVATE, ALICE).status_code)
        self.assertEqual(200, self.show(PRIVATE, ADMIN).status_code)
        response = self.show(PRIVATE, BOB)
        self.assertEqual(404, response.status_code)
        self.assertIn('Image %s could not be found' % PRIVATE,
                      response.get_json()['itemNotFound']['message'])

    def test_filters(self):
        self.assertEqual(['cirros'], self.names(query='?name=cirros'))
        self.assertEqual([], self.names(query='?name=nothing'))
        self.assertEqual(['secret'],
                         self.names(query='?visibility=private'))
        self.assertEqual(['fake', 'cirros', 'secret'],
                         self.names(query='?visibility=all'))
        self.assertEqual(['fake', 'cirros', 'secret'],
                         self.names(query='?status=active'))
        self.assertEqual([], self.names(query='?status=queued'))
        self.assertEqual(['cirros', 'secret'], self.names(
            query='?id=in:%s,%s' % (PUBLIC, PRIVATE)))

    def test_half_built_and_missing_store(self):
        os.makedirs(os.path.join(self.store, '.building-x'))
        self.assertEqual(['fake', 'cirros', 'secret'], self.names())
        self.useFixture(nm_fixtures.Override(
            'store_path', os.path.join(self.store, 'nowhere'), 'image'))
        self.assertEqual(['fake'], self.names())
        self.assertEqual(404, self.show(PUBLIC).status_code)

    def test_unknown_and_path_like_ids(self):
        for ref in ('00000000-0000-4000-8000-000000000000', '..',
                    '%2e%2e%2fetc'):
            self.assertEqual(404, self.show(ref).status_code, ref)

    def test_shelved_records_stay_and_a_store_snapshot_replaces_one(self):
        flavor = nm_fixtures.flavor()
        server = db_api.instance_create({
            'display_name': 'vm', 'user_id': 'alice', 'project_id': 'p1',
            'vm_state': 'shelved_offloaded', 'task_state': None,
            'host': None, 'node': None, 'power_state': 4,
            'flavor': flavor, 'image_ref': PUBLIC})
        shelved_id = images.shelved_image_id(server['uuid'], None)
        listed = {i['name']: i for i in self.list()}
        self.assertEqual((shelved_id, 'private', 'p1', PUBLIC),
                         (listed['vm-shelved']['id'],
                          listed['vm-shelved']['visibility'],
                          listed['vm-shelved']['owner'],
                          listed['vm-shelved']['base_image_ref']))
        self.assertNotIn('vm-shelved', self.names(BOB))
        # The driver's snapshot under the record's id is listed once, as
        # the store has it.
        self.add(record(shelved_id, 'vm-shelved', '2026-11-03T10:00:00Z',
                        visibility='private', owner='p1', size=99,
                        properties={'image_type': 'snapshot'}))
        same = [i for i in self.list() if i['id'] == shelved_id]
        self.assertEqual([99], [i['size'] for i in same])
