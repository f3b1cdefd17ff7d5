"""The hypervisor's part of a cross-cell resize (compute/cross_cell.py)
on the fake driver: the guest off and snapshotted on the source, spawned
from the snapshot on the destination (its history kept), each step
re-entrant by the migration's mark, confirm and revert removing only
the move's copies; a driver that cannot snapshot refuses before the
guest is touched."""
import os
from unittest import mock

import testtools

from nova_moves.compute import base
from nova_moves.compute import cross_cell
from nova_moves import exception
from nova_moves.virt import driver as virt_driver
from nova_moves.virt import fake
from tests.unit import fixtures as nm_fixtures

FLAVOR = {'name': 'small', 'vcpus': 1, 'memory_mb': 512}
BIG = {'name': 'medium', 'vcpus': 2, 'memory_mb': 1024}
UUID = '6a1b0f8e-1111-4c3d-9e2f-000000000001'
MIGRATION = '6a1b0f8e-2222-4c3d-9e2f-000000000002'


def _endpoint(driver):
    return cross_cell.CrossCellEndpoint(
        base.Deps(driver.host, driver, mock.Mock()))


class CrossCellStepsTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.FakeHosts())
        self.source = fake.FakeDriver('src')
        self.dest = fake.FakeDriver('dst')
        self.source.spawn(UUID, FLAVOR)
        self.at_source = _endpoint(self.source)
        self.at_dest = _endpoint(self.dest)

    def _there(self):
        self.at_dest.prep_snapshot_based_resize_at_dest(
            None, instance_uuid=UUID, migration_uuid=MIGRATION,
            flavor=BIG)
        image = self.at_source.prep_snapshot_based_resize_at_source(
            None, instance_uuid=UUID, migration_uuid=MIGRATION)
        for _ in range(2):  # a retried step spawns nothing more
            power = self.at_dest.finish_snapshot_based_resize_at_dest(
                None, instance_uuid=UUID, migration_uuid=MIGRATION,
                flavor=BIG, image_id=image)
        return image, power

    def test_there_and_confirm(self):
        image, power = self._there()
        self.assertEqual(1, power)  # running
        self.assertEqual(('shutdown', MIGRATION),
                         (self.source.guests()[UUID]['power'],
                          self.source.left_by(UUID)))
        guest = self.dest.guests()[UUID]
        self.assertEqual(('medium', MIGRATION), (guest['flavor'],
                                                 guest['arrived_by']))
        # The guest's history came with the snapshot.
        self.assertIn('booted on src', ' '.join(guest['console']))
        path = self.dest._snapshot_path(image)
        self.assertTrue(os.path.exists(path))
        self.at_source.confirm_snapshot_based_resize_at_source(
            None, instance_uuid=UUID, migration_uuid=MIGRATION)
        self.assertFalse(self.source.has_guest(UUID))
        self.assertFalse(os.path.exists(path))
        self.assertTrue(self.dest.has_guest(UUID))

    def test_there_and_revert(self):
        image, _ = self._there()
        self.at_dest.revert_snapshot_based_resize_at_dest(
            None, instance_uuid=UUID, migration_uuid=MIGRATION)
        self.assertFalse(self.dest.has_guest(UUID))
        power = self.at_source.finish_revert_snapshot_based_resize_at_source(
            None, instance_uuid=UUID, migration_uuid=MIGRATION,
            flavor=FLAVOR)
        self.assertEqual(1, power)
        self.assertEqual(('running', None),
                         (self.source.guests()[UUID]['power'],
                          self.source.left_by(UUID)))
        self.assertFalse(os.path.exists(self.dest._snapshot_path(image)))

    def test_a_stopped_server_stays_stopped(self):
        image = self.at_source.prep_snapshot_based_resize_at_source(
            None, instance_uuid=UUID, migration_uuid=MIGRATION)
        power = self.at_dest.finish_snapshot_based_resize_at_dest(
            None, instance_uuid=UUID, migration_uuid=MIGRATION, flavor=BIG,
            image_id=image, stopped=True)
        self.assertEqual(4, power)  # shutdown

    def test_dest_with_another_copy_refuses(self):
        self.dest.spawn(UUID, FLAVOR, arrived_by='another-move')
        self.assertRaises(
            exception.Invalid,
            self.at_dest.prep_snapshot_based_resize_at_dest, None,
            instance_uuid=UUID, migration_uuid=MIGRATION, flavor=BIG)

    def test_a_driver_without_snapshots_refuses_first(self):
        class NoSnapshots(fake.FakeDriver):
            snapshots_for_move = False
            snapshot_for_move = virt_driver.ComputeDriver.snapshot_for_move

        driver = NoSnapshots('old')
        driver.spawn(UUID, FLAVOR)
        exc = self.assertRaises(
            exception.FeatureNotSupported,
            _endpoint(driver).prep_snapshot_based_resize_at_source, None,
            instance_uuid=UUID, migration_uuid=MIGRATION)
        self.assertIn('NoSnapshots driver', str(exc))
        self.assertEqual('running', driver.guests()[UUID]['power'])

    def test_an_injected_failure_of_the_snapshot(self):
        self.source.set_fault_injection(['snapshot_for_move'])
        self.assertRaises(
            exception.HypervisorOperationFailed,
            self.at_source.prep_snapshot_based_resize_at_source, None,
            instance_uuid=UUID, migration_uuid=MIGRATION)
        # The undo's call: the guest runs again.
        self.at_source.finish_revert_snapshot_based_resize_at_source(
            None, instance_uuid=UUID, migration_uuid=MIGRATION,
            flavor=FLAVOR)
        self.assertEqual('running', self.source.guests()[UUID]['power'])
