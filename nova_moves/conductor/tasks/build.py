"""Boot: pick a host (or the next alternate after a failed spawn), claim
it, and cast the build to that compute."""
from oslo_log import log as logging

from nova_moves.conductor.tasks import base
from nova_moves import exception
from nova_moves import states

LOG = logging.getLogger(__name__)


class BuildTask(base.TaskBase):

    def __init__(self, ctxt, instance_uuid, request_spec, db, scheduler,
                 compute_rpcapi):
        super().__init__(ctxt, instance_uuid)
        self.request_spec = request_spec
        self.db = db
        self.scheduler = scheduler
        self.compute_rpcapi = compute_rpcapi

    def _claim_alternate(self, alternates):
        """Reschedule: claim the first alternate that still fits."""
        while alternates:
            selection = alternates.pop(0)
            try:
                self.db.allocations_replace(self.ctxt, self.instance_uuid,
                                            selection['allocation_request'])
                return selection
            except exception.AllocationFailed as exc:
                LOG.info('Alternate %s no longer fits %s: %s',
                         selection['host'], self.instance_uuid, exc)
        raise exception.MaxRetriesExceeded(
            reason='No alternate host left for %s.' % self.instance_uuid)

    def execute(self):
        alternates = self.request_spec.pop('alternates', None)
        if alternates is not None:
            selection = self._claim_alternate(alternates)
        else:
            selections = self.scheduler.select_destinations(
                self.ctxt, self.request_spec, [self.instance_uuid],
                return_alternates=True)[0]
            selection, alternates = selections[0], selections[1:]
        self.db.instance_update(
            self.ctxt, self.instance_uuid,
            {'host': selection['host'], 'node': selection['nodename'],
             'task_state': states.SPAWNING},
            expected={'expected_task_state': [states.SCHEDULING]})
        self.compute_rpcapi.build_and_run_instance(
            self.ctxt, selection['host'], self.instance_uuid,
            self.request_spec, alternates)

    def rollback(self, exc):
        self.db.allocations_delete(self.ctxt, self.instance_uuid)
        # The fault first: whoever sees ERROR must also see why.
        self.db.instance_fault_create(
            self.ctxt, self.instance_uuid, getattr(exc, 'code', 500),
            str(exc) or type(exc).__name__)
        self.db.instance_update(self.ctxt, self.instance_uuid,
                                {'vm_state': states.ERROR, 'task_state': None})
