"""The request specs of the API database (db/request_specs.py), in a
one-cell deployment (the API tables in the [database] database): written
with the instance mapping, gone with it, and their flavor following a
resize's confirm or revert (db/settle.py, every settle's start)."""
from unittest import mock

import sqlalchemy as sa
import testtools

from nova_moves.db import api as db_api
from nova_moves.db import mappings
from nova_moves.db import request_specs
from nova_moves import states
from tests.unit import fixtures as nm_fixtures

SMALL = {'id': 7, 'flavorid': 's', 'name': 'small', 'vcpus': 1,
         'memory_mb': 512, 'root_gb': 1, 'ephemeral_gb': 0, 'swap': 0,
         'rxtx_factor': 1.0, 'is_public': True}
BIG = dict(SMALL, id=8, flavorid='b', name='big', vcpus=2, memory_mb=1024)


def _spec(flavor=SMALL, image='img-1', zone='az1'):
    return request_specs.build(flavor, image, zone, 'p', 'u')


class RequestSpecsTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.Database())

    def test_build_keeps_what_the_show_renders(self):
        spec = _spec()
        self.assertEqual({'flavorid': 's', 'name': 'small', 'vcpus': 1,
                          'memory_mb': 512, 'root_gb': 1, 'ephemeral_gb': 0,
                          'swap': 0}, spec['flavor'])
        self.assertEqual(('img-1', 'az1', 'p', 'u'), (
            spec['image_id'], spec['availability_zone'], spec['project_id'],
            spec['user_id']))
        volume_backed = request_specs.build(SMALL, '', None, 'p', 'u')
        self.assertIsNone(volume_backed['image_id'])
        self.assertIsNone(volume_backed['availability_zone'])

    def test_written_with_the_mapping(self):
        self.assertTrue(mappings.instance_mapping_create(
            'i-1', None, 'p', 'u', spec=_spec()))
        self.assertEqual(_spec(), request_specs.get('i-1'))
        mappings.instance_mapping_for_boot('i-2', 'p', 'u', 'sqlite://',
                                           spec=_spec(zone=None))
        self.assertIsNone(request_specs.get('i-2')['availability_zone'])
        # Without a spec (map_instances, older callers): none.
        mappings.instance_mapping_create('i-3', None, 'p', 'u')
        self.assertIsNone(request_specs.get('i-3'))

    def test_one_spec_a_server(self):
        self.assertTrue(request_specs.create('i-1', _spec()))
        self.assertFalse(request_specs.create('i-1', _spec(BIG)))
        self.assertEqual('s', request_specs.get('i-1')['flavor']['flavorid'])

    def test_update(self):
        request_specs.create('i-1', _spec())
        self.assertTrue(request_specs.update('i-1', flavor=BIG))
        spec = request_specs.get('i-1')
        self.assertEqual(request_specs.flavor_of(BIG), spec['flavor'])
        self.assertEqual('img-1', spec['image_id'])
        self.assertFalse(request_specs.update('i-none', flavor=BIG))

    def test_keep_never_fails(self):
        with mock.patch.object(request_specs, 'update',
                               side_effect=sa.exc.OperationalError(
                                   'UPDATE', {}, Exception('no table'))):
            request_specs.keep('i-1', flavor=BIG)  # logged, not raised

    def test_gone_with_the_server(self):
        for uuid in ('i-1', 'i-2', 'i-3'):
            mappings.instance_mapping_create(uuid, None, 'p', 'u',
                                             spec=_spec())
        mappings.instance_mapping_queue_for_delete('i-1')
        self.assertIsNone(request_specs.get('i-1'))
        self.assertTrue(mappings.instance_mapping_get('i-1')[
            'queued_for_delete'])
        mappings.instance_mapping_delete('i-2')
        self.assertIsNone(request_specs.get('i-2'))
        # Un-queueing (not a delete) leaves a spec alone.
        mappings.instance_mapping_queue_for_delete('i-3', queued=False)
        self.assertIsNotNone(request_specs.get('i-3'))

    def test_gone_with_a_cell_deleted_with_its_mappings(self):
        cell = mappings.cell_create({'name': 'c', 'transport_url': 'fake://',
                                     'database_connection': 'sqlite://'})
        mappings.instance_mapping_create('i-1', cell['id'], 'p', 'u',
                                         spec=_spec())
        mappings.instance_mapping_create('i-2', None, 'p', 'u',
                                         spec=_spec())
        mappings.cell_delete(cell['uuid'], with_mappings=True)
        self.assertIsNone(request_specs.get('i-1'))
        self.assertIsNotNone(request_specs.get('i-2'))


class SettledFlavorTest(testtools.TestCase):
    """Every confirm and revert starts in db/settle.settle_start: the
    spec's flavor is the one the server keeps."""

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.Database())
        nm_fixtures.node('h1')
        nm_fixtures.node('h2')

    def _resized(self, old=SMALL, new=BIG):
        """A server in VERIFY_RESIZE from ``old`` to ``new``, with a spec
        of ``old`` (as its boot wrote it)."""
        uuid = db_api.instance_create({
            'display_name': 'vm', 'project_id': 'p', 'user_id': 'u',
            'host': 'h2', 'node': 'h2', 'flavor': new, 'old_flavor': old,
            'vm_state': states.RESIZED, 'power_state': 1})['uuid']
        mappings.instance_mapping_create(uuid, None, 'p', 'u',
                                         spec=_spec(old))
        db_api.migration_create({
            'instance_uuid': uuid, 'migration_type': states.RESIZE,
            'status': states.M_FINISHED, 'source_compute': 'h1',
            'source_node': 'h1', 'dest_compute': 'h2', 'dest_node': 'h2',
            'old_flavor_id': old['flavorid'],
            'new_flavor_id': new['flavorid']})
        return uuid

    def flavorid(self, uuid):
        return request_specs.get(uuid)['flavor']['flavorid']

    def test_confirm_writes_the_new_flavor(self):
        uuid = self._resized()
        db_api.settle_start('confirm_resize', instance_uuid=uuid)
        self.assertEqual('b', self.flavorid(uuid))

    def test_revert_keeps_the_old_flavor(self):
        uuid = self._resized()
        # A confirm given back (its cast failed) wrote the new one.
        migration, _ = db_api.settle_start('confirm_resize',
                                           instance_uuid=uuid)
        db_api.settle_abandon('confirm_resize', migration)
        self.assertEqual('b', self.flavorid(uuid))
        db_api.settle_start('revert_resize', instance_uuid=uuid)
        self.assertEqual('s', self.flavorid(uuid))

    def test_cold_migration_writes_nothing(self):
        uuid = self._resized(new=SMALL)
        with mock.patch.object(request_specs, 'keep') as keep:
            db_api.settle_start('confirm_resize', instance_uuid=uuid)
        keep.assert_not_called()

    def test_a_spec_that_cannot_be_written_does_not_stop_the_confirm(self):
        uuid = self._resized()
        with mock.patch.object(request_specs, 'update',
                               side_effect=sa.exc.OperationalError(
                                   'UPDATE', {}, Exception('no table'))):
            migration, _ = db_api.settle_start('confirm_resize',
                                               instance_uuid=uuid)
        self.assertEqual(states.M_CONFIRMING, db_api.migration_get(
            migration['uuid'])['status'])
        self.assertEqual('s', self.flavorid(uuid))
