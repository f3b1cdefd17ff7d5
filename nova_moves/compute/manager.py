"""The compute agent of one host. It never opens the database: every
read and write goes to the conductor (``self.conductor``). Move flows live
in one mixin per operation."""
import itertools
import time

from oslo_log import log as logging
import oslo_messaging as messaging

from nova_moves.compute import driver as fake_driver
from nova_moves.compute import evacuate
from nova_moves.compute import inflight
from nova_moves.compute import lifecycle
from nova_moves.compute import live_migration
from nova_moves.compute import resize
from nova_moves.compute import shelve
from nova_moves.compute import rpcapi as compute_rpcapi
from nova_moves.conductor import rpcapi as conductor_rpcapi
from nova_moves import conf
from nova_moves import exception
from nova_moves import faultinfo
from nova_moves import instance_actions
from nova_moves import notifications
from nova_moves import timeutil
from nova_moves import states

CONF = conf.CONF
LOG = logging.getLogger(__name__)
wrap_instance_event = instance_actions.wrap_instance_event
notify_action = notifications.notify_action



def heartbeat_timeout():
    """Seconds one heartbeat try waits: a tenth of service_down_time, at
    most report_interval and rpc_response_timeout, at least 1."""
    limits = [CONF.service_down_time / 10.0, float(CONF.report_interval)]
    if 'rpc_response_timeout' in CONF:  # oslo.messaging's, once loaded
        limits.append(float(CONF.rpc_response_timeout))
    return max(1.0, min(limits))


class ComputeManager(resize.ResizeMixin, live_migration.LiveMigrationMixin,
                     evacuate.EvacuateMixin, lifecycle.LifecycleMixin,
                     shelve.ShelveMixin):
    # The newest version served: see compute/rpcapi.py for the history.
    target = messaging.Target(version='1.7')

    def __init__(self, host):
        self.host = host
        self.driver = fake_driver.FakeDriver(host)
        self.conductor = conductor_rpcapi.ConductorDBAPI()
        self.event_backend = self.conductor
        self.compute_rpcapi = compute_rpcapi.ComputeAPI()
        self.compute_task_api = conductor_rpcapi.ComputeTaskAPI()
        self.notifier = notifications.Notifier(host, self._instance)
        super().__init__()

    def endpoints(self):
        return [self]

    def init_host(self):
        """Report the node and its providers, then let each move mixin
        recover what it left half-done when this host last stopped."""
        from nova_moves import context as nm_context
        ctxt = nm_context.get_admin_context()
        # A short timeout: a call sent before any conductor listens is
        # dropped by the broker, and the service start retries it.
        self.conductor.compute_node_sync(ctxt, self.driver.node_info(),
                                         timeout=3)
        for hook in (self._init_host_evacuate, self._init_host_resize,
                     self._init_host_live_migration):
            try:
                hook(ctxt)
            except Exception:
                LOG.exception('init_host step %s failed on %s',
                              hook.__name__, self.host)

    def report(self, ctxt, host, binary, topic):
        """The heartbeat: a call to the conductors' shared topic. One
        conductor that hangs or died with the call must not get this host
        shown down (the broker may hand this host's heartbeats to the same
        conductor every time), so each try has a short timeout and the
        next tries go to the other conductors by name, until half of
        service_down_time has passed."""
        zone = self.driver.node_info()['availability_zone']
        timeout = heartbeat_timeout()
        deadline = time.monotonic() + CONF.service_down_time / 2.0
        # None: the shared topic; then each conductor known to be up.
        known = self.__dict__.get('_conductors') or []
        targets = [None] + known
        settled = False
        for attempt in itertools.count():
            server = targets[attempt % len(targets)]
            try:
                answer = self.conductor.service_report(
                    ctxt, host, binary, topic, availability_zone=zone,
                    timeout=timeout, server=server, settled=settled)
            except messaging.MessagingTimeout:
                if time.monotonic() + timeout > deadline:
                    raise
                LOG.warning('Heartbeat of %s not answered by %s in %.1fs; '
                            'trying another conductor', host,
                            server or 'the conductors\' topic', timeout)
                continue
            if isinstance(answer, dict) and answer.get('settle_first') and \
                    not settled:
                # Shown down (a partition that outlived service_down_time
                # even if this process never noticed, or forced down):
                # servers evacuated meanwhile lose their copy here before
                # this host reports up.
                self._settle_before_reporting(ctxt, host)
                settled = True
                continue
            if isinstance(answer, dict) and answer.get('conductors'):
                self._conductors = list(answer['conductors'])
            self.__dict__['_shown_down'] = False
            return answer

    def _settle_before_reporting(self, ctxt, host):
        if not self.__dict__.get('_shown_down'):
            # Once per episode: a forced-down host is asked every report.
            LOG.warning('%s is shown down (silent for over %ss, or forced '
                        'down); settling what happened meanwhile before '
                        'reporting up', host, CONF.service_down_time)
        self.__dict__['_shown_down'] = True
        self.before_reporting_up(ctxt)

    # -- helpers shared by the move mixins ----------------------------------
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
                               **({'start_time': start_time}
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

    # -- boot and delete ------------------------------------------------------
    @wrap_instance_event('compute')
    @notify_action('create')
    def build_and_run_instance(self, ctxt, instance_uuid, request_spec,
                               alternates):
        try:
            instance = self._instance(ctxt, instance_uuid)
        except exception.InstanceNotFound:
            instance = None
        if instance is None or instance['task_state'] != states.SPAWNING:
            LOG.info('Not building %s: deleted meanwhile', instance_uuid)
            return
        try:
            self.driver.spawn(instance_uuid, instance['flavor'])
        except Exception as exc:
            LOG.warning('Spawn of %s failed on %s: %s', instance_uuid,
                        self.host, exc)
            self._reschedule_build(ctxt, instance_uuid, request_spec,
                                   alternates, exc)
            raise
        try:
            self._update(ctxt, instance_uuid,
                         {'vm_state': states.ACTIVE, 'task_state': None,
                          'power_state': states.POWER_RUNNING,
                          'launched_at': timeutil.utcnow_iso()},
                         expected_task_state=[states.SPAWNING])
        except (exception.InstanceNotFound, exception.UnexpectedTaskState):
            # Deleted while spawning: its terminate may have run before
            # the guest existed, so the copy is removed here.
            LOG.info('%s was deleted while spawning; removing it',
                     instance_uuid)
            self.driver.destroy(instance_uuid)

    def _reschedule_build(self, ctxt, instance_uuid, request_spec,
                          alternates, exc):
        self.conductor.allocations_delete(ctxt, instance_uuid)
        if alternates:
            self._update(ctxt, instance_uuid,
                         {'task_state': states.SCHEDULING, 'host': None,
                          'node': None})
            spec = dict(request_spec, alternates=alternates)
            self.compute_task_api.build_instances(ctxt, [instance_uuid], spec)
            return
        # The fault first: whoever sees ERROR must also see why.
        self._fault(ctxt, instance_uuid, exc)
        self._update(ctxt, instance_uuid,
                     {'vm_state': states.ERROR, 'task_state': None})

    @wrap_instance_event('compute')
    def terminate_instance(self, ctxt, instance_uuid):
        self.driver.destroy(instance_uuid)

    # -- os-start / os-stop (1.2) --------------------------------------------
    @wrap_instance_event('compute')
    @notify_action('power_on')
    def start_instance(self, ctxt, instance_uuid):
        self._set_power(ctxt, instance_uuid, states.POWERING_ON, 'running',
                        'power_on', states.ACTIVE, states.POWER_RUNNING)

    @wrap_instance_event('compute')
    @notify_action('power_off')
    def stop_instance(self, ctxt, instance_uuid):
        self._set_power(ctxt, instance_uuid, states.POWERING_OFF, 'shutdown',
                        'power_off', states.STOPPED, states.POWER_SHUTDOWN)

    def _set_power(self, ctxt, instance_uuid, task_state, power, operation,
                   vm_state, power_state):
        """The API set ``task_state``; only that claim is finished here.
        A failure gives the task_state back (the server stays as it was,
        as Nova's reverts_task_state does) and re-raises for the event."""
        try:
            self.driver.set_power(instance_uuid, power, operation)
        except Exception:
            self._update(ctxt, instance_uuid, {'task_state': None},
                         expected_task_state=[task_state])
            raise
        self._update(ctxt, instance_uuid,
                     {'vm_state': vm_state, 'task_state': None,
                      'power_state': power_state},
                     expected_task_state=[task_state])

    # -- 1.3: asked by the stuck-move sweep ---------------------------------
    def move_step_status(self, ctxt, migration_uuid):
        """True while a step handler of this move runs here (a live
        migration's source counts while it queues or copies)."""
        if inflight.running(self, migration_uuid):
            return True
        return self.live_migration_status(ctxt, migration_uuid)

    # -- test hook ---------------------------------------------------------
    def set_fault_injection(self, ctxt, fail_operations,
                            operation_seconds=None):
        # Anyone on the message bus can call this: the API's route is
        # not enough of a gate.
        if not CONF.api.enable_test_hooks:
            raise exception.TestHooksDisabled(host=self.host)
        return self.driver.set_fault_injection(fail_operations,
                                               operation_seconds)
