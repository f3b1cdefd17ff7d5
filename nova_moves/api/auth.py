"""Who is asking: ``[api] auth_strategy``.

``keystone``: keystonemiddleware's auth_token validates X-Auth-Token with
Keystone (the ``[keystone_authtoken]`` section) and passes the token's
user, project and roles on as X-User-Id/X-Project-Id/X-Roles headers; it
strips any such header the client sent, so only validated values reach
``context_from_request``. The role ``admin`` is admin, as in Nova.

``noauth``: the token is ``user:project`` taken as given (the user
``admin`` is admin). Anyone can claim anything, so unless the operator sets
the loudly named ``insecure_noauth_on_network`` the API refuses noauth on
anything but loopback twice: at start (``[api] listen``, for the embedded
server) and on every request (the address the request's connection came
to and came from, whatever WSGI server runs the app; see ``NoauthGuard``).
"""
import ipaddress
import json
import os
import re
import socket
import uuid

from oslo_log import log as logging

from nova_moves import context as nm_context
from nova_moves import exception

try:
    import uwsgi  # only importable inside uwsgi, which has it from start
except ImportError:
    # Once, here: a failed import is not cached, and trying it on every
    # request searched sys.path (a few stat calls) each time.
    uwsgi = None

LOG = logging.getLogger(__name__)

# Both parts non-empty, no whitespace or control characters (C0, DEL,
# C1: the ids end up in every log line of the request), and no ':' inside
# a part: there is exactly one way to read a token.
_NOAUTH_TOKEN = re.compile(
    r'^([^\s:\x00-\x1f\x7f-\x9f]+):([^\s:\x00-\x1f\x7f-\x9f]+)$')
MAX_ID = 255  # the user_id/project_id columns


class Unauthorized(exception.NovaMovesException):
    code = 401
    msg_fmt = 'Authentication required'


class InsecureConfig(ValueError):
    """A configuration that would expose an unauthenticated API."""


def is_noauth(conf):
    return _strategy(conf) == 'noauth'


def _strategy(conf):
    return 'keystone' if conf.api.auth_strategy == 'keystone' else 'noauth'


def is_loopback(address):
    """True for a loopback IP (v4, v6 or v4-mapped v6) or 'localhost'."""
    address = (address or '').strip('[]').split('%', 1)[0]
    if address == 'localhost':
        return True
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    mapped = getattr(ip, 'ipv4_mapped', None)
    return (mapped or ip).is_loopback


def check_listen(conf):
    """Refuse noauth on anything but loopback unless explicitly allowed;
    say loudly that it is allowed when it is."""
    if _strategy(conf) != 'noauth':
        return
    if conf.api.insecure_noauth_on_network:
        LOG.warning(
            '!!! [api] auth_strategy = noauth with '
            'insecure_noauth_on_network = true: ANYONE WHO CAN REACH THIS '
            'API IS ADMIN (token "admin:x"). Only for an isolated lab '
            'network; use auth_strategy = keystone anywhere else. !!!')
        return
    if not is_loopback(conf.api.listen):
        raise InsecureConfig(
            '[api] auth_strategy = noauth trusts any X-Auth-Token, so the '
            'API only listens on loopback; [api] listen = %s is not. Use '
            'auth_strategy = keystone, or listen = 127.0.0.1, or (isolated '
            'lab only) set [api] insecure_noauth_on_network = true.'
            % conf.api.listen)


def _local_address(environ):
    """The address the request's connection was accepted on, as the WSGI
    server gives it: its socket (gunicorn, werkzeug), uwsgi's connection
    fd, or SERVER_ADDR (mod_wsgi; a uwsgi front end passing it). 'unix'
    for a Unix socket; None when the server tells nothing. SERVER_NAME is
    not used: mod_wsgi and uwsgi fill it from the client's Host header."""
    for key in ('gunicorn.socket', 'werkzeug.socket'):
        sock = environ.get(key)
        if hasattr(sock, 'getsockname'):
            try:
                return _sockname(sock.getsockname())
            except OSError:
                return None
    uwsgi_fd = _uwsgi_connection_fd()
    if uwsgi_fd is not None:
        try:
            with socket.socket(fileno=os.dup(uwsgi_fd)) as sock:
                return _sockname(sock.getsockname())
        except OSError:
            return None
    return environ.get('SERVER_ADDR') or None


def _sockname(name):
    return 'unix' if isinstance(name, (str, bytes)) else name[0]


def _uwsgi_connection_fd():
    if uwsgi is None:
        return None
    try:
        return uwsgi.connection_fd()
    except Exception:  # noqa: BLE001 - not in a request, old uwsgi
        return None


# A reverse proxy names its client in one of these; the connection's
# peer is then the proxy, loopback when it runs on this host.
_FORWARDED = ('HTTP_FORWARDED', 'HTTP_X_FORWARDED_FOR', 'HTTP_X_REAL_IP')
_FORWARDED_FOR = re.compile(r'for\s*=\s*"?\[?([^\]",;]+)', re.I)


def forwarded_client(environ):
    """The client a proxy says it forwards for (the nearest hop), or None
    when no forwarding header is there; '' when one is there but names no
    address."""
    present = [key for key in _FORWARDED if key in environ]
    if not present:
        return None
    real_ip = environ.get('HTTP_X_REAL_IP', '').strip()
    if real_ip:
        return real_ip
    hops = [hop.strip() for hop in
            environ.get('HTTP_X_FORWARDED_FOR', '').split(',')
            if hop.strip()]
    if hops:
        return hops[-1]
    hops = _FORWARDED_FOR.findall(environ.get('HTTP_FORWARDED', ''))
    return hops[-1].strip() if hops else ''


def noauth_refusal(environ, trusted_proxies=()):
    """Why this request may not be served with noauth, or None.

    Fails closed: a server that does not say which address the connection
    came to is refused. A Unix socket is local, but a front end (nginx,
    Apache) that passes REMOTE_ADDR of a network client is refused, and
    so is a request a proxy forwarded (a forwarding header) unless its
    peer is one of ``trusted_proxies`` and the client it names is
    loopback."""
    local = _local_address(environ)
    if local is None:
        return ('the WSGI server does not tell which address this request '
                'came to')
    if local != 'unix' and not is_loopback(local):
        return 'this request came to a non-loopback address'
    remote = environ.get('REMOTE_ADDR')
    if remote and remote != 'unix' and _is_ip(remote) and \
            not is_loopback(remote):
        return 'this request came from a non-loopback address'
    client = forwarded_client(environ)
    if client is not None:
        if not _listed(remote, trusted_proxies):
            return ('this request was forwarded by a proxy (Forwarded, '
                    'X-Forwarded-For or X-Real-IP) that [api] '
                    'noauth_trusted_proxies does not list')
        if not is_loopback(client):
            return 'this request was forwarded for a non-loopback client'
    return None


def _listed(address, addresses):
    address = (address or '').strip('[]')
    for entry in addresses:
        entry = entry.strip().strip('[]')
        if entry == address:
            return True
        try:
            if ipaddress.ip_address(entry) == ipaddress.ip_address(address):
                return True
        except ValueError:
            continue
    return False


def _is_ip(value):
    try:
        ipaddress.ip_address(value.strip('[]').split('%', 1)[0])
        return True
    except ValueError:
        return False


class NoauthGuard:
    """noauth, checked per request: ``[api] listen`` only covers the
    embedded server, and gunicorn/uwsgi/mod_wsgi bind where their own
    configuration says."""

    def __init__(self, app, trusted_proxies=()):
        self.app = app
        self.trusted_proxies = tuple(trusted_proxies)

    def __call__(self, environ, start_response):
        why = noauth_refusal(environ, self.trusted_proxies)
        if why is None:
            return self.app(environ, start_response)
        LOG.error('Refused a request: [api] auth_strategy = noauth is '
                  'served on loopback only and %s (set auth_strategy = '
                  'keystone).', why)
        body = json.dumps({'forbidden': {'code': 403, 'message': (
            'This API uses auth_strategy = noauth, which is served on '
            'loopback only, and %s. The operator must configure '
            'auth_strategy = keystone.' % why)}}).encode()
        start_response('403 Forbidden', [
            ('Content-Type', 'application/json'),
            ('Content-Length', str(len(body)))])
        return [body]


def wrap(wsgi_app, conf):
    """The WSGI app behind auth_token when the strategy is keystone.

    delay_auth_decision lets unauthenticated requests through marked
    X-Identity-Status: Invalid, so that the version documents stay public
    and every other path gets Nova's 401 fault from this app.

    With noauth, behind NoauthGuard unless insecure_noauth_on_network."""
    if _strategy(conf) != 'keystone':
        if conf.api.insecure_noauth_on_network:
            return wsgi_app
        return NoauthGuard(wsgi_app, conf.api.noauth_trusted_proxies)
    from nova_moves.api import keystone_auth  # Keystone down: 503
    keystone_auth.set_defaults(conf)
    return keystone_auth.AuthProtocol(wsgi_app, {
        'oslo_config_config': conf, 'delay_auth_decision': True})


def _check_id(kind, value):
    if not value or len(value) > MAX_ID:
        raise Unauthorized()
    return value


def _noauth(headers):
    token = headers.get('X-Auth-Token') or ''
    match = _NOAUTH_TOKEN.match(token) if len(token) <= 2 * MAX_ID + 1 \
        else None
    if not match:
        raise Unauthorized(
            message='Authentication required: send X-Auth-Token '
                    '"user:project" (both non-empty, no whitespace, at most '
                    '%d characters each).' % MAX_ID)
    user = _check_id('user', match.group(1))
    project = _check_id('project', match.group(2))
    is_admin = user == 'admin'
    return dict(user_id=user, project_id=project, is_admin=is_admin,
                roles=['admin', 'member', 'reader'] if is_admin else
                ['member', 'reader'])


def _keystone(headers):
    if headers.get('X-Identity-Status') != 'Confirmed':
        raise Unauthorized()
    roles = [r.strip() for r in headers.get('X-Roles', '').split(',')
             if r.strip()]
    # A system-scoped token has no project; the policies (all project
    # scoped) then answer 403, as Nova does. A project token always has
    # X-Project-Id, so a client's own OpenStack-System-Scope (auth_token
    # does not strip it) changes nothing.
    system = headers.get('OpenStack-System-Scope') == 'all' and \
        not headers.get('X-Project-Id')
    return dict(user_id=_check_id('user', headers.get('X-User-Id')),
                project_id=None if system else _check_id(
                    'project', headers.get('X-Project-Id')),
                system_scope='all' if system else None,
                is_admin='admin' in roles, roles=roles,
                user_name=headers.get('X-User-Name'),
                project_name=headers.get('X-Project-Name'),
                auth_token=headers.get('X-Auth-Token'))


def context_from_request(headers, conf, request_id=None):
    """A RequestContext for the request, or Unauthorized (401); its
    ``request_id`` (a new one when not given)."""
    if _strategy(conf) == 'keystone':
        values = _keystone(headers)
    else:
        values = _noauth(headers)
    return nm_context.RequestContext(
        request_id=request_id or 'req-' + str(uuid.uuid4()),
        global_request_id=_global_request_id(headers), **values)


def _global_request_id(headers):
    # Nova accepts only its own format; anything else would end up in our
    # logs and RPC messages as given.
    value = headers.get('X-OpenStack-Request-ID')
    if value and re.match(r'^req-[0-9a-f-]{36}$', value):
        return value
    return None
