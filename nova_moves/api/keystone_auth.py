"""keystonemiddleware's auth_token, with Keystone down told apart from a
bad token.

In delay_auth_decision mode (the version documents stay public),
auth_token marks a token it could not validate because Keystone is
unreachable exactly as a forged one: every request became a 401 and
users suspected their credentials. This subclass answers those requests
503 with Retry-After, in Nova's fault body, and logs why.

Two things it does not send Keystone at all: a token longer than
MAX_TOKEN_SIZE is invalid (401) without a request (Keystone's web server
refused it with an error that read as Keystone down: a 503 and an ERROR
line per forged token). And the defaults here bound how long Keystone
may hold a request: auth_token has no timeout unless configured."""
import json

from keystoneauth1 import exceptions as ksa_exceptions
from keystonemiddleware import auth_token
from keystonemiddleware.auth_token import _exceptions as ksm_exceptions
from oslo_log import log as logging
import webob.exc

LOG = logging.getLogger(__name__)
# What auth_token itself counts as "Keystone unavailable".
UNREACHABLE = (ksa_exceptions.ConnectFailure, ksa_exceptions.DiscoveryFailure,
               ksa_exceptions.RequestTimeout, ksm_exceptions.ServiceError)
RETRY_AFTER = 10  # seconds: long enough for a restart or a failover
# Fernet tokens are under 256 bytes (Keystone's max_token_size), JWS ones
# about 800: 4 KiB is far above any real token and below the header
# size Keystone's web server accepts (Apache's 8190 bytes).
MAX_TOKEN_SIZE = 4096
# [keystone_authtoken] defaults when the operator set none: seconds a
# request to Keystone may take (connect and read) and how often a failed
# connection is tried again. auth_token's own: no timeout, 3 retries
# (a hung Keystone held an API request 95 s).
DEFAULTS = {'http_connect_timeout': 5, 'http_request_max_retries': 1}


def set_defaults(conf):
    """Our defaults for auth_token's options (registered on import)."""
    for name, value in DEFAULTS.items():
        conf.set_default(name, value, group='keystone_authtoken')


class KeystoneUnavailable(webob.exc.HTTPServiceUnavailable):
    def __init__(self):
        body = json.dumps({'serviceUnavailable': {
            'code': 503, 'message': 'The identity service (Keystone) is '
                                    'unavailable; retry later.'}})
        super().__init__(body=body, content_type='application/json',
                         charset='UTF-8',
                         headers=[('Retry-After', str(RETRY_AFTER))])


class AuthNotConfigured(webob.exc.HTTPInternalServerError):
    """[keystone_authtoken] without a service user: said in Nova's fault
    body (and the log), not as a bare 500. The API refuses to start so
    configured; this covers an app built by other means."""

    def __init__(self, problem):
        body = json.dumps({'computeFault': {
            'code': 500, 'message': 'The API\'s authentication is not '
                                    'configured; tell the operator.'}})
        LOG.error('%s', problem)
        super().__init__(body=body, content_type='application/json',
                         charset='UTF-8')


class AuthProtocol(auth_token.AuthProtocol):

    def fetch_token(self, token, allow_expired=False):
        if len(token) > MAX_TOKEN_SIZE:
            # auth_token logs it at INFO ("Invalid user token") and the
            # app answers its 401.
            raise ksm_exceptions.InvalidToken(
                'Token longer than %d bytes' % MAX_TOKEN_SIZE)
        try:
            return super().fetch_token(token, allow_expired=allow_expired)
        except ksa_exceptions.MissingAuthPlugin:
            raise AuthNotConfigured(config_problem(self._conf.oslo_conf_obj)
                                    or 'auth_token has no auth plugin')
        except ksm_exceptions.InvalidToken as exc:
            # auth_token raises InvalidToken from inside its handler of
            # the connection error: that error is the context.
            if isinstance(exc.__context__, UNREACHABLE):
                LOG.error('Keystone is unreachable; answering 503: %s',
                          exc.__context__)
                raise KeystoneUnavailable() from exc
            raise


# What [keystone_authtoken] needs for auth_token to validate a token: its
# service user (the password plugin's options, as devstack writes them).
NEEDED = ('auth_type', 'auth_url', 'username', 'password', 'project_name',
          'user_domain_name', 'project_domain_name')


def config_problem(conf):
    """Why [keystone_authtoken] cannot validate a token, naming the
    missing options; None when it can (or auth_strategy is not
    keystone). Checked at start: otherwise every request with a token
    fails inside auth_token."""
    if conf.api.auth_strategy != 'keystone':
        return None
    from keystoneauth1 import exceptions as ksa_exc
    from keystoneauth1 import loading
    group = conf.keystone_authtoken.auth_section or 'keystone_authtoken'
    if group != 'keystone_authtoken':
        loading.register_auth_conf_options(conf, group)
    try:
        plugin = loading.load_auth_from_conf_options(conf, group)
    except ksa_exc.MissingRequiredOptions as exc:
        missing = [opt.dest for opt in exc.options]
    except ksa_exc.NoMatchingPlugin as exc:
        return _problem(group, 'auth_type: %s' % exc)
    else:
        if plugin is None:
            missing = list(NEEDED)
        else:
            getter = conf[group]
            missing = [name for name in ('username', 'password')
                       if name in getter and not getter[name]
                       and not (name == 'username' and
                                getter.get('user_id'))]
    if not missing:
        return None
    return _problem(group, 'missing %s' % ', '.join(missing))


def _problem(group, what):
    return ('[api] auth_strategy = keystone, but [%s] cannot validate '
            'tokens (%s). Configure the API\'s Keystone service user there '
            '(auth_type = password, auth_url, username, password, '
            'project_name, user_domain_name, project_domain_name, '
            'www_authenticate_uri), or set [api] auth_strategy = noauth '
            '(loopback only, for tests).' % (group, what))
