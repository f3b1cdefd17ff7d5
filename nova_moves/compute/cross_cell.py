"""The compute side of a cross-cell resize (nova_moves/moves/cross_cell.py,
doc/cells.md "Cross-cell resize"): the hypervisor's part of each step,
called (RPC calls, compute 1.12) by the conductor that runs the flow
and writes each step's guarded transition.

These handlers read and write no database row: the server's rows are
in two cells during the move and a compute talks only to its own
cell's conductor, so the conductor that has both cells does the
writing (a deviation from Nova, whose computes save the instance in
their cell). Each is re-entrant, keyed by the migration's mark on the
guest (left_by on the source, arrived_by on the destination), so a
retried call changes nothing more.
"""
import oslo_messaging as messaging

from nova_moves.compute import base
from nova_moves.compute import inflight
from nova_moves.compute import rpcapi as compute_rpcapi
from nova_moves import exception


def _power(vm_state_stopped):
    return 'shutdown' if vm_state_stopped else 'running'


class CrossCellEndpoint(base.Steps):
    target = messaging.Target(version=compute_rpcapi.ComputeAPI.VERSION)

    @inflight.tracked
    def prep_snapshot_based_resize_at_dest(self, ctxt, instance_uuid,
                                           migration_uuid, flavor):
        """The destination can take the server: no other copy of it is
        here (the claim itself is in this cell's placement already)."""
        mark = self.driver.left_by(instance_uuid, 'arrived_by')
        if mark is not None and mark != migration_uuid:
            raise exception.Invalid(
                reason='%s already has a guest of server %s'
                       % (self.host, instance_uuid))
        return {'host': self.host, 'node': self.host}

    @inflight.tracked
    def prep_snapshot_based_resize_at_source(self, ctxt, instance_uuid,
                                             migration_uuid):
        """Power the guest off (kept, marked as the move's old copy, for
        a revert) and snapshot it; the image's id."""
        # The refusal of a driver that cannot snapshot comes before
        # the guest is touched.
        if not self.driver.snapshots_for_move:
            self.driver.snapshot_for_move(instance_uuid, migration_uuid)
        self.driver.set_power(instance_uuid, 'shutdown',
                              'prep_snapshot_based_resize_at_source',
                              left_by=migration_uuid)
        return self.driver.snapshot_for_move(instance_uuid,
                                             migration_uuid)

    @inflight.tracked
    def finish_snapshot_based_resize_at_dest(self, ctxt, instance_uuid,
                                             migration_uuid, flavor,
                                             image_id, stopped=False):
        """Spawn the server here from the snapshot; its power state."""
        if self.driver.left_by(instance_uuid,
                               'arrived_by') != migration_uuid:
            self.driver.spawn(
                instance_uuid, flavor,
                operation='finish_snapshot_based_resize_at_dest',
                power=_power(stopped), arrived_by=migration_uuid,
                image_ref=image_id)
        return self.driver.power_state(instance_uuid)

    @inflight.tracked
    def confirm_snapshot_based_resize_at_source(self, ctxt, instance_uuid,
                                                migration_uuid):
        """The old copy goes (only the one this move left), and the
        snapshot."""
        self.driver.destroy_left(
            instance_uuid, migration_uuid,
            operation='confirm_snapshot_based_resize_at_source')
        self.driver.discard_move_snapshot(migration_uuid)

    @inflight.tracked
    def revert_snapshot_based_resize_at_dest(self, ctxt, instance_uuid,
                                             migration_uuid):
        """The copy spawned for the move goes (only that one)."""
        self.driver.destroy_left(
            instance_uuid, migration_uuid,
            operation='revert_snapshot_based_resize_at_dest',
            mark='arrived_by')

    @inflight.tracked
    def finish_revert_snapshot_based_resize_at_source(
            self, ctxt, instance_uuid, migration_uuid, flavor,
            stopped=False):
        """The old copy runs again from its kept disk (stopped when the
        server was); the snapshot goes. Also the undo of a move that
        failed after the guest was powered off."""
        if self.driver.has_guest(instance_uuid):
            self.driver.spawn(
                instance_uuid, flavor,
                operation='finish_revert_snapshot_based_resize_at_source',
                power=_power(stopped))
        self.driver.discard_move_snapshot(migration_uuid)
        return self.driver.power_state(instance_uuid)
