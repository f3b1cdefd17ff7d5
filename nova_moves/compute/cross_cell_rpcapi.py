"""The conductor's client of the cross-cell resize's compute steps
(compute RPC 1.12, compute/cross_cell.py). Each is a call: the
conductor writes the step's transition once the hypervisor's part is
done, and a host that does not answer within rpc_response_timeout fails
the step (the flow is undone). Build one inside cells.target(cell) to
reach that cell's computes (rpc.get_transport is per cell)."""
import oslo_messaging as messaging

from nova_moves.compute import rpcapi as compute_rpcapi
from nova_moves import conf
from nova_moves import rpc

VERSION = '1.12'


class CrossCellComputeAPI:

    def __init__(self):
        self.client = rpc.get_client(
            messaging.Target(topic=compute_rpcapi.TOPIC, version='1.0'),
            version_cap=conf.CONF.upgrade_levels.compute,
            calls_version=compute_rpcapi.ComputeAPI.CALLS_VERSION)

    def move_step_status(self, ctxt, host, migration_uuid, timeout=5):
        """The sweep's question (compute 1.3): does ``host`` still run a
        step of the move? True / False, None when it does not answer."""
        try:
            return self.client.prepare(
                server=host, version='1.3', timeout=timeout).call(
                    ctxt, 'move_step_status', migration_uuid=migration_uuid)
        except messaging.MessagingTimeout:
            return None

    def _call(self, ctxt, host, method, **kwargs):
        return self.client.prepare(server=host, version=VERSION).call(
            ctxt, method, **kwargs)

    def prep_snapshot_based_resize_at_dest(self, ctxt, host, instance_uuid,
                                           migration_uuid, flavor):
        return self._call(ctxt, host, 'prep_snapshot_based_resize_at_dest',
                          instance_uuid=instance_uuid,
                          migration_uuid=migration_uuid, flavor=flavor)

    def prep_snapshot_based_resize_at_source(self, ctxt, host, instance_uuid,
                                             migration_uuid):
        return self._call(ctxt, host, 'prep_snapshot_based_resize_at_source',
                          instance_uuid=instance_uuid,
                          migration_uuid=migration_uuid)

    def finish_snapshot_based_resize_at_dest(self, ctxt, host, instance_uuid,
                                             migration_uuid, flavor,
                                             image_id, stopped):
        return self._call(ctxt, host, 'finish_snapshot_based_resize_at_dest',
                          instance_uuid=instance_uuid,
                          migration_uuid=migration_uuid, flavor=flavor,
                          image_id=image_id, stopped=stopped)

    def confirm_snapshot_based_resize_at_source(self, ctxt, host,
                                                instance_uuid, migration_uuid):
        return self._call(ctxt, host,
                          'confirm_snapshot_based_resize_at_source',
                          instance_uuid=instance_uuid,
                          migration_uuid=migration_uuid)

    def revert_snapshot_based_resize_at_dest(self, ctxt, host, instance_uuid,
                                             migration_uuid):
        return self._call(ctxt, host, 'revert_snapshot_based_resize_at_dest',
                          instance_uuid=instance_uuid,
                          migration_uuid=migration_uuid)

    def finish_revert_snapshot_based_resize_at_source(
            self, ctxt, host, instance_uuid, migration_uuid, flavor,
            stopped):
        return self._call(ctxt, host,
                          'finish_revert_snapshot_based_resize_at_source',
                          instance_uuid=instance_uuid,
                          migration_uuid=migration_uuid, flavor=flavor,
                          stopped=stopped)
