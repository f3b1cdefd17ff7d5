"""nova-moves-api: the compute API on a threaded WSGI server."""
import signal
import sys
import threading

from oslo_log import log as logging
from werkzeug import serving

from nova_moves.api import app as api_app
from nova_moves import conf
from nova_moves import rpc
from nova_moves import service
from nova_moves import systemd

CONF = conf.CONF
LOG = logging.getLogger(__name__)


class _QuietHandler(serving.WSGIRequestHandler):
    def log_request(self, code='-', size='-'):
        LOG.info('%s "%s %s" status: %s len: %s', self.address_string(),
                 self.command, self.path, code, size)


def main():
    service.prepare(sys.argv, 'nova-moves-api')
    app = api_app.create_app()
    server = serving.make_server(CONF.api.listen, CONF.api.port, app,
                                 threaded=True,
                                 request_handler=_QuietHandler)
    stop = threading.Event()

    def _on_signal(signum, _frame):
        LOG.info('Caught signal %s, stopping', signum)
        stop.set()
        # shutdown() blocks until serve_forever returns: call it elsewhere.
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    LOG.info('nova-moves-api listening on %s:%s', CONF.api.listen,
             CONF.api.port)
    systemd.notify('READY=1')
    server.serve_forever()
    server.server_close()
    rpc.cleanup()
    service.exit_with(0)
