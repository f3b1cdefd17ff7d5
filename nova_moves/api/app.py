"""The compute API as a Flask app: authentication, microversions, the
request context, and Nova-style faults around every view. The URL map is
built from one table, routes.ROUTES; handlers reach the request through
api/request.py."""
import re
import threading

import flask
from oslo_db import exception as db_exc
from oslo_log import log as logging
from sqlalchemy import exc as sa_exc
from werkzeug import exceptions as http_exc

from nova_moves.api import auth
from nova_moves.api import cell_routing
from nova_moves.api import faults
from nova_moves.api import microversion
from nova_moves.api import move_sending
from nova_moves.api import openapi
from nova_moves.api import pipeline
from nova_moves.api import policies
from nova_moves.api import policy_cache
from nova_moves.api import query_params
from nova_moves.api import request as api_req
from nova_moves.api import routes
from nova_moves import cells
from nova_moves import conf
from nova_moves.compute import rpcapi as compute_rpcapi
from nova_moves.conductor import rpcapi as conductor_rpcapi
from nova_moves.db import retry as db_retry
from nova_moves import exception
from nova_moves import rpc
from nova_moves.scheduler import rpcapi as scheduler_rpcapi

CONF = conf.CONF
LOG = logging.getLogger(__name__)

# Top-level collections; a path segment before one of these is a project
# id (/v2.1/{project_id}/servers) and is dropped.
_COLLECTIONS = {path.split('/')[2] for path in routes.ROUTES
                if path.startswith('/v2.1/') and path != '/v2.1/'}
_UNVERSIONED = re.compile(r'^/(v2(\.1)?/?)?$')
# Discovery documents a client fetches before it has a token, with no
# compute microversion: the identity v3 version (api/identity.py) and the
# OpenAPI description of this API (api/openapi.py).
_PUBLIC = re.compile(r'^/(v3/?|openapi\.json)$')


class ProjectIdMiddleware:
    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        parts = environ.get('PATH_INFO', '').split('/')
        if (len(parts) > 3 and parts[1] == 'v2.1' and parts[2] not in
                _COLLECTIONS and parts[3] in _COLLECTIONS):
            environ['PATH_INFO'] = '/'.join(parts[:2] + parts[3:])
        return self.app(environ, start_response)


class Services:
    """RPC clients, the policy enforcer and the move keeper of one API
    app."""

    def __init__(self):
        self.conductor = conductor_rpcapi.ComputeTaskAPI()
        self.scheduler = scheduler_rpcapi.SchedulerAPI()
        self.compute = compute_rpcapi.ComputeAPI()
        self.enforcer = policies._build(CONF)
        self.policy = policy_cache.Authorizer(self.enforcer)
        # One thread keeping alive the moves whose start is being sent.
        self.keeper = move_sending.Keeper()
        # Other cells' RPC clients, by transport URL (cells.target).
        self._cells = {}

    def for_cell(self, cell):
        """These services with the RPC clients of ``cell`` (a cells.Cell):
        built inside cells.target(cell) on first use, so their transport
        is the cell's; this app's own when the URL is its own."""
        url = cell.transport_url
        if not url or url == CONF.transport_url:
            return self
        services = self._cells.get(url)
        if services is None:
            services = self._cells.setdefault(url, _CellServices(self, cell))
        return services


class _CellServices:
    """A cell's conductor, scheduler and compute clients (made when first
    used: cell0's are never), with the app's policy and keeper."""

    def __init__(self, app_services, cell):
        self._cell = cell
        self.enforcer = app_services.enforcer
        self.policy = app_services.policy
        self.keeper = app_services.keeper
        self._clients = {}
        self._lock = threading.Lock()

    def _client(self, name, factory):
        client = self._clients.get(name)
        if client is None:
            with self._lock, cells.target(self._cell):
                client = self._clients.get(name) or factory()
                self._clients[name] = client
        return client

    @property
    def conductor(self):
        return self._client('conductor', conductor_rpcapi.ComputeTaskAPI)

    @property
    def scheduler(self):
        return self._client('scheduler', scheduler_rpcapi.SchedulerAPI)

    @property
    def compute(self):
        return self._client('compute', compute_rpcapi.ComputeAPI)


def _before():
    flask.g.version = None
    path = flask.request.path
    if _UNVERSIONED.match(path) or _PUBLIC.match(path):
        return None
    flask.g.version = microversion.from_headers(flask.request.headers)
    # One id per request, the one oslo.middleware's request_id returns in
    # x-openstack-request-id (and logs carry): not a second one.
    flask.g.context = auth.context_from_request(
        flask.request.headers, CONF,
        flask.request.environ.get('openstack.request_id'))
    return None


def _after(response):
    ctxt = flask.g.get('context')
    if ctxt is not None:
        response.headers['x-openstack-request-id'] = ctxt.request_id
        response.headers['x-compute-request-id'] = ctxt.request_id
    version_ = flask.g.get('version')
    if version_ is not None:
        response.headers['OpenStack-API-Version'] = 'compute %s' % version_
        response.headers['X-OpenStack-Nova-API-Version'] = str(version_)
        response.headers['Vary'] = ('OpenStack-API-Version, '
                                    'X-OpenStack-Nova-API-Version')
    return response


def _on_error(exc):
    if isinstance(exc, exception.NovaMovesException):
        # A 501 is Nova's answer for what the hypervisor lacks (os-hosts'
        # power actions), not a fault of ours to log with a traceback.
        if exc.code == 501:
            LOG.info('Not implemented: %s', exc.message)
        elif exc.code >= 500:
            LOG.exception('Unexpected error')
        return faults.fault_response(exc.code, exc.message)
    if isinstance(exc, http_exc.MethodNotAllowed):
        # The URL map holds one rule per path of the table, with exactly
        # the table's methods: werkzeug's valid methods are the table's.
        response = faults.fault_response(exc.code, exc.description)
        response.headers['Allow'] = ', '.join(sorted(exc.valid_methods or ()))
        return response
    if isinstance(exc, http_exc.HTTPException):
        return faults.fault_response(exc.code, exc.description)
    if isinstance(exc, (db_exc.DBDataError, sa_exc.DataError)) or (
            # oslo.db wraps the DataErrors it has no filter for (MySQL's
            # 1366, incorrect string value) as a plain DBError.
            isinstance(exc, db_exc.DBError)
            and isinstance(exc.inner_exception, sa_exc.DataError)):
        # Last line of defence: input the views did not bound (a value
        # the column cannot hold) is the client's error, not ours.
        LOG.warning('Input the database refused: %s', exc)
        return faults.fault_response(
            400, 'Invalid input: a value is out of range or cannot be '
                 'stored.')
    if db_retry.is_unavailable(exc):
        # Restarted or failing over: the client should come back, not
        # report a bug. Retry-After is the longest the services wait
        # between two reconnection attempts.
        LOG.warning('Database unavailable: %s', exc)
        response = faults.fault_response(
            503, 'The database is unavailable; retry later.')
        response.headers['Retry-After'] = str(
            max(1, CONF.database.db_max_retry_interval))
        return response
    if isinstance(exc, rpc.UNREACHABLE):
        # A cast given up on after [DEFAULT] move_step_cast_wait (a
        # cell's broker away): its sender undid the request's claim.
        LOG.warning('Message queue unreachable: %s', exc)
        return faults.fault_response(
            503, 'The message queue cannot be reached; the request was '
                 'not carried out. Retry later.')
    LOG.exception('Unexpected error')
    return faults.fault_response(
        500, 'Unexpected API Error. %s' % type(exc).__name__)


def _flask_rule(path):
    return re.sub(r'{([^{}]+)}', r'<\1>', path)


def _view(methods):
    """The view of one path: the table's handler for the method (HEAD is
    GET's, as Flask answers it)."""
    def view(**kwargs):
        method = flask.request.method
        name, handler = methods['GET' if method == 'HEAD' else method]
        # Before the handler: Nova's query schema is checked first.
        query_params.check(name)
        server_id = kwargs.get('server_id')
        if server_id is None or not cell_routing.enabled():
            return api_req.dispatch(handler, **kwargs)
        # One mapping lookup per request: the handler runs in the
        # server's cell (its database, its RPC clients).
        with cell_routing.server_target(server_id, method, _action_name):
            return api_req.dispatch(handler, **kwargs)
    return view


def _action_name():
    """The server action a POST .../action names, or None."""
    if not flask.request.path.endswith('/action'):
        return None
    body = api_req.json_body()
    return next(iter(body), None) if isinstance(body, dict) else None


def add_routes(app, table):
    for path, methods in table.items():
        app.add_url_rule(_flask_rule(path), path, _view(methods),
                         methods=sorted(methods))


def create_app():
    # A request does not wait for an unreachable database (holding a
    # worker); it answers 503 + Retry-After. Services do wait.
    CONF.set_default('use_db_reconnect', False, group='database')
    app = flask.Flask('nova_moves.api')
    app.json.sort_keys = False
    app.url_map.strict_slashes = False
    app.extensions['nova_moves'] = Services()
    # GET /openapi.json (versions.openapi) builds it on first use.
    app.extensions['nova_moves.openapi'] = openapi.text
    app.before_request(_before)
    app.after_request(_after)
    app.register_error_handler(Exception, _on_error)
    add_routes(app, routes.table(CONF))
    # cors, proxy headers, request id, /healthcheck, access log, input
    # guard, size limit, auth (nova_moves/api/pipeline.py).
    app.wsgi_app = pipeline.build(ProjectIdMiddleware(app.wsgi_app))
    auth.check_listen(CONF)
    return app
