"""WSGI entry point for uwsgi or gunicorn:
``nova_moves.wsgi.api:application``. Reads the config file named by
$NOVA_MOVES_CONFIG (default /etc/nova_moves/nova_moves.conf)."""
import os

from oslo_log import log as logging

from nova_moves.api import app as api_app
from nova_moves import conf

CONF = conf.CONF


def init_application():
    config = os.environ.get('NOVA_MOVES_CONFIG',
                            '/etc/nova_moves/nova_moves.conf')
    logging.register_options(CONF)
    CONF([], project='nova_moves',
         default_config_files=[config] if os.path.exists(config) else [])
    logging.setup(CONF, 'nova_moves')
    return api_app.create_app()


class _LazyApplication:
    """Build the app on the first request, after the server has forked."""

    def __init__(self):
        self._app = None

    def __call__(self, environ, start_response):
        if self._app is None:
            self._app = init_application()
        return self._app(environ, start_response)


application = _LazyApplication()
