"""Cross-cell resize on the QEMU driver (doc/cells.md "Cross-cell
resize", compute/cross_cell.py): the source guest's disk, powered off,
goes into the image store as Nova's snapshot-based resize uploads it to
Glance, and the destination (a compute of another cell) spawns from it
(QemuDriver.spawn: a whole copy, as unshelve from a shelve snapshot,
since the image goes at confirm or revert and no disk may be backed by
it).

The image store ([image] store_path) is where the two cells meet: every
compute of both must read the same one (one machine's directory, or a
shared mount across machines, as Nova's cross-cell resize needs Glance).
"""
import os

from nova_moves import exception
from nova_moves import image_store
from nova_moves.virt.qemu import guest as guest_mod


class MoveSnapshot:
    snapshots_for_move = True

    def snapshot_for_move(self, instance_uuid, migration_uuid):
        """The disk the move left here (powered off by the step) as a
        private image, its id derived from the migration: a retried step
        finds the image it made and returns it (the disk has not changed
        since: the guest stays off while marked)."""
        self.operate('snapshot_for_move')
        image_id = image_store.move_snapshot_id(migration_uuid)
        guest = self._guest(instance_uuid)
        with guest.lock:
            record = guest.load()
            if record is None or not os.path.exists(guest.disk):
                raise exception.GuestInvalidPower(
                    instance_uuid=instance_uuid, host=self.host, power=None,
                    operation='snapshot_for_move')
            if record.get('left_by') != migration_uuid or guest.running():
                # Only the copy this move powered off: a running disk
                # would be snapshotted mid-write.
                raise guest_mod.QemuFailed(
                    instance_uuid=instance_uuid, host=self.host,
                    reason='not the powered-off copy migration %s left: '
                           'no snapshot' % migration_uuid)
            if not self._has_image(image_id):
                self.images.snapshot(
                    'cross-cell-%s' % migration_uuid, guest.disk,
                    record['launch']['image_ref'], image_id=image_id,
                    properties={'cross_cell_migration': migration_uuid})
        return image_id

    def discard_move_snapshot(self, migration_uuid):
        self.images.discard(image_store.move_snapshot_id(migration_uuid))
