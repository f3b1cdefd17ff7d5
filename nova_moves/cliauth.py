"""How the operator's command lines (nova-moves-manage host ..., the
harness attached with --endpoint) authenticate: a keystoneauth1 session
built the way the openstack client builds one.

Credentials come from ``--os-cloud`` (clouds.yaml), the ``OS_*``
environment or the ``--os-*`` options, and the compute endpoint from the
service catalog (``--os-endpoint`` overrides it). The API's loopback
``noauth`` mode is used only when asked for: ``--os-auth-type none``
(token ``--os-token``, default ``admin:admin``).
"""
import os

from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint

NOAUTH_TYPES = ('none', 'noauth')
# --os-X option -> the auth plugin's parameter (openstack client names).
AUTH_OPTIONS = ('auth_url', 'username', 'password', 'user_id',
                'project_name', 'project_id', 'user_domain_name',
                'user_domain_id', 'project_domain_name',
                'project_domain_id', 'token', 'system_scope',
                'application_credential_id',
                'application_credential_secret')


class AuthError(Exception):
    """No usable credentials: the message says what to give."""


def add_arguments(parser, endpoint_help=None):
    """The openstack client's --os-* options (defaults from OS_*)."""
    env = os.environ.get
    parser.add_argument('--os-cloud', default=env('OS_CLOUD'),
                        metavar='NAME', help='cloud in clouds.yaml '
                        '(env OS_CLOUD)')
    parser.add_argument('--os-auth-type', default=env('OS_AUTH_TYPE'),
                        metavar='TYPE', help='keystoneauth plugin '
                        '(password, token, v3applicationcredential, ...), '
                        'or "none" for the API\'s loopback noauth mode '
                        '(env OS_AUTH_TYPE)')
    for name in AUTH_OPTIONS:
        flag = '--os-' + name.replace('_', '-')
        parser.add_argument(flag, default=env('OS_' + name.upper()),
                            help='(env OS_%s)' % name.upper())
    parser.add_argument('--os-region-name', default=env('OS_REGION_NAME'))
    parser.add_argument('--os-interface', default=env('OS_INTERFACE'),
                        help='catalog interface (public, internal, admin)')
    parser.add_argument('--os-cacert', default=env('OS_CACERT'))
    parser.add_argument('--insecure', action='store_true',
                        default=None)
    parser.add_argument('--os-endpoint', '--endpoint', dest='os_endpoint',
                        default=env('OS_ENDPOINT'), metavar='URL',
                        help=endpoint_help or 'compute endpoint '
                        '(http://HOST:PORT/v2.1); default: the service '
                        'catalog\'s compute endpoint')


def _explicit_auth(args):
    auth = {name: getattr(args, 'os_' + name) for name in AUTH_OPTIONS
            if getattr(args, 'os_' + name, None)}
    return auth


def session_for(args, default_endpoint=None):
    """(keystoneauth1 session, compute endpoint) from parsed options.

    ``default_endpoint`` is used only by noauth when --os-endpoint is
    not given (nova-moves-manage derives it from [api] listen/port)."""
    auth_type = (args.os_auth_type or '').lower()
    verify = False if args.insecure else (args.os_cacert or True)
    if auth_type in NOAUTH_TYPES:
        endpoint = args.os_endpoint or default_endpoint
        if not endpoint:
            raise AuthError('--os-auth-type none needs --os-endpoint URL')
        token = args.os_token or 'admin:admin'
        return (ks_session.Session(auth=token_endpoint.Token(endpoint,
                                                             token),
                                   verify=verify),
                endpoint.rstrip('/'))
    auth = _explicit_auth(args)
    if not (args.os_cloud or auth or auth_type or any(
            key.startswith('OS_') for key in os.environ)):
        raise AuthError(
            'No credentials: give --os-cloud NAME (clouds.yaml), OS_* '
            'variables or --os-auth-url/--os-username/..., or '
            '--os-auth-type none for the API\'s loopback noauth mode')
    from openstack import config as os_config  # slow import: when needed
    kwargs = {}
    if auth:
        kwargs['auth'] = auth
    if auth_type:
        kwargs['auth_type'] = auth_type
    for name in ('region_name', 'interface', 'cacert'):
        value = getattr(args, 'os_' + name)
        if value:
            kwargs[name] = value
    if args.insecure:
        kwargs['verify'] = False
    try:
        region = os_config.OpenStackConfig().get_one(
            cloud=args.os_cloud, **kwargs)
        session = region.get_session()
        endpoint = args.os_endpoint or session.get_endpoint(
            service_type='compute', interface=region.get_interface(),
            region_name=region.region_name)
    except Exception as exc:  # keystoneauth/sdk config errors
        raise AuthError('%s: %s' % (type(exc).__name__, exc))
    if not endpoint:
        raise AuthError('No compute endpoint in the service catalog '
                        '(give --os-endpoint)')
    return session, endpoint.rstrip('/')


def client_for(args, default_endpoint=None, version='2.1'):
    """An apiclient.Client over the session."""
    from nova_moves import apiclient
    session, endpoint = session_for(args, default_endpoint)
    return apiclient.Client(endpoint, version=version, auth_session=session)
