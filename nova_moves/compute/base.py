"""What every endpoint of one compute host is given, and the guarded
writes they all make through the conductor (computes never open the
database).

Each move kind is an endpoint class of its own (compute/resize.py,
live_migration.py, evacuate.py, lifecycle.py, shelve.py, console.py and
the host's own in manager.py); ``ComputeManager.endpoints()`` hands them to
oslo.messaging, which dispatches a message to the first endpoint that
has the method's name and a compatible ``target`` version. Public
methods are the RPC surface; helpers start with ``_``, which
oslo.messaging never dispatches."""
from oslo_log import log as logging

from nova_moves.compute import inflight
from nova_moves import exception
from nova_moves import faultinfo
from nova_moves import notifications

LOG = logging.getLogger(__name__)


class Deps:
    """The collaborators of one compute host, passed to each endpoint
    explicitly: the host's name, its hypervisor, the conductor (every
    read and write), the other computes, the conductor's task API, the
    notifier, and the move steps running here (shared, so the sweep's
    move_step_status sees every kind's)."""

    def __init__(self, host, driver, conductor, compute_rpcapi=None,
                 compute_task_api=None, notifier=notifications.OFF,
                 in_flight=None):
        self.host = host
        self.driver = driver
        self.conductor = conductor
        self.compute_rpcapi = compute_rpcapi
        self.compute_task_api = compute_task_api
        self.notifier = notifier
        self.in_flight = in_flight if in_flight is not None \
            else inflight.StepsInFlight()


class Steps:
    """The base of each endpoint (and of each kind's start-up recovery):
    its dependencies as attributes, and the guarded writes."""

    def __init__(self, deps):
        self.deps = deps
        self.host = deps.host
        self.driver = deps.driver
        self.conductor = deps.conductor
        # Where instance_actions.wrap_instance_event records events.
        self.event_backend = deps.conductor
        self.compute_rpcapi = deps.compute_rpcapi
        self.compute_task_api = deps.compute_task_api
        self.notifier = deps.notifier
        self.in_flight = deps.in_flight

    def _instance(self, ctxt, instance_uuid):
        return self.conductor.instance_get(ctxt, instance_uuid)

    def _update(self, ctxt, instance_uuid, values, **expected):
        instance = self.conductor.instance_update(ctxt, instance_uuid,
                                                  values, **expected)
        self.notifier.saw(ctxt, instance)
        return instance

    def _advance(self, ctxt, migration_uuid, event, result=None,
                 start_time=None, **kwargs):
        """One guarded move step through the conductor (move_advance),
        recording ``event`` (start, or ``result``; with ``start_time`` a
        step that made no start call, recorded whole). None when the message
        that asked for it is stale: the migration or the server moved on
        (a rollback, a reschedule, a duplicate delivery); then nothing was
        written and the caller drops the message, touching nothing."""
        name = event
        event = event and dict({'name': event, 'host': self.host,
                                'result': result},
                               **({'start_time': start_time, 'whole': True}
                                  if start_time else {}))
        try:
            rows = self.conductor.move_advance(ctxt, migration_uuid,
                                               event=event, **kwargs)
        except exception.MoveConflict as exc:
            LOG.warning('Dropping stale %s (%s) on %s: %s', name,
                        result or 'start', self.host, exc)
            return None
        self.notifier.saw(ctxt, rows)
        return rows

    def _move_failed(self, ctxt, migration_uuid, exc, event=None,
                     newest_action=False, **kwargs):
        """The one undo (conductor move_failed), with a fault and the
        step's Error event from ``exc`` (on the server's newest action
        with ``newest_action``: a restarted host has no request id of the
        move). None when another path settled the move first."""
        details = fault = None
        if exc is not None:  # None: an abort, no fault to show
            fault = faultinfo.from_exc(exc, self.host)
            details = fault['details']
        try:
            rows = self.conductor.move_failed(
                ctxt, migration_uuid, fault=fault,
                event=event and dict({'name': event, 'host': self.host,
                                      'traceback': details,
                                      'details': fault and fault['message']},
                                     **({'action': 'newest'}
                                        if newest_action else {})),
                **kwargs)
        except exception.MoveConflict as conflict:
            LOG.warning('Not rolling back migration %s on %s: %s',
                        migration_uuid, self.host, conflict)
            return None
        if exc is not None and rows and rows.get('migration'):
            # The running handler's instance.<action>.error.
            self.notifier.step_failed(
                ctxt, rows['migration']['instance_uuid'], exc,
                instance=rows.get('instance'))
        return rows

    def _fault(self, ctxt, instance_uuid, exc):
        fault = faultinfo.from_exc(exc, self.host)
        self.conductor.instance_fault_create(
            ctxt, instance_uuid, fault['code'], fault['message'],
            details=fault['details'], host=fault['host'])

    # -- a claim the API set (task_state), finished here ---------------------
    def _claim_cas(self, ctxt, instance_uuid, values, expected):
        """One compare-and-swap on the server; None when the claim is no
        longer this message's (logged, nothing written)."""
        try:
            return self._update(ctxt, instance_uuid, values,
                                expected_task_state=list(expected))
        except (exception.UnexpectedTaskState, exception.InstanceNotFound,
                exception.InstanceInvalidState) as exc:
            LOG.warning('Dropping a step of %s on %s: %s',
                        instance_uuid, self.host, exc)
            return None

    def _give_back(self, ctxt, instance_uuid, task_states, exc):
        """The hypervisor failed: the fault first (whoever sees the
        server settle must see why), then the task_state goes."""
        self._fault(ctxt, instance_uuid, exc)
        self._claim_cas(ctxt, instance_uuid, {'task_state': None},
                        task_states)

    def _still_claimed(self, ctxt, instance_uuid, task_state):
        """A late or duplicate message finds the claim gone: the guest
        is not touched. (A takeover after this read is still safe: the
        final compare-and-swap fails and the taker drives the guest.)"""
        try:
            instance = self._instance(ctxt, instance_uuid)
        except exception.InstanceNotFound:
            return False
        if instance['task_state'] != task_state or \
                instance['host'] != self.host:
            LOG.warning('Dropping a stale %s of %s on %s: task_state %s, '
                        'host %s', task_state, instance_uuid, self.host,
                        instance['task_state'], instance['host'])
            return False
        return True
