"""nova-moves-api's HTTP server: gunicorn's master, embedded as an
application, supervising workers of our own class (worker.py).

The master process parses the configuration, binds the socket and
supervises [api] workers processes of [api] threads threads each. Every
worker builds its own app after the fork, so a worker shares nothing with
its siblings but the database and the broker (its own engine pool, its own
RPC transport). A worker reads each request whole in its event loop
before a thread runs it: slow or idle clients hold no thread.

Signals, to the master: SIGTERM closes the listening socket, lets each
worker finish its in-flight requests (at most
[api] graceful_shutdown_timeout) and exits 0; SIGHUP re-reads the
mutable options (log levels) in the master and every worker, which keep
running; SIGINT stops at once."""
import os
import resource
import signal

from gunicorn.app import base
from gunicorn import arbiter
from gunicorn import glogging
from gunicorn.http import wsgi as gunicorn_wsgi
from oslo_log import log as logging

from nova_moves import conf
from nova_moves import service
from nova_moves import systemd
from nova_moves.wsgi import worker

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
        'worker_class': worker.Worker,
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


def _worker_ready(_worker):
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


def raise_open_files_limit(wanted):
    """The soft RLIMIT_NOFILE up to the hard limit when ``wanted``
    descriptors (every worker's connections) need it; the workers
    inherit it. Returns the soft limit in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    if soft != resource.RLIM_INFINITY and soft < wanted:
        LOG.warning('Open files limit %d is below the %d connections '
                    '[api] max_connections allows (+ 100): raise the hard '
                    'limit (LimitNOFILE= in the systemd unit)', soft, wanted)
    return soft


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
        # Each worker holds up to max_connections sockets, plus its
        # database, broker and log descriptors.
        raise_open_files_limit(CONF.api.max_connections + 100)
        Arbiter(self).run()
