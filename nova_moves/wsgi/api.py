"""WSGI entry point for uwsgi, gunicorn or mod_wsgi:
``nova_moves.wsgi.api:application``.

The configuration is read at import, when the server loads this module:
the files named by $NOVA_MOVES_CONFIG (comma separated; default
/etc/nova_moves/nova_moves.conf). A file that does not exist stops the
server's start with its name, rather than serving with defaults (an empty
SQLite database) that would look like a working API; so does an
``auth_strategy = keystone`` whose [keystone_authtoken] cannot validate a
token (naming the missing options).

The app itself is built on the first request, after the server forked
its workers (each worker its own RPC transport and database pool), and
under a lock: the first requests of a threaded worker wait for one app
instead of building several at once."""
import os
import threading

from oslo_log import log as logging

from nova_moves.api import app as api_app
from nova_moves.api import keystone_auth
from nova_moves import broker_tls
from nova_moves import conf
from nova_moves import fileperms
from nova_moves import logsafe
from nova_moves import service

CONF = conf.CONF
DEFAULT_CONFIG = '/etc/nova_moves/nova_moves.conf'


class ConfigFileMissing(RuntimeError):
    pass


class AuthNotConfigured(RuntimeError):
    pass


def config_files(environ=None):
    environ = os.environ if environ is None else environ
    files = [name.strip() for name in
             environ.get('NOVA_MOVES_CONFIG', DEFAULT_CONFIG).split(',')
             if name.strip()]
    missing = [name for name in files if not os.path.isfile(name)]
    if missing or not files:
        raise ConfigFileMissing(
            'nova_moves.wsgi.api: configuration file %s not found; set '
            'NOVA_MOVES_CONFIG to the nova_moves.conf to serve with'
            % ', '.join(missing or ['(none given)']))
    return files


def init_config():
    fileperms.restrict()  # before any file (a log) is created
    logging.register_options(CONF)
    service.set_defaults()
    CONF([], project='nova_moves', prog='nova-moves-api',
         default_config_files=config_files())
    logging.setup(CONF, 'nova_moves')
    # Request values in log messages: one record, one line.
    logsafe.install()
    # As the console scripts: a TLS file for the broker that cannot be
    # read stops the load, naming the option.
    broker_tls.check(CONF)
    problem = keystone_auth.config_problem(CONF)
    if problem:
        # The server does not load the app: better than a 500 per request.
        logging.getLogger(__name__).error('%s', problem)
        raise AuthNotConfigured('nova_moves.wsgi.api: %s' % problem)
    # SIGUSR2 (Guru Meditation) in the worker; a WSGI server that keeps
    # SIGUSR2 for itself wins, as it registers its handler later.
    service.setup_reports('nova-moves-api')


class LazyApplication:
    """Builds the app on the first request, once."""

    def __init__(self, build):
        self._build = build
        self._app = None
        self._lock = threading.Lock()

    def __call__(self, environ, start_response):
        app = self._app
        if app is None:
            with self._lock:
                if self._app is None:
                    self._app = self._build()
                    service.freeze_heap()
                app = self._app
        return app(environ, start_response)


init_config()
application = LazyApplication(api_app.create_app)
