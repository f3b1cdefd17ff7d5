"""Boot: pick a host (or the next alternate after a failed spawn), claim
it, and cast the build to that compute.

A boot's claim states the server's consumer generation, as a move's does:
a failed boot's rollback and a delete both move that generation, so a
claim that arrives late (a scheduler that was paused or slow past the
conductor's timeout) is refused instead of leaking an allocation."""
from oslo_log import log as logging

from nova_moves.conductor.tasks import base
from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import faultinfo
from nova_moves.moves import lifecycle as lc_table
from nova_moves import states

CONF = conf.CONF
LOG = logging.getLogger(__name__)
# The task_states a boot has before its compute reports ACTIVE.
BUILDING = (states.SCHEDULING, states.SPAWNING)
# The boot's row of the lifecycle table (nova_moves/moves/lifecycle.py):
# the placed server's task_state, claimed from scheduling.
_ROW = lc_table.row('create')


class BuildAborted(exception.NovaMovesException):
    msg_fmt = 'Build of %(uuid)s stopped: the server was deleted.'


class BuildTask(base.TaskBase):

    def __init__(self, ctxt, instance_uuid, request_spec, db, scheduler,
                 compute_rpcapi):
        super().__init__(ctxt, instance_uuid)
        self.request_spec = request_spec
        self.db = db
        self.scheduler = scheduler
        self.compute_rpcapi = compute_rpcapi

    def _claim_alternate(self, alternates, generation):
        """Reschedule: claim the first alternate that still fits."""
        while alternates:
            selection = alternates.pop(0)
            try:
                self.db.allocations_replace(
                    self.ctxt, self.instance_uuid,
                    selection['allocation_request'],
                    consumer_generation=generation)
                return selection
            except exception.ConsumerGenerationConflict:
                raise
            except exception.AllocationFailed as exc:
                LOG.info('Alternate %s no longer fits %s: %s',
                         selection['host'], self.instance_uuid, exc)
        raise exception.MaxRetriesExceeded(
            reason='No alternate host left for %s.' % self.instance_uuid)

    def _generation(self):
        """The generation the claim states, read BEFORE the server is
        checked: a delete after the check moves it (the claim fails), a
        delete before it is seen here."""
        generation = db_api.consumer_ensure(self.instance_uuid)
        try:
            instance = self.db.instance_get(self.ctxt, self.instance_uuid)
        except exception.InstanceNotFound:
            raise BuildAborted(uuid=self.instance_uuid)
        if instance['task_state'] != states.SCHEDULING:
            raise BuildAborted(uuid=self.instance_uuid)
        return generation

    def execute(self):
        generation = self._generation()
        alternates = self.request_spec.pop('alternates', None)
        if alternates is not None:
            selection = self._claim_alternate(alternates, generation)
        else:
            spec = dict(self.request_spec, consumer_generation=generation)
            selections = self.scheduler.select_destinations(
                self.ctxt, spec, [self.instance_uuid],
                return_alternates=True)[0]
            selection, alternates = selections[0], selections[1:]
        self.db.instance_update(
            self.ctxt, self.instance_uuid,
            {'host': selection['host'], 'node': selection['nodename'],
             'task_state': _ROW.task},
            expected={'expected_task_state': list(_ROW.takes_over)})
        self.compute_rpcapi.build_and_run_instance(
            self.ctxt, selection['host'], self.instance_uuid,
            self.request_spec, alternates)

    def _deleted(self):
        """True when the server is gone or being deleted: the delete
        owns it now, and there is nothing to mark ERROR."""
        try:
            instance = self.db.instance_get(self.ctxt, self.instance_uuid)
        except exception.InstanceNotFound:
            return True
        return instance['task_state'] not in BUILDING

    def rollback(self, exc):
        # Retire the generation: a claim still on its way is refused.
        db_api.allocations_delete(self.instance_uuid, retire=True)
        if isinstance(exc, BuildAborted) or self._deleted():
            LOG.info('Build of %s stopped: the server was deleted',
                     self.instance_uuid)
            return
        # The fault first: whoever sees ERROR must also see why.
        fault = faultinfo.from_exc(exc, CONF.host)
        self.db.instance_fault_create(
            self.ctxt, self.instance_uuid, fault['code'], fault['message'],
            details=fault['details'], host=fault['host'])
        try:
            # A boot that failed is on no host (as Nova leaves it).
            self.db.instance_update(
                self.ctxt, self.instance_uuid,
                {'vm_state': states.ERROR, 'task_state': None,
                 'host': None, 'node': None},
                expected={'expected_task_state': list(BUILDING)})
        except (exception.InstanceNotFound, exception.UnexpectedTaskState):
            LOG.info('Build of %s: deleted during its rollback',
                     self.instance_uuid)
