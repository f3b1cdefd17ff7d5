"""Evacuate: rebuild a server of a failed host somewhere else.

The source allocation is handed to the migration first (the "source
half" the old compute removes when it comes back), then the destination
is claimed for the server: by the scheduler with the source excluded and
no alternates, or, for a forced host (2.29-2.67), by copying the flavor
onto that host's root provider, which Nova's spec "Remove force flag
from live-migrate and evacuate" only allows when the server's allocation
is a single root provider. The destination compute
gets rebuild_instance(recreate=True) once all of that is written down.
"""
from oslo_log import log as logging

from nova_moves.conductor.tasks import base
from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import faultinfo
from nova_moves import moves
from nova_moves.moves import evacuate
from nova_moves.scheduler import hints as scheduler_hints

CONF = conf.CONF
LOG = logging.getLogger(__name__)

# This task's row in the evacuation's table.
STEP = 'conductor.rebuild_instance'


def _guard(phase):
    return moves.guard_of(evacuate, STEP, phase)


class EvacuateTask(base.TaskBase):

    def __init__(self, ctxt, instance_uuid, migration_uuid, host, force,
                 stop_after, db, scheduler, compute_rpcapi,
                 target_hosts=None):
        super().__init__(ctxt, instance_uuid)
        self.target_hosts = target_hosts
        self.migration_uuid = migration_uuid
        self.host = host
        self.force = bool(force and host)
        self.stop_after = stop_after
        self.db = db
        self.scheduler = scheduler
        self.compute_rpcapi = compute_rpcapi
        self.generation = None

    def execute(self):
        instance = self.db.instance_get(self.ctxt, self.instance_uuid)
        migration = self.db.migration_get(self.ctxt, self.migration_uuid)
        source = migration['source_compute']
        # The source half goes to the migration with the step: a late or
        # duplicate request finds the migration moved on and does nothing.
        self.db.move_advance(
            self.ctxt, self.migration_uuid, **_guard('start'),
            allocations={'op': 'park_source'})
        self.generation = self.db.consumer_generation_get(
            self.ctxt, self.instance_uuid)
        if self.force:
            dest, node, allocations = self._claim_forced_host(instance)
        else:
            dest, node, allocations = self._schedule(instance, source)
        self.db.move_advance(
            self.ctxt, self.migration_uuid, **_guard('end'),
            values={'dest_compute': dest, 'dest_node': node,
                    'dest_host': dest})
        LOG.info('Evacuating %s from %s to %s', self.instance_uuid, source,
                 dest)
        self.compute_rpcapi.rebuild_instance(
            self.ctxt, dest, self.instance_uuid, self.migration_uuid,
            allocations, recreate=True, stop_after=self.stop_after)

    def _claim_forced_host(self, instance):
        """A forced host skips the scheduler, so the allocation can only
        be copied when it is one root provider on both sides (Nova spec
        "Remove force flag from live-migrate and evacuate")."""
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
            self.db.allocations_replace(
                self.ctxt, self.instance_uuid, candidate,
                consumer_generation=self.generation)
        except exception.AllocationFailed as exc:
            raise exception.NoValidHost(reason=str(exc))
        return self.host, self.host, candidate

    def _schedule(self, instance, source):
        spec = scheduler_hints.request_spec(
            instance, [source], self.host, target_hosts=self.target_hosts,
            consumer_generation=self.generation)
        selection = self.scheduler.select_destinations(
            self.ctxt, spec, [self.instance_uuid],
            return_alternates=False)[0][0]
        return (selection['host'], selection['nodename'],
                selection['allocation_request'])

    def rollback(self, exc):
        """move_failed: everything back on the (dead) source, the server
        in ERROR, as Nova does when an evacuation cannot be scheduled."""
        if isinstance(exc, exception.MoveConflict):
            return  # a stale request: the move is not ours to undo
        try:
            self.db.move_failed(
                self.ctxt, self.migration_uuid,
                **moves.fail_guard(evacuate, STEP),
                fault=faultinfo.from_exc(exc, CONF.host))
        except exception.MoveConflict as conflict:
            LOG.info('Evacuation of %s settled elsewhere: %s',
                     self.instance_uuid, conflict)
