"""Evacuate: rebuild a server of a failed host somewhere else.

The source allocation is handed to the migration first (the "source
half" the old compute removes when it comes back), then the destination
is claimed for the server: by the scheduler with the source excluded and
no alternates, or, for a forced host (2.29-2.67), by copying the flavor
onto that host's root provider, which seed 004 only allows when the
server's allocation is a single root provider. The destination compute
gets rebuild_instance(recreate=True) once all of that is written down.
"""
from oslo_log import log as logging

from nova_moves.conductor.tasks import base
from nova_moves.db import api as db_api
from nova_moves import exception

LOG = logging.getLogger(__name__)


class EvacuateTask(base.TaskBase):

    def __init__(self, ctxt, instance_uuid, migration_uuid, host, force,
                 stop_after, db, scheduler, compute_rpcapi):
        super().__init__(ctxt, instance_uuid)
        self.migration_uuid = migration_uuid
        self.host = host
        self.force = bool(force and host)
        self.stop_after = stop_after
        self.db = db
        self.scheduler = scheduler
        self.compute_rpcapi = compute_rpcapi
        self.source_moved = False

    def execute(self):
        instance = self.db.instance_get(self.ctxt, self.instance_uuid)
        migration = self.db.migration_get(self.ctxt, self.migration_uuid)
        source = migration['source_compute']
        self.db.allocations_move(self.ctxt, self.instance_uuid,
                                 self.migration_uuid)
        self.source_moved = True
        self.db.migration_update(self.ctxt, migration['id'],
                                 {'status': 'pre-migrating'},
                                 expected_status=['accepted'])
        if self.force:
            dest, node, allocations = self._claim_forced_host(instance)
        else:
            dest, node, allocations = self._schedule(instance, source)
        self.db.migration_update(self.ctxt, migration['id'],
                                 {'dest_compute': dest, 'dest_node': node,
                                  'dest_host': dest})
        LOG.info('Evacuating %s from %s to %s', self.instance_uuid, source,
                 dest)
        self.compute_rpcapi.rebuild_instance(
            self.ctxt, dest, self.instance_uuid, self.migration_uuid,
            allocations, recreate=True, stop_after=self.stop_after)

    def _claim_forced_host(self, instance):
        """Seed 004: a forced host skips the scheduler, so the allocation
        can only be copied when it is one root provider on both sides."""
        resources = db_api.resources_from_flavor(instance['flavor'])
        if not db_api.allocation_is_single_root(self.migration_uuid):
            raise exception.NoValidHost(
                reason='Unable to force evacuate %s to %s: the allocation '
                       'is not a single root provider (nested or sharing '
                       'providers); evacuate without force instead.'
                       % (self.instance_uuid, self.host))
        candidate = db_api.root_only_candidate(resources, self.host)
        if candidate is None:
            raise exception.NoValidHost(
                reason='Unable to force evacuate %s to %s: its root '
                       'provider cannot hold %s alone.'
                       % (self.instance_uuid, self.host, resources))
        try:
            self.db.allocations_replace(self.ctxt, self.instance_uuid,
                                        candidate)
        except exception.AllocationFailed as exc:
            raise exception.NoValidHost(reason=str(exc))
        return self.host, self.host, candidate

    def _schedule(self, instance, source):
        spec = {'instance_uuid': self.instance_uuid,
                'flavor': instance['flavor'],
                'availability_zone': instance.get('requested_az'),
                'project_id': instance['project_id'],
                'user_id': instance['user_id'],
                'ignore_hosts': [source],
                'requested_destination':
                    {'host': self.host} if self.host else None}
        selection = self.scheduler.select_destinations(
            self.ctxt, spec, [self.instance_uuid],
            return_alternates=False)[0][0]
        return (selection['host'], selection['nodename'],
                selection['allocation_request'])

    def rollback(self, exc):
        """Put everything back on the (dead) source and show the server in
        ERROR, as Nova does when an evacuation cannot be scheduled."""
        if self.source_moved:
            self.db.allocations_delete(self.ctxt, self.instance_uuid)
            self.db.allocations_move(self.ctxt, self.migration_uuid,
                                     self.instance_uuid)
        try:
            self.db.migration_update(self.ctxt, self.migration_uuid,
                                     {'status': 'error'})
        except exception.NovaMovesException:
            LOG.exception('Could not mark migration %s error',
                          self.migration_uuid)
        # The fault before the state: whoever sees ERROR sees why.
        self.db.instance_fault_create(
            self.ctxt, self.instance_uuid, getattr(exc, 'code', 500),
            str(exc) or type(exc).__name__)
        self.db.instance_update(self.ctxt, self.instance_uuid,
                                {'vm_state': 'error', 'task_state': None})
