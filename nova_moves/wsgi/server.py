"""nova-moves-api's HTTP server: gunicorn, embedded as an application.

The master process parses the configuration, binds the socket and
supervises [api] workers processes of [api] threads threads each. Every
worker builds its own app after the fork, so a worker shares nothing with
its siblings but the database and the broker (its own engine pool, its own
RPC transport).

Signals, to the master: SIGTERM closes the listening socket, lets each
worker finish its in-flight requests (at most
[api] graceful_shutdown_timeout) and exits 0; SIGHUP re-reads the
mutable options (log levels) in the master and every worker, which keep
running; SIGINT stops at once."""
import functools
import os
import selectors
import signal
import threading
import time

from gunicorn.app import base
from gunicorn import arbiter
from gunicorn import glogging
from gunicorn.http import wsgi as gunicorn_wsgi
from gunicorn.workers import gthread
from oslo_log import log as logging

from nova_moves import conf
from nova_moves import service
from nova_moves import systemd

CONF = conf.CONF
LOG = logging.getLogger(__name__)

SERVER_HEADER = 'nova-moves'


def bind_address(host, port):
    """gunicorn's bind string; an IPv6 host (``::``, ``[::1]``) gets the
    brackets it needs."""
    host = host.strip('[]')
    if ':' in host:
        return '[%s]:%d' % (host, port)
    return '%s:%d' % (host, port)


def server_options():
    """The gunicorn settings [api] maps to."""
    return {
        'bind': [bind_address(CONF.api.listen, CONF.api.port)],
        'workers': CONF.api.workers or os.cpu_count() or 1,
        'threads': CONF.api.threads,
        'worker_class': Worker,
        'worker_connections': CONF.api.max_connections,
        'timeout': CONF.api.worker_timeout,
        'graceful_timeout': CONF.api.graceful_shutdown_timeout,
        # gunicorn closes a connection after each response when 0.
        'keepalive': CONF.api.keep_alive_timeout,
        'logger_class': Logger,
        'proc_name': 'nova-moves-api',
        # Every worker builds its own app (and RPC transport) after fork.
        'preload_app': False,
        # X-Forwarded-* is the pipeline's business (http_proxy_to_wsgi).
        'forwarded_allow_ips': '',
        # No gunicornc control socket: systemd and signals manage us.
        'control_socket_disable': True,
        'post_worker_init': _worker_ready,
    }


def _worker_ready(worker):
    # The app is built: what it holds stays out of every collection.
    service.freeze_heap()


class Logger(glogging.Logger):
    """gunicorn's messages go through the handlers oslo.log set up; the
    access log is the pipeline's (nova_moves.api.accesslog)."""

    def setup(self, cfg):
        self.cfg = cfg
        self._access_log_enabled = False
        self.loglevel = logging.INFO
        self.error_log.setLevel(logging.INFO)
        self.error_log.propagate = True

    def access(self, resp, req, environ, request_time):
        pass


class Worker(gthread.ThreadWorker):
    """gunicorn's threaded worker; SIGHUP reloads options instead of
    killing it (gunicorn leaves SIGHUP at its default in workers), and a
    new connection waits for its first bytes in the poller."""

    def enqueue_req(self, conn):
        if conn.initialized or conn.data_ready:
            super().enqueue_req(conn)
            return
        # gunicorn hands a new connection to a thread that waits up to 5 s
        # for the request: 100 silent connections then stall 4 threads for
        # a minute. Wait in the poller instead (gunicorn's own path for a
        # connection that stayed silent), at most keep_alive_timeout.
        conn.timeout = time.monotonic() + max(self.cfg.keepalive, 1)
        self.pending_conns.append(conn)
        self.poller.register(conn.sock, selectors.EVENT_READ,
                             functools.partial(
                                 self.on_pending_socket_readable, conn))

    def init_signals(self):
        super().init_signals()
        signal.signal(signal.SIGHUP, _reload_soon)
        signal.siginterrupt(signal.SIGHUP, False)
        # gunicorn resets SIGUSR2 to its default (exit) in workers.
        service.setup_reports('nova-moves-api')

    def set_accept_enabled(self, enabled):
        super().set_accept_enabled(enabled)
        if not enabled and not self.alive:
            # Stopping: close our copy of the listening socket now, not
            # after the drain, or the kernel keeps queueing connections
            # nobody will accept while in-flight requests finish.
            for listener in self.sockets:
                listener.close()


def _reload_soon(_signum, _frame):
    # Not in the handler itself: reloading takes logging's locks, which the
    # interrupted code may hold.
    threading.Thread(target=service.reload_config, daemon=True,
                     name='reload-config').start()


class Arbiter(arbiter.Arbiter):
    """gunicorn's master, with SIGHUP as a reload of mutable options (not a
    restart of the workers) and systemd's STOPPING=1 and WATCHDOG=1."""

    _watchdog_next = 0.0

    def handle_hup(self):
        self.log.info('SIGHUP: reloading mutable options in the master '
                      'and %d workers', len(self.WORKERS))
        service.reload_config()
        for pid in list(self.WORKERS):
            try:
                os.kill(pid, signal.SIGHUP)
            except ProcessLookupError:
                pass

    def handle_usr2(self):
        # A Guru Meditation report of the master and of every worker, as
        # every other service gives on SIGUSR2 (gunicorn's own meaning,
        # re-executing the binary, does not fit a systemd unit).
        service.write_report('nova-moves-api')
        for pid in list(self.WORKERS):
            try:
                os.kill(pid, signal.SIGUSR2)
            except ProcessLookupError:
                pass

    def handle_term(self):
        systemd.notify('STOPPING=1')
        super().handle_term()

    def handle_int(self):
        systemd.notify('STOPPING=1')
        super().handle_int()

    def murder_workers(self):
        # Runs on every turn of the master's loop (at least once a second):
        # a hung master stops the pings and systemd restarts the unit.
        self._watchdog_next = systemd.watchdog_ping(self._watchdog_next)
        super().murder_workers()


class APIServer(base.BaseApplication):
    """gunicorn configured from [api] instead of its command line."""

    def __init__(self, load_app):
        self._load_app = load_app
        # The Server header must not advertise the server and its version;
        # gunicorn has no option for it, its responses read this name.
        gunicorn_wsgi.SERVER = SERVER_HEADER
        super().__init__(prog='nova-moves-api')

    def load_config(self):
        for key, value in server_options().items():
            self.cfg.set(key, value)

    def load(self):
        return self._load_app()

    def run(self):
        Arbiter(self).run()
