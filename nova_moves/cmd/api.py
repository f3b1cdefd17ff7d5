"""nova-moves-api: the compute API on gunicorn (nova_moves/wsgi/server.py):
[api] workers processes of [api] threads threads each."""
import sys

from oslo_log import log as logging

from nova_moves.api import app as api_app
from nova_moves.api import auth
from nova_moves.api import keystone_auth
from nova_moves import conf
from nova_moves import service
from nova_moves.wsgi import server

CONF = conf.CONF
LOG = logging.getLogger(__name__)


def main():
    service.prepare(sys.argv, 'nova-moves-api')
    try:
        # In the master, so that a refused configuration stops the start.
        auth.check_listen(CONF)
    except auth.InsecureConfig as exc:
        LOG.error('%s', exc)
        sys.exit('nova-moves-api: %s' % exc)
    problem = keystone_auth.config_problem(CONF)
    if problem:
        # Started anyway, every request with a token would fail.
        LOG.error('%s', problem)
        sys.exit('nova-moves-api: %s' % problem)
    options = server.server_options()
    LOG.info('nova-moves-api listening on %s, %d workers of %d threads',
             ', '.join(options['bind']), options['workers'],
             options['threads'])
    # The app is built in each worker, after the fork (create_app opens
    # the RPC transport): never here in the master.
    server.APIServer(api_app.create_app).run()
    service.exit_with(0)
