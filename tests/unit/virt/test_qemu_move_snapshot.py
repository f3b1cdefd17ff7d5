"""A cross-cell move on the QEMU driver (virt/qemu/move_snapshot.py):
the source's powered-off disk into the image store under the
migration's id, the destination's spawn from it (a whole copy: the
image goes at confirm or revert), and each end. Real qemu-img and a
real store in a temporary directory; no QEMU process (_start is
mocked). The real guests: tests/functional/test_cells_qemu.py."""
import json
import os
import subprocess
import uuid
from unittest import mock

import fixtures
import testtools

from nova_moves import exception
from nova_moves import image_store
from nova_moves.virt.qemu import driver as qemu_driver
from nova_moves.virt.qemu import guest as guest_mod
from tests.unit import fixtures as nm_fixtures
from tests.unit import test_image_store

MOVE = 'finish_snapshot_based_resize_at_dest'
SMALL = {'name': 'small', 'vcpus': 1, 'memory_mb': 128, 'root_gb': 0}
BIG = {'name': 'big', 'vcpus': 2, 'memory_mb': 256, 'root_gb': 1}


def _info(path):
    return json.loads(subprocess.run(
        ['qemu-img', 'info', '-U', '--output=json', path], check=True,
        capture_output=True, text=True).stdout)


@test_image_store.NEEDS_QEMU_IMG
class MoveSnapshotTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.f = self.useFixture(test_image_store.StoreFixture())
        for name, value, group in (
                ('state_path', self.f.tmp, None),
                ('instances_path', os.path.join(self.f.tmp, '{host}'),
                 'qemu')):
            self.useFixture(nm_fixtures.Override(name, value, group))
        self.start = self.useFixture(fixtures.MockPatchObject(
            qemu_driver.QemuDriver, '_start')).mock
        self.base = self.f.store.import_image(
            'base', self.f.kernel, self.f.initrd, disk=self.f.raw,
            cmdline='quiet')['id']
        self.source = qemu_driver.QemuDriver('src')
        self.dest = qemu_driver.QemuDriver('dst')
        self.uuid = str(uuid.uuid4())
        self.migration = str(uuid.uuid4())
        self.source.spawn(self.uuid, SMALL, image_ref=self.base,
                          power='shutdown')
        # The source step powers the guest off and marks it first.
        self.source.set_power(self.uuid, 'shutdown', 'prep',
                              left_by=self.migration)

    def test_snapshot_spawn_and_confirm(self):
        image_id = self.source.snapshot_for_move(self.uuid, self.migration)
        self.assertEqual(image_store.move_snapshot_id(self.migration),
                         image_id)
        image = self.f.store.get(image_id)
        self.assertEqual(('cross-cell-%s' % self.migration, 'private',
                          self.base, 'quiet'),
                         (image['name'], image['visibility'],
                          image['properties']['base_image_ref'],
                          image['cmdline']))
        # A retried step: the same image, not made again.
        with mock.patch.object(self.source.images, 'snapshot') as again:
            self.assertEqual(image_id, self.source.snapshot_for_move(
                self.uuid, self.migration))
        again.assert_not_called()

        self.dest.spawn(self.uuid, BIG, operation=MOVE, power='running',
                        arrived_by=self.migration, image_ref=image_id)
        guest = self.dest._guest(self.uuid)
        record = guest.load()
        # The server's image is still its base; its disk stands alone
        # (the snapshot goes at confirm), grown to the new flavor.
        self.assertEqual(({'image_ref': self.base, 'cmdline': 'quiet'},
                          self.migration, 2),
                         (record['launch'], record['arrived_by'],
                          record['flavor']['vcpus']))
        info = _info(guest.disk)
        self.assertNotIn('backing-filename', info)
        self.assertEqual(1024 ** 3, info['virtual-size'])
        self.assertTrue(os.path.exists(guest.path('kernel')))
        self.start.assert_called_once()

        # Confirm: the source copy and the snapshot go.
        self.assertTrue(self.source.destroy_left(self.uuid, self.migration))
        self.source.discard_move_snapshot(self.migration)
        self.assertFalse(self.source.has_guest(self.uuid))
        self.assertRaises(exception.ImageNotFound, self.f.store.get,
                          image_id)
        self.source.discard_move_snapshot(self.migration)  # quiet
        subprocess.run(['qemu-img', 'check', '-U', guest.disk], check=True,
                       capture_output=True)

    def test_revert_runs_the_kept_source_again(self):
        image_id = self.source.snapshot_for_move(self.uuid, self.migration)
        self.dest.spawn(self.uuid, BIG, operation=MOVE, power='shutdown',
                        arrived_by=self.migration, image_ref=image_id)
        self.assertTrue(self.dest.destroy_left(
            self.uuid, self.migration, mark='arrived_by'))
        self.assertFalse(self.dest.has_guest(self.uuid))
        disk = self.source._guest(self.uuid).disk
        before = _info(disk)
        self.source.spawn(self.uuid, SMALL, power='running',
                          operation='finish_revert_snapshot_based_resize_'
                                    'at_source')
        self.source.discard_move_snapshot(self.migration)
        # Its own disk (still on the base image), started, unmarked.
        self.assertEqual(before, _info(disk))
        record = self.source._guest(self.uuid).load()
        self.assertEqual((self.base, None),
                         (record['launch']['image_ref'], record['left_by']))
        self.start.assert_called_once()
        self.assertRaises(exception.ImageNotFound, self.f.store.get,
                          image_id)

    def test_refused_for_a_running_or_unmarked_guest(self):
        with mock.patch.object(guest_mod.Guest, 'running',
                               return_value=True):
            self.assertRaises(guest_mod.QemuFailed,
                              self.source.snapshot_for_move, self.uuid,
                              self.migration)
        self.assertRaises(guest_mod.QemuFailed,
                          self.source.snapshot_for_move, self.uuid,
                          str(uuid.uuid4()))
        self.assertRaises(exception.GuestInvalidPower,
                          self.source.snapshot_for_move, str(uuid.uuid4()),
                          self.migration)
        self.assertEqual([self.base],
                         [i['id'] for i in self.f.store.list()])

    def test_the_driver_says_it_snapshots(self):
        self.assertTrue(self.source.snapshots_for_move)
