"""Resize and cold migrate: the conductor half.

First run (cast from the API): create the migration (pre-migrating), park
the source allocation on the migration's uuid, pick and claim a
destination (scheduler with alternates, or a forced host), record it on
the migration and cast prep_resize to it.

Reschedule (called synchronously by a destination whose prep_resize
failed, with ``migration_uuid`` and the remaining ``alternates``): claim
the next alternate that still fits and cast prep_resize there.

rollback() puts everything back from what the database says: the
server's destination claim is dropped and the migration's allocation
handed back to the server (one atomic move), migration 'error', task_state
None on the old host, a fault. The exception still propagates, so the
conductor_migrate_server event is recorded as Error with its traceback.
"""
from oslo_log import log as logging

from nova_moves.conductor import cell_clients
from nova_moves.conductor.tasks import base
from nova_moves.conductor.tasks import cross_cell as cross_cell_task
from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import faultinfo
from nova_moves import moves
from nova_moves.moves import cold
from nova_moves.scheduler import hints as scheduler_hints
from nova_moves import states

CONF = conf.CONF
LOG = logging.getLogger(__name__)

# This task's row in the cold move's table.
STEP = 'conductor.migrate_server'


def _guard():
    return moves.guard_of(cold, STEP)


class MigrationTask(base.TaskBase):

    def __init__(self, ctxt, instance_uuid, flavor, host, force,
                 migration_uuid, alternates, db, scheduler, compute_rpcapi,
                 failed_host=None, resume=False, gate=None,
                 new_migration_uuid=None, target_hosts=None,
                 recording=None, cross_cell=False, cell_clients=None):
        super().__init__(ctxt, instance_uuid)
        self.flavor = flavor
        self.host = host
        self.force = force
        self.migration_uuid = migration_uuid
        self.alternates = list(alternates or [])
        # resume: a queued move got its slot (conductor/admission.py).
        self.resume = resume
        self.rescheduling = migration_uuid is not None and not resume
        self.gate = gate
        self.new_migration_uuid = new_migration_uuid
        self.target_hosts = target_hosts
        self.failed_host = failed_host
        self.db = db
        self.scheduler = scheduler
        self.compute_rpcapi = compute_rpcapi
        # The conductor's own event (instance_actions.Recording), written
        # in the step that records the destination.
        self.recording = recording
        self.migration = None
        # The API's compute:servers:resize:cross_cell allowed another
        # cell when this one has no host (conductor/tasks/cross_cell.py,
        # which undoes its own failure: ``undone``).
        self.cross_cell = cross_cell
        self.cell_clients = cell_clients
        self.undone = False

    # -- execute -----------------------------------------------------------
    def execute(self):
        if self.rescheduling:
            return self._reschedule()
        if self.resume:
            self.migration, instance, generation = db_api.move_resume_rows(
                self.migration_uuid, self.instance_uuid)
            return self._schedule(instance, generation)
        # One transaction: the server read, the migration row, old/new
        # flavor on the server, the source allocation parked on the
        # migration's uuid and the concurrency gate.
        ticket = (self.gate.ticket(self.ctxt, 'cold', {
            'flavor': self.flavor, 'host': self.host, 'force': self.force,
            'target_hosts': self.target_hosts})
            if self.gate is not None else None)
        try:
            self.migration, instance, generation, entered = \
                db_api.cold_move_start(self.instance_uuid, self._describe,
                                       gate=ticket)
        except exception.MoveConflict as exc:
            # A repeated request (the broker delivered it twice): the
            # first one's move is the server's; nothing to undo.
            LOG.info('Not starting a second move of %s: %s',
                     self.instance_uuid, exc)
            return None
        if entered is not None and not self.gate.entered(
                entered, self.migration['uuid'], self.instance_uuid):
            return None  # queued: run again with resume=True
        return self._schedule(instance, generation)

    def _describe(self, instance):
        """The new migration's values and flavors, from its server."""
        old_flavor = instance['flavor']
        new_flavor = self.flavor or old_flavor
        is_resize = new_flavor['flavorid'] != old_flavor['flavorid']
        values = dict({
            'instance_uuid': self.instance_uuid,
            'migration_type': states.RESIZE if is_resize else states.MIGRATION,
            'status': states.M_PRE_MIGRATING,
            'source_compute': instance['host'],
            'source_node': instance['node'],
            # Nova's instance_type_id: the flavor's internal id.
            'old_flavor_id': str(old_flavor['id']),
            'new_flavor_id': str(new_flavor['id']),
            'user_id': self.ctxt.user_id,
            'project_id': self.ctxt.project_id,
        }, **({'uuid': self.new_migration_uuid}
              if self.new_migration_uuid else {}))
        return values, old_flavor, new_flavor

    def _schedule(self, instance, generation):
        new_flavor = instance['new_flavor'] or instance['flavor']
        is_resize = self.migration['migration_type'] == states.RESIZE
        # The scheduler's claim states the server's consumer generation
        # as the move's start (or its resume) read it: if this move is
        # rolled back before it claims, the claim fails.
        self.generation = generation
        spec = self._request_spec(instance, new_flavor, is_resize)
        spec['consumer_generation'] = self.generation
        if self.force:
            selection, alternates = self._claim_forced_host(new_flavor), []
        else:
            try:
                selections = self.scheduler.select_destinations(
                    self.ctxt, spec, [self.instance_uuid],
                    return_alternates=True)[0]
            except exception.NoValidHost:
                if not (self.cross_cell and self.cell_clients is not None
                        and cell_clients.available()):
                    raise
                return self._cross_cell(new_flavor, spec)
            selection, alternates = selections[0], selections[1:]
        self._send_to(selection, new_flavor, spec, alternates)

    def _cross_cell(self, flavor, spec):
        task = cross_cell_task.CrossCellMigrationTask(
            self.ctxt, self.instance_uuid, self.migration, flavor, spec,
            self.db, self.cell_clients, event=self._event)
        try:
            return task.run()
        except Exception:
            # Once a cell was chosen the cross-cell task undid the move
            # in both cells; before that (no other cell had a host) it is
            # this task's undo, as before.
            self.undone = task.target_cell is not None
            raise

    def _request_spec(self, instance, flavor, is_resize):
        source = instance['host']
        same_host_ok = is_resize and CONF.allow_resize_to_same_host
        return scheduler_hints.request_spec(
            instance, [] if same_host_ok else [source], self.host,
            flavor=flavor, target_hosts=self.target_hosts)

    def _claim_forced_host(self, flavor):
        """force (Nova spec "Enable cold migration with target host"),
        with the limit of the spec "Remove force flag from live-migrate
        and evacuate": the server's allocation can only be copied when
        one root provider serves all of it."""
        if not db_api.allocation_is_single_root(self.migration['uuid']):
            raise exception.NoValidHost(
                reason='Unable to force-migrate %s: its allocation is not '
                       'on a single root resource provider (nested or '
                       'sharing providers).' % self.instance_uuid)
        resources = db_api.resources_from_flavor(flavor)
        allocation = db_api.root_only_candidate(resources, self.host)
        if allocation is None:
            raise exception.NoValidHost(
                reason='Forced host %s cannot fit %s: %s' % (
                    self.host, resources,
                    '; '.join(db_api.explain_unfit(resources, self.host))
                    or 'no room on its root provider'))
        try:
            self.db.allocations_replace(
                self.ctxt, self.instance_uuid, allocation,
                consumer_generation=self.generation)
        except exception.AllocationFailed as exc:
            raise exception.NoValidHost(reason=str(exc))
        return {'host': self.host, 'nodename': self.host,
                'compute_node_uuid': next(iter(allocation)),
                'allocation_request': allocation}

    def _send_to(self, selection, flavor, spec, alternates):
        """Record the destination on the migration, then cast: the
        destination reads it from the database."""
        self.migration = self.db.move_advance(
            self.ctxt, self.migration['uuid'], **_guard(),
            values={'dest_compute': selection['host'],
                    'dest_node': selection['nodename'],
                    'dest_host': selection['host']},
            **self._event())['migration']
        self._cast_prep(selection, flavor, spec, alternates)

    def _event(self):
        event = self.recording.take() if self.recording else None
        return {'event': event} if event else {}

    def _cast_prep(self, selection, flavor, spec, alternates):
        LOG.info('Migration %s of %s: destination %s (alternates %s)',
                 self.migration['uuid'], self.instance_uuid,
                 selection['host'], [a['host'] for a in alternates])
        self.compute_rpcapi.prep_resize(
            self.ctxt, selection['host'], self.instance_uuid,
            self.migration['uuid'], flavor, spec, alternates,
            source=self.migration['source_compute'])

    def _reschedule(self):
        self.migration = self.db.migration_get(self.ctxt, self.migration_uuid)
        instance = self.db.instance_get(self.ctxt, self.instance_uuid)
        flavor = instance['new_flavor'] or instance['flavor']
        spec = self._request_spec(
            instance, flavor,
            self.migration['migration_type'] == states.RESIZE)
        # Still the move the failed host was asked to prepare? A late or
        # duplicate reschedule request must not move the claim.
        guard = ({'dest_compute': self.failed_host} if self.failed_host
                 else None)
        while self.alternates:
            selection = self.alternates.pop(0)
            try:
                # The failed host's claim goes and the alternate's comes,
                # with the new destination, in one transaction.
                self.migration = self.db.move_advance(
                    self.ctxt, self.migration['uuid'], **_guard(),
                    expected_values=guard,
                    values={'dest_compute': selection['host'],
                            'dest_node': selection['nodename'],
                            'dest_host': selection['host']},
                    allocations={'op': 'claim', 'allocations':
                                 selection['allocation_request']}
                )['migration']
            except exception.AllocationFailed as exc:
                LOG.info('Alternate %s no longer fits %s: %s',
                         selection['host'], self.instance_uuid, exc)
                continue
            return self._cast_prep(selection, flavor, spec, self.alternates)
        raise exception.MaxRetriesExceeded(
            reason='No alternate host left to resize or migrate %s to.'
                   % self.instance_uuid)

    # -- rollback ----------------------------------------------------------
    def rollback(self, exc):
        """move_failed: the one undo (see db/transitions.py)."""
        if isinstance(exc, exception.MoveConflict) or self.undone:
            # A stale reschedule request, or a cross-cell move that
            # undid itself: nothing of ours to undo.
            return
        fault = faultinfo.from_exc(exc, CONF.host)
        try:
            if self.migration is not None:
                self.db.move_failed(
                    self.ctxt, self.migration['uuid'],
                    **moves.fail_guard(cold, STEP), fault=fault,
                    expected_values=({'dest_compute': self.failed_host}
                                     if self.failed_host else None))
            else:
                self.db.move_failed(
                    self.ctxt, instance_uuid=self.instance_uuid,
                    **moves.claim_fail_guard(cold, STEP), fault=fault)
        except exception.MoveConflict as conflict:
            LOG.info('Migration of %s settled elsewhere: %s',
                     self.instance_uuid, conflict)
