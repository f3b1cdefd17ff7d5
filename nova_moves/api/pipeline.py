"""The WSGI middleware around the Flask app, outermost first, as Nova's
api-paste.ini has it. To add a middleware, add it to MIDDLEWARE.

Options: [cors] (allowed_origin, ...), [oslo_middleware]
enable_proxy_headers_parsing (honour X-Forwarded-Proto/Host from a
TLS-terminating proxy) and max_request_body_size (413 above it),
[healthcheck] (backends such as disable_by_file)."""
from oslo_middleware import cors
from oslo_middleware import healthcheck
from oslo_middleware import http_proxy_to_wsgi
from oslo_middleware import request_id
from oslo_middleware import sizelimit

from nova_moves.api import accesslog
from nova_moves.api import auth
from nova_moves.api import cors_defaults
from nova_moves.api import input_guard
from nova_moves import conf

CONF = conf.CONF
HEALTHCHECK_PATH = '/healthcheck'


class RequestId(request_id.RequestId):
    """req-<uuid> per request in environ['openstack.request_id'], returned
    as x-openstack-request-id and, as Nova does, x-compute-request-id."""
    compat_headers = ['x-compute-request-id']


class Healthcheck:
    """oslo.middleware's healthcheck at /healthcheck only, before
    authentication (a load balancer has no token); every other path goes
    on down the pipeline."""

    def __init__(self, app):
        self.app = app
        self.check = healthcheck.Healthcheck(app, CONF)

    def __call__(self, environ, start_response):
        if environ.get('PATH_INFO', '').rstrip('/') == HEALTHCHECK_PATH:
            return self.check(environ, start_response)
        return self.app(environ, start_response)


def _input_guard(app):
    # One knob for the body size: oslo.middleware's option.
    return input_guard.InputGuard(
        app, max_body=CONF.oslo_middleware.max_request_body_size)


MIDDLEWARE = (
    ('cors', lambda app: cors.CORS(app, CONF)),
    ('http_proxy_to_wsgi',
     lambda app: http_proxy_to_wsgi.HTTPProxyToWSGI(app, CONF)),
    ('request_id', RequestId),
    ('healthcheck', Healthcheck),
    ('access_log', accesslog.AccessLog),
    # Nova's fault body for what no view should see (413 among them)...
    ('input_guard', _input_guard),
    # ...and oslo.middleware's limit on what a view reads, for bodies
    # whose length is not announced.
    ('sizelimit', lambda app: sizelimit.RequestBodySizeLimiter(app, CONF)),
    ('auth', lambda app: auth.wrap(app, CONF)),
)


def register_opts(conf_):
    """The options of the middleware, for the config sample too."""
    conf_.register_opts(sizelimit.OPTS, group='oslo_middleware')
    cors_defaults.set_defaults()


def build(app):
    """``app`` wrapped in every MIDDLEWARE; the first is outermost."""
    register_opts(CONF)
    for _name, factory in reversed(MIDDLEWARE):
        app = factory(app)
    return app
