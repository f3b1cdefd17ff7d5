"""The compute agent of one host. It never opens the database: every
read and write goes to the conductor. Each move kind is an endpoint class
of its own (compute/base.py), given its dependencies explicitly; the
manager builds them, hands them to the RPC server, runs each kind's
start-up recovery and sends the heartbeat."""
import itertools
import threading
import time

from oslo_log import log as logging
import oslo_messaging as messaging

from nova_moves.compute import base
from nova_moves.compute import console
from nova_moves.compute import cross_cell
from nova_moves.compute import evacuate
from nova_moves.compute import fence
from nova_moves.compute import guest_watch
from nova_moves.compute import lifecycle
from nova_moves.compute import lifecycle_recovery
from nova_moves.compute import live_migration
from nova_moves.compute import resize
from nova_moves.compute import resize_settle
from nova_moves.compute import resize_recovery
from nova_moves.compute import shelve
from nova_moves.compute import rpcapi as compute_rpcapi
from nova_moves.conductor import rpcapi as conductor_rpcapi
from nova_moves import conf
from nova_moves import exception
from nova_moves import notifications
from nova_moves.virt import driver as virt_driver

CONF = conf.CONF
LOG = logging.getLogger(__name__)
# Seconds after the RPC server starts before the boots found spawning at
# start-up are undone: the casts queued for this host run first.
DEFERRED_RECOVERY_DELAY = 5.0


def heartbeat_timeout():
    """Seconds one heartbeat try waits: a tenth of service_down_time, at
    most report_interval and rpc_response_timeout, at least 1."""
    limits = [CONF.service_down_time / 10.0, float(CONF.report_interval)]
    if 'rpc_response_timeout' in CONF:  # oslo.messaging's, once loaded
        limits.append(float(CONF.rpc_response_timeout))
    return max(1.0, min(limits))


class HostEndpoint(base.Steps):
    """What the host answers for itself rather than for one move kind:
    the sweep's question and the test hook."""
    target = messaging.Target(version=compute_rpcapi.ComputeAPI.VERSION)

    def __init__(self, deps, live):
        super().__init__(deps)
        self.live = live  # the LiveMigrationEndpoint of this host

    # -- 1.3: asked by the stuck-move sweep ---------------------------------
    def move_step_status(self, ctxt, migration_uuid):
        """True while a step handler of this move runs here (a live
        migration's source counts while it queues or copies); given a
        server's uuid, while a lifecycle action of it runs here."""
        if migration_uuid in self.in_flight:
            return True
        return self.live.live_migration_status(ctxt, migration_uuid)

    # -- test hook ---------------------------------------------------------
    def set_fault_injection(self, ctxt, fail_operations,
                            operation_seconds=None):
        # Anyone on the message bus can call this: the API's route is
        # not enough of a gate.
        if not CONF.api.enable_test_hooks:
            raise exception.TestHooksDisabled(host=self.host)
        return self.driver.set_fault_injection(fail_operations,
                                               operation_seconds)


class ComputeManager:
    """Not an endpoint itself: endpoints() lists the ones it built."""

    def __init__(self, host, driver=None, conductor=None,
                 compute_api=None, compute_task_api=None):
        """The RPC clients and the hypervisor by default; tests pass
        their own."""
        self.host = host
        self.driver = driver or virt_driver.load_driver(host)
        self.conductor = conductor or conductor_rpcapi.ConductorDBAPI()
        self.notifier = notifications.Notifier(
            host, self.conductor.instance_get)
        deps = base.Deps(
            host, self.driver, self.conductor,
            compute_rpcapi=compute_api or compute_rpcapi.ComputeAPI(),
            compute_task_api=(compute_task_api or
                              conductor_rpcapi.ComputeTaskAPI()),
            notifier=self.notifier)
        self.lifecycle = lifecycle.LifecycleEndpoint(deps)
        self.resize = resize.ResizeEndpoint(deps)
        self.resize_settle = resize_settle.ResizeSettleEndpoint(deps)
        self.live = live_migration.LiveMigrationEndpoint(deps)
        self.shelve = shelve.ShelveEndpoint(deps)
        self.console = console.ConsoleEndpoint(deps)
        self.cross_cell = cross_cell.CrossCellEndpoint(deps)
        self.host_endpoint = HostEndpoint(deps, self.live)
        # Start-up recovery of each kind (not served over RPC).
        self.resize_recovery = resize_recovery.ResizeRecovery(
            deps, self.resize, self.resize_settle)
        self.live_recovery = live_migration.LiveRecovery(deps, self.live)
        self.evacuation_cleanup = evacuate.EvacuationCleanup(deps)
        self.lifecycle_recovery = lifecycle_recovery.LifecycleRecovery(
            deps, self.lifecycle, self.shelve)
        self.evacuate = evacuate.EvacuateEndpoint(deps,
                                                  self.evacuation_cleanup)
        self.guest_watch = guest_watch.GuestWatch(deps)
        self.fence = fence.Fence(deps)
        self.deps = deps

    def endpoints(self):
        """Every public method of these is the compute's RPC surface
        (compute/rpcapi.py); no name is served by two of them."""
        return [self.lifecycle, self.resize, self.resize_settle, self.live,
                self.evacuate, self.shelve, self.console, self.cross_cell,
                self.host_endpoint]

    def init_host(self):
        """Report the node and its providers, then let each move kind
        recover what it left half-done when this host last stopped."""
        from nova_moves import context as nm_context
        ctxt = nm_context.get_admin_context()
        # Before the first conductor call: a host restarted while cut
        # off fences too.
        self.fence.start()
        # A short timeout: a call sent before any conductor listens is
        # dropped by the broker, and the service start retries it.
        self.conductor.compute_node_sync(ctxt, self.driver.node_info(),
                                         timeout=3)
        for kind, recover in (('evacuate', self.evacuation_cleanup.run),
                              ('resize', self.resize_recovery.run),
                              ('live_migration', self.live_recovery.run),
                              ('lifecycle', self.lifecycle_recovery.run)):
            try:
                recover(ctxt)
            except Exception:
                LOG.exception('init_host recovery of %s failed on %s',
                              kind, self.host)

    def post_start_hook(self):
        """Once serving: watch the guests for ones that stop on their
        own (compute/guest_watch.py), and, once the casts queued for this
        host while it was away have had time to run, settle or undo the
        lifecycle actions it found under way that none of them took up."""
        self.guest_watch.start()
        timer = threading.Timer(DEFERRED_RECOVERY_DELAY,
                                self._run_deferred_recovery)
        timer.daemon = True
        timer.start()

    def _run_deferred_recovery(self):
        from nova_moves import context as nm_context
        try:
            self.lifecycle_recovery.run_deferred(
                nm_context.get_admin_context())
        except Exception:
            LOG.exception('Deferred recovery failed on %s', self.host)

    def pre_stop_hook(self):
        """On SIGTERM, when the heartbeat stops: a drain longer than
        fence_after must not fence the guests (a restart does not)."""
        self.fence.stop()

    def before_reporting_up(self, ctxt, evacuations=None):
        """Called by the heartbeat (nova_moves.service) when this host was
        silent longer than service_down_time: evacuations away from it
        (``evacuations``, or asked for) are settled before it reports up
        (compute/evacuate.py)."""
        self.evacuate.before_reporting_up(ctxt, evacuations)

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
                # this host reports up (the answer lists them; a conductor
                # before that does not).
                self._settle_before_reporting(ctxt, host,
                                              answer.get('evacuations'))
                settled = True
                continue
            if isinstance(answer, dict) and answer.get('conductors'):
                self._conductors = list(answer['conductors'])
            self.__dict__['_shown_down'] = False
            # Counted (after any settle): fenced guests may come back,
            # unless an operator forced this host down meanwhile.
            self.fence.reported(forced_down=isinstance(answer, dict) and
                                bool(answer.get('forced_down')))
            return answer

    def _settle_before_reporting(self, ctxt, host, evacuations=None):
        if not self.__dict__.get('_shown_down'):
            # Once per episode: a forced-down host is asked every report.
            LOG.warning('%s is shown down (silent for over %ss, or forced '
                        'down); settling what happened meanwhile before '
                        'reporting up', host, CONF.service_down_time)
        self.__dict__['_shown_down'] = True
        if evacuations is None:
            self.before_reporting_up(ctxt)
        else:
            self.before_reporting_up(ctxt, evacuations)
