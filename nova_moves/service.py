"""A process's RPC services: serve a topic, report liveness, stop
gracefully on SIGTERM (stop consuming, finish in-flight handlers, exit 0)
and re-read the mutable options on SIGHUP."""
import gc
import signal
import sys
import threading
import time

from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_reports import guru_meditation_report as gmr
from oslo_reports import opts as gmr_opts

from nova_moves import broker_tls
from nova_moves import conf
from nova_moves import context as nm_context
from nova_moves import coordination
from nova_moves import fileperms
from nova_moves import liveness
from nova_moves import logsafe
from nova_moves import rpc
from nova_moves import rpc_shutdown
from nova_moves import systemd
from nova_moves import version

CONF = conf.CONF
LOG = logging.getLogger(__name__)


def prepare(argv, binary):
    """Parse options and set up logging, as every console script does."""
    fileperms.restrict()  # before any file (a log) is created
    logging.register_options(CONF)
    if binary == 'nova-moves-manage':
        # Output of the command goes to stdout; its logs to stderr.
        CONF.set_default('use_stderr', True)
    set_defaults()
    CONF(argv[1:], project='nova_moves', prog=binary,
         version=version.version_string())
    logging.setup(CONF, 'nova_moves')
    setup_reports(binary)
    # Request values in log messages: one record, one line.
    logsafe.install()
    if binary != 'nova-moves-manage':  # its status check reports it
        check_broker_files(binary)


def check_broker_files(binary):
    """A TLS file [oslo_messaging_rabbit] names but that cannot be read
    stops the start naming the option (else: "unreachable", forever)."""
    try:
        broker_tls.check(CONF)
    except broker_tls.BrokerConfigError as exc:
        LOG.error('%s', exc)
        sys.exit('%s: %s' % (binary, exc))


def set_defaults():
    """Project defaults for library options (before the files are
    read): oslo.messaging's RabbitMQ queues, oslo.reports' options."""
    rpc.set_defaults(CONF)
    gmr_opts.set_defaults(CONF)
    # qemu.qmp logs every frame of every monitor command at DEBUG.
    logging.set_defaults(default_log_levels=logging.get_default_log_levels()
                         + ['qemu.qmp=WARNING'])


def write_report(binary):
    """A Guru Meditation report now (a WSGI master's own SIGUSR2 path)."""
    gmr.TextGuruMeditation.handle_signal(
        version.version_info, binary, CONF.oslo_reports.log_dir, None)


def setup_reports(binary):
    """SIGUSR2 writes a Guru Meditation report (threads, configuration,
    package versions) to stderr, or to a file in [oslo_reports] log_dir,
    and the process runs on, as Nova's services do. Without a handler
    SIGUSR2's default action ended the process."""
    gmr.TextGuruMeditation.setup_autorun(version.version_info,
                                         service_name=binary, conf=CONF)


def reload_config():
    """SIGHUP: re-read the config files and apply what oslo.config marks
    mutable (oslo.log's debug and log levels among them). Never fatal: a
    broken file leaves the running values in place."""
    LOG.info('SIGHUP: reloading mutable options')
    try:
        CONF.mutate_config_files()
    except Exception:
        LOG.exception('Reloading the configuration failed; running on')
        return
    # What the process now runs with, at DEBUG as oslo.service does
    # (secret options masked).
    CONF.log_opt_values(LOG, logging.DEBUG)


def freeze_heap():
    """Once a process has imported and built what it serves with, take
    those objects out of the garbage collector's view: every full
    collection otherwise walks them all again (~110,000-155,000 objects
    here; measured up to 20% of a compute's CPU during a burst of
    moves). What they refer to stays alive as before; only cycles among
    them that become garbage later are never freed."""
    gc.collect()
    gc.freeze()


class Service:
    """One RPC server on ``topic`` addressed as ``host``, and its
    heartbeat. ``report`` is called with (context, host, binary, topic)
    every report_interval; computes pass one that asks the conductor.
    ``observer`` (liveness.Observer, from the process's ServiceGroup)
    learns when this process's own heartbeat fails."""

    def __init__(self, host, binary, topic, manager, report,
                 observer=None):
        self.host = host
        self.binary = binary
        self.topic = topic
        self.manager = manager
        self._report = report
        # None (computes): nothing in the process reads liveness.
        self._observer = observer or liveness.Observer()
        self._stop = threading.Event()
        self._server = None
        self._heartbeat = None
        # When the last report went through (monotonic: runs on while
        # the process is stopped, not while the machine sleeps).
        self._reported_at = None

    def start(self):
        if hasattr(self.manager, 'init_host'):
            self.manager.init_host()
        self.report_state(raise_on_error=True)
        target = messaging.Target(topic=self.topic, server=self.host)
        self._server = rpc.get_server(target, self.manager.endpoints())
        self._server.start()
        self._heartbeat = threading.Thread(
            target=self._heartbeat_loop, daemon=True,
            name='heartbeat-%s-%s' % (self.binary, self.host))
        self._heartbeat.start()
        if hasattr(self.manager, 'post_start_hook'):
            self.manager.post_start_hook()
        LOG.info('%s serving topic %s as %s', self.binary, self.topic,
                 self.host)

    def _away(self):
        """True when the last report is older than service_down_time:
        others may have taken this host for dead (and evacuated it)."""
        return self._reported_at is not None and \
            time.monotonic() - self._reported_at > CONF.service_down_time

    def report_state(self, raise_on_error=False):
        ctxt = nm_context.get_admin_context()
        try:
            if self._away() and hasattr(self.manager,
                                        'before_reporting_up'):
                LOG.warning('%s on %s was silent for over %ss; settling '
                            'what happened meanwhile before reporting up',
                            self.binary, self.host, CONF.service_down_time)
                self.manager.before_reporting_up(ctxt)
            self._report(ctxt, self.host, self.binary, self.topic)
            self._reported_at = time.monotonic()
            self._observer.back(liveness.REPORT)
        except Exception:
            # Others' silence proves nothing while ours lasts.
            self._observer.cut(liveness.REPORT)
            if raise_on_error:
                raise
            LOG.exception('%s on %s could not report its state',
                          self.binary, self.host)

    def healthy(self):
        """Serving and reporting: what WATCHDOG=1 vouches for."""
        return self._heartbeat is not None and self._heartbeat.is_alive()

    def _heartbeat_loop(self):
        while not self._stop.wait(CONF.report_interval):
            self.report_state()

    def stop(self):
        """Stop consuming; in-flight handlers keep running."""
        self._stop.set()
        if hasattr(self.manager, 'pre_stop_hook'):
            # Before the drain: what watches the heartbeat stops with it.
            self.manager.pre_stop_hook()
        if self._server is not None:
            rpc_shutdown.stop_server(self._server)

    def wait(self):
        if self._server is not None:
            self._server.wait()
        if hasattr(self.manager, 'cleanup_host'):
            self.manager.cleanup_host()


def _start_with_retry(service, stop_event):
    """A compute may start before any conductor: retry until it answers."""
    delay = 0.5
    while not stop_event.is_set():
        try:
            service.start()
            return True
        except messaging.MessagingTimeout:
            LOG.warning('%s on %s: conductor not answering yet, retrying',
                        service.binary, service.host)
        stop_event.wait(delay)
        delay = min(delay * 2, 5)
    return False


def run(services, coordinator=None):
    """Start services, tell systemd we are ready, block until SIGTERM or
    SIGINT, then drain and return the exit code."""
    stop_event = threading.Event()
    reload_event = threading.Event()

    def _on_signal(signum, _frame):
        stop_event.set()

    def _on_hup(_signum, _frame):
        reload_event.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGHUP, _on_hup)
    if coordinator is not None:
        coordinator.start()
        if coordination.membership_enabled():
            for service in services:
                coordinator.join(service.binary, service.host)
    # A compute that never reached a conductor is not ready: no READY=1.
    if all(_start_with_retry(service, stop_event) for service in services):
        systemd.notify('READY=1')
    freeze_heap()
    _main_loop(services, stop_event, reload_event)
    LOG.info('Caught SIGTERM or SIGINT, stopping')
    systemd.notify('STOPPING=1')
    for service in services:
        service.stop()
    drained = threading.Thread(target=lambda: [s.wait() for s in services],
                               daemon=True)
    drained.start()
    drained.join(CONF.graceful_shutdown_timeout or None)
    if drained.is_alive():
        LOG.warning('In-flight requests still running after %ss; exiting',
                    CONF.graceful_shutdown_timeout)
    if coordinator is not None:
        coordinator.stop()
    rpc.cleanup()
    LOG.info('Stopped')
    return 0


def _main_loop(services, stop_event, reload_event):
    """Until SIGTERM: reload on SIGHUP, and ping systemd's watchdog while
    every service still reports."""
    watchdog_due = 0.0
    while not stop_event.wait(0.5):
        if reload_event.is_set():
            reload_event.clear()
            reload_config()
        if all(service.healthy() for service in services):
            watchdog_due = systemd.watchdog_ping(watchdog_due)


def exit_with(code):
    sys.stdout.flush()
    sys.exit(code)
