"""Who is asking: ``[api] auth_strategy``.

``keystone``: keystonemiddleware's auth_token validates X-Auth-Token with
Keystone (the ``[keystone_authtoken]`` section) and passes the token's
user, project and roles on as X-User-Id/X-Project-Id/X-Roles headers; it
strips any such header the client sent, so only validated values reach
``context_from_request``. The role ``admin`` is admin, as in Nova.

``noauth``: the token is ``user:project`` taken as given (the user
``admin`` is admin). Anyone can claim anything, so the API then refuses to
listen on anything but loopback unless the operator sets the loudly named
``insecure_noauth_on_network``.
"""
import ipaddress
import re
import uuid

from nova_moves import context as nm_context
from nova_moves import exception

# Both parts non-empty, no whitespace or control characters, and no ':'
# inside a part: there is exactly one way to read a token.
_NOAUTH_TOKEN = re.compile(r'^([^\s:\x00-\x1f\x7f]+):([^\s:\x00-\x1f\x7f]+)$')
MAX_ID = 255  # the user_id/project_id columns


class Unauthorized(exception.NovaMovesException):
    code = 401
    msg_fmt = 'Authentication required'


class InsecureConfig(ValueError):
    """A configuration that would expose an unauthenticated API."""


def _strategy(conf):
    return 'keystone' if conf.api.auth_strategy == 'keystone' else 'noauth'


def check_listen(conf):
    """Refuse noauth on anything but loopback unless explicitly allowed."""
    if _strategy(conf) != 'noauth' or conf.api.insecure_noauth_on_network:
        return
    try:
        loopback = ipaddress.ip_address(conf.api.listen).is_loopback
    except ValueError:
        loopback = conf.api.listen == 'localhost'
    if not loopback:
        raise InsecureConfig(
            '[api] auth_strategy = noauth trusts any X-Auth-Token, so the '
            'API only listens on loopback; [api] listen = %s is not. Use '
            'auth_strategy = keystone, or listen = 127.0.0.1, or (isolated '
            'lab only) set [api] insecure_noauth_on_network = true.'
            % conf.api.listen)


def wrap(wsgi_app, conf):
    """The WSGI app behind auth_token when the strategy is keystone.

    delay_auth_decision lets unauthenticated requests through marked
    X-Identity-Status: Invalid, so that the version documents stay public
    and every other path gets Nova's 401 fault from this app."""
    if _strategy(conf) != 'keystone':
        return wsgi_app
    from keystonemiddleware import auth_token
    return auth_token.AuthProtocol(wsgi_app, {
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


def context_from_request(headers, conf):
    """A RequestContext for the request, or Unauthorized (401)."""
    if _strategy(conf) == 'keystone':
        values = _keystone(headers)
    else:
        values = _noauth(headers)
    return nm_context.RequestContext(
        request_id='req-' + str(uuid.uuid4()),
        global_request_id=_global_request_id(headers), **values)


def _global_request_id(headers):
    # Nova accepts only its own format; anything else would end up in our
    # logs and RPC messages as given.
    value = headers.get('X-OpenStack-Request-ID')
    if value and re.match(r'^req-[0-9a-f-]{36}$', value):
        return value
    return None
