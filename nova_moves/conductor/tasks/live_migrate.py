"""Live migration, conductor side: the pre-checks and the cast to the
source.

execute(): the source service must be up; the source allocation moves to
the migration's uuid; a destination is chosen (forced host, or the
scheduler, which claims it for the server) and checked by a call to the
destination, which calls the source; a failed check drops that host's
claim and tries the next one (``[DEFAULT] migrate_max_retries``, no retry
for a requested host). Then the migration is ``queued`` with its
destination and the source is told to start.

The same task serves both API paths: below 2.34 the API waits for it (a
failure is a 400), from 2.34 it runs after the 202 and a failure only
shows in the instance action's events."""
from oslo_log import log as logging
import oslo_messaging as messaging

from nova_moves.conductor.tasks import base
from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import faultinfo
from nova_moves import moves
from nova_moves.moves import live
from nova_moves.scheduler import hints as scheduler_hints
from nova_moves import states

CONF = conf.CONF
LOG = logging.getLogger(__name__)

# This task's row in the live migration's table.
STEP = 'conductor.live_migrate_instance'


def _guard(phase):
    return moves.guard_of(live, STEP, phase)
COMPUTE_BINARY = 'nova-moves-compute'


class LiveMigrationTask(base.TaskBase):

    def __init__(self, ctxt, instance_uuid, migration_uuid, host, force,
                 block_migration, db, scheduler, compute_rpcapi,
                 target_hosts=None, host_memory_used=None):
        super().__init__(ctxt, instance_uuid)
        self.target_hosts = target_hosts
        self.migration_uuid = migration_uuid
        self.requested_host = host
        self.force = bool(force and host)
        self.block_migration = block_migration
        self.db = db
        self.scheduler = scheduler
        self.compute_rpcapi = compute_rpcapi
        self.generation = None
        self.failed_checks = []
        # The checks' events when the computes send them back (compute
        # 1.6): recorded with the 'queued' step, one transaction.
        self.check_events = []
        # (host, server) -> memory its other servers take: sent with the
        # destination's check (compute 1.6), which then reads nothing.
        self.host_memory_used = host_memory_used

    # -- helpers --------------------------------------------------------------
    def _check_service_up(self, host, what):
        try:
            service = db_api.service_get_by_host_and_binary(host,
                                                            COMPUTE_BINARY)
        except exception.NotFound:
            service = None
        if service is None or not db_api.service_is_up(service):
            message = ('Compute service of %s is unavailable at this time '
                       '(%s host).' % (host, what))
            raise exception.Invalid(message, reason=message)
        return service

    def _check_destination(self, host):
        """Call the destination, which calls the source. Returns the
        migrate_data; raises MigrationPreCheckError when a check fails."""
        facts = {}
        if self.host_memory_used is not None:
            facts['facts'] = {'instance': self.instance,
                              'memory_mb_used': self.host_memory_used(
                                  host, self.instance_uuid)}
        try:
            data = self.compute_rpcapi.check_can_live_migrate_destination(
                self.ctxt, host, self.instance_uuid, self.block_migration,
                self.migration_uuid, **facts)
        except messaging.MessagingTimeout:
            message = 'Timeout while checking if we can live migrate to ' \
                      'host: %s' % host
            raise exception.MigrationPreCheckError(message, reason=message)
        data = dict(data or {})
        self.check_events.extend(data.pop('_events', None) or ())
        return data

    def _forced_destination(self, host):
        """2.30-2.67 force: no scheduler, copy the allocation to the
        host's root provider -- only possible for a single-root
        allocation (Nova spec "Remove force flag from live-migrate and
        evacuate")."""
        self._check_service_up(host, 'destination')
        if not db_api.allocation_is_single_root(self.migration_uuid):
            raise exception.NoValidHost(
                reason='Unable to move instance %s to host %s. The instance '
                       'has complex allocations (nested or sharing '
                       'providers) on the source host so a forced move is '
                       'not possible.' % (self.instance_uuid, host))
        resources = db_api.resources_from_flavor(self.instance['flavor'])
        candidate = db_api.root_only_candidate(resources, host)
        if candidate is None:
            raise exception.NoValidHost(
                reason='Unable to move instance %s to host %s. There is not '
                       'enough capacity on the host for the instance, or it '
                       'would need nested or sharing providers.'
                       % (self.instance_uuid, host))
        try:
            self.db.allocations_replace(
                self.ctxt, self.instance_uuid, candidate,
                consumer_generation=self.generation)
        except exception.AllocationFailed as exc:
            raise exception.NoValidHost(reason=exc.message)
        migrate_data = self._check_destination(host)
        return {'host': host, 'nodename': host}, migrate_data

    def _request_spec(self, ignore_hosts):
        return scheduler_hints.request_spec(
            self.instance, ignore_hosts, self.requested_host,
            target_hosts=self.target_hosts,
            consumer_generation=self.generation)

    def _scheduled_destination(self):
        ignore_hosts = [self.instance['host']]
        retries = CONF.migrate_max_retries
        while True:
            try:
                selection = self.scheduler.select_destinations(
                    self.ctxt, self._request_spec(ignore_hosts),
                    [self.instance_uuid], return_alternates=False)[0][0]
            except exception.NoValidHost as exc:
                if self.failed_checks:
                    raise exception.NoValidHost(
                        reason='%s Pre-checks failed on: %s' % (
                            exc.kwargs.get('reason', ''),
                            '; '.join(self.failed_checks)))
                raise
            host = selection['host']
            try:
                return selection, self._check_destination(host)
            except exception.Invalid as exc:
                # Drop the claim the scheduler made on the failed host
                # (the server holds nothing else: the source half is
                # the migration's).
                self.db.move_advance(
                    self.ctxt, self.migration_uuid, **_guard('start'),
                    allocations={'op': 'drop_dest', 'host': host})
                self.generation = self.db.consumer_generation_get(
                    self.ctxt, self.instance_uuid)
                self.failed_checks.append('%s: %s' % (host, exc.message))
                LOG.info('Live migration pre-check of %s failed on %s: %s',
                         self.instance_uuid, host, exc.message)
                if self.requested_host:
                    raise
                ignore_hosts.append(host)
                if retries != -1 and len(self.failed_checks) > retries:
                    raise exception.MaxRetriesExceeded(
                        reason='Exceeded max scheduling retries %d for '
                               'instance %s during live migration. Pre-'
                               'checks failed on: %s' % (
                                   retries, self.instance_uuid,
                                   '; '.join(self.failed_checks)))

    # -- the task -------------------------------------------------------------
    def execute(self):
        self.instance = self.db.instance_get(self.ctxt, self.instance_uuid)
        source = self.instance['host']
        if self.instance['task_state'] != states.MIGRATING:
            raise exception.UnexpectedTaskState(
                instance_uuid=self.instance_uuid, expected=states.MIGRATING,
                actual=self.instance['task_state'])
        if self.requested_host == source:
            message = ('Unable to migrate instance (%s) to current host '
                       '(%s).' % (self.instance_uuid, source))
            raise exception.Invalid(message, reason=message)
        self._check_service_up(source, 'source')
        self.db.move_advance(self.ctxt, self.migration_uuid,
                             **_guard('start'),
                             allocations={'op': 'park_source'})
        self.generation = self.db.consumer_generation_get(
            self.ctxt, self.instance_uuid)
        if self.force:
            selection, migrate_data = self._forced_destination(
                self.requested_host)
        else:
            selection, migrate_data = self._scheduled_destination()
        dest = selection['host']
        # The flavor: a chained source (compute 1.6) sizes its transfer
        # without reading the server.
        migrate_data = dict(migrate_data or {},
                            block_migration=self.block_migration,
                            flavor=self.instance['flavor'])
        self.db.move_advance(
            self.ctxt, self.migration_uuid, **_guard('end'),
            values={'dest_compute': dest, 'dest_node': selection['nodename'],
                    'dest_host': migrate_data.get('dest_ip')},
            events=self.check_events or None)
        LOG.info('Live migration of %s: %s -> %s', self.instance_uuid,
                 source, dest)
        self.compute_rpcapi.live_migration(
            self.ctxt, source, self.instance_uuid, dest,
            self.migration_uuid, migrate_data)

    def rollback(self, exc):
        """move_failed: back to before the request (the server's claim on
        any destination goes, the source allocation returns to it)."""
        try:
            self.db.move_failed(
                self.ctxt, self.migration_uuid,
                **moves.fail_guard(live, STEP),
                fault=faultinfo.from_exc(exc, CONF.host))
        except exception.MoveConflict as conflict:
            LOG.info('Live migration of %s settled elsewhere: %s',
                     self.instance_uuid, conflict)
