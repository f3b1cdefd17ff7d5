"""Unshelve of a SHELVED_OFFLOADED server: a move onto a host the
scheduler chooses (or checks, when the request named one at 2.91).

execute(): select_destinations (the filters, the requested zone and
host, and the allocation claim, with the consumer generation so a claim
racing a delete fails), then the server's host and node are written
under its task_state (unshelving) before the compute is cast: the
compute spawns the guest and sets it ACTIVE.
rollback(): nothing placed it: the claim (if any) is dropped, a fault
says why and the server is SHELVED_OFFLOADED again with no host and no
task_state -- only while the task_state is still this unshelve's.
"""
from oslo_log import log as logging

from nova_moves.conductor.tasks import base
from nova_moves import exception
from nova_moves.moves import lifecycle as lc_table
from nova_moves.scheduler import hints as scheduler_hints

LOG = logging.getLogger(__name__)
# Its row of the lifecycle table (nova_moves/moves/lifecycle.py).
_ROW = lc_table.row('unshelve')


class UnshelveTask(base.TaskBase):

    def __init__(self, ctxt, instance_uuid, host, db, scheduler,
                 compute_rpcapi):
        super().__init__(ctxt, instance_uuid)
        self.host = host
        self.db = db
        self.scheduler = scheduler
        self.compute_rpcapi = compute_rpcapi
        self.claimed = False

    def _spec(self, instance):
        return scheduler_hints.request_spec(
            instance, (), self.host,
            consumer_generation=self.db.consumer_generation_get(
                self.ctxt, self.instance_uuid))

    def execute(self):
        instance = self.db.instance_get(self.ctxt, self.instance_uuid)
        if instance['task_state'] != _ROW.task or \
                instance['vm_state'] not in lc_table.UNSHELVE_PLACES:
            # A duplicate or late request: not ours to run or undo.
            raise exception.UnexpectedTaskState(
                instance_uuid=self.instance_uuid,
                expected=[_ROW.task],
                actual=instance['task_state'])
        selection = self.scheduler.select_destinations(
            self.ctxt, self._spec(instance), [self.instance_uuid],
            return_alternates=False)[0][0]
        self.claimed = True
        self.db.instance_update(
            self.ctxt, self.instance_uuid,
            {'host': selection['host'], 'node': selection['nodename']},
            expected={'expected_task_state': [_ROW.task],
                      'expected_vm_state': list(lc_table.UNSHELVE_PLACES)})
        LOG.info('Unshelving %s on %s', self.instance_uuid,
                 selection['host'])
        self.compute_rpcapi.unshelve_instance(
            self.ctxt, selection['host'], self.instance_uuid)

    def rollback(self, exc):
        if isinstance(exc, exception.UnexpectedTaskState) and \
                not self.claimed:
            return
        if self.claimed:
            self.db.allocations_delete(self.ctxt, self.instance_uuid)
        self.db.instance_fault_create(
            self.ctxt, self.instance_uuid, getattr(exc, 'code', 500),
            str(exc) or type(exc).__name__)
        self.db.instance_update(
            self.ctxt, self.instance_uuid, dict(lc_table.UNSHELVE_UNDO),
            expected={'expected_task_state': [_ROW.task]})
