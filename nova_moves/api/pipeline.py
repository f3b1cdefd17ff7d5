"""The WSGI middleware around the Flask app, outermost first, as Nova's
api-paste.ini has it. To add a middleware, add it to MIDDLEWARE.

Options: [cors] (allowed_origin, ...), [oslo_middleware]
enable_proxy_headers_parsing (honour X-Forwarded-Proto/Host from a
TLS-terminating proxy) and max_request_body_size (413 above it),
[healthcheck] (backends such as disable_by_file)."""
import re

from oslo_context import context as oslo_context
from oslo_middleware import base as middleware_base
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


# The layers are plain WSGI: each of oslo.middleware's wraps the request
# and the response in webob objects (and inspects its own signature) on
# every request, ~25 us apiece on a quiet core, for what a dict lookup
# decides. cors, outermost, hands oslo.middleware's the requests it acts
# on; the others get what its webob round trip did to them.

_GLOBAL_ID = re.compile(request_id.ID_FORMAT)
_ID_HEADERS = (request_id.HTTP_RESP_HEADER_REQUEST_ID, 'x-compute-request-id')


class RequestId:
    """oslo.middleware's request_id, as plain WSGI: req-<uuid> per request
    in environ['openstack.request_id'] (a valid inbound
    X-OpenStack-Request-Id in 'openstack.global_request_id'), returned as
    x-openstack-request-id and, as Nova does, x-compute-request-id,
    unless the response has them already."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        global_id = environ.get('HTTP_X_OPENSTACK_REQUEST_ID', '')
        if _GLOBAL_ID.match(global_id):
            environ[request_id.GLOBAL_REQ_ID] = global_id
        req_id = oslo_context.generate_request_id()
        environ[request_id.ENV_REQUEST_ID] = req_id

        def _start_response(status, headers, exc_info=None):
            present = {name.lower() for name, _value in headers}
            headers = list(headers) + [(name, req_id) for name in _ID_HEADERS
                                       if name not in present]
            return start_response(status, headers, exc_info)
        return self.app(environ, _start_response)


class Cors:
    """oslo.middleware's cors, for a request with an Origin header (the
    only one it adds headers to) or an OPTIONS or HEAD request (its
    preflight; webob answers HEAD without a body). Any other request's
    response it left as it was, but for webob's round trip: a relative
    Location made absolute (webob then still does it), the status given
    a reason when it had none; so does this."""

    def __init__(self, app):
        self.app = app
        self.cors = cors.CORS(app, CONF)

    def __call__(self, environ, start_response):
        if 'HTTP_ORIGIN' in environ or environ.get('REQUEST_METHOD') in (
                'OPTIONS', 'HEAD'):
            return self.cors(environ, start_response)
        # As webob's call_application: a response written through
        # write(), or started only when its body is read, is gathered.
        captured, written = [], []

        def capture(status, headers, exc_info=None):
            if exc_info is not None:
                raise exc_info[1].with_traceback(exc_info[2])
            captured[:] = [status, headers]
            return written.append
        body = self.app(environ, capture)
        if written or not captured:
            try:
                written.extend(body)
            finally:
                if hasattr(body, 'close'):
                    body.close()
            body = written
        status, headers = captured
        if ' ' not in status or any(name.lower() == 'location'
                                    for name, _value in headers):
            return middleware_base.NoContentTypeResponse(
                status=status, headerlist=list(headers),
                app_iter=body)(environ, start_response)
        start_response(status, headers)
        return body


class ProxyHeaders:
    """oslo.middleware's http_proxy_to_wsgi, only when [oslo_middleware]
    enable_proxy_headers_parsing is on (off, it changes nothing)."""

    def __init__(self, app):
        self.app = app
        self.parse = http_proxy_to_wsgi.HTTPProxyToWSGI(app, CONF)

    def __call__(self, environ, start_response):
        if CONF.oslo_middleware.enable_proxy_headers_parsing:
            return self.parse(environ, start_response)
        return self.app(environ, start_response)


class SizeLimit:
    """oslo.middleware's sizelimit, for a body whose length is not
    announced or is over the limit; an announced length within it, what
    the input guard leaves of every request the worker reads whole, has
    nothing to limit."""

    def __init__(self, app):
        self.app = app
        self.limit = sizelimit.RequestBodySizeLimiter(app, CONF)

    def __call__(self, environ, start_response):
        length = environ.get('CONTENT_LENGTH')
        if isinstance(length, str) and length.isdigit() and int(length) <= \
                CONF.oslo_middleware.max_request_body_size:
            return self.app(environ, start_response)
        return self.limit(environ, start_response)


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
    ('cors', Cors),
    ('http_proxy_to_wsgi', ProxyHeaders),
    ('request_id', RequestId),
    ('healthcheck', Healthcheck),
    ('access_log', accesslog.AccessLog),
    # Nova's fault body for what no view should see (413 among them)...
    ('input_guard', _input_guard),
    # ...and oslo.middleware's limit on what a view reads, for bodies
    # whose length is not announced.
    ('sizelimit', SizeLimit),
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
