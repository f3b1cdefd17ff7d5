"""keystonemiddleware's auth_token, with Keystone down told apart from a
bad token.

In delay_auth_decision mode (the version documents stay public),
auth_token marks a token it could not validate because Keystone is
unreachable exactly as a forged one: every request became a 401 and
users suspected their credentials. This subclass answers those requests
503 with Retry-After, in Nova's fault body, and logs why."""
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


class KeystoneUnavailable(webob.exc.HTTPServiceUnavailable):
    def __init__(self):
        body = json.dumps({'serviceUnavailable': {
            'code': 503, 'message': 'The identity service (Keystone) is '
                                    'unavailable; retry later.'}})
        super().__init__(body=body, content_type='application/json',
                         charset='UTF-8',
                         headers=[('Retry-After', str(RETRY_AFTER))])


class AuthProtocol(auth_token.AuthProtocol):

    def fetch_token(self, token, allow_expired=False):
        try:
            return super().fetch_token(token, allow_expired=allow_expired)
        except ksm_exceptions.InvalidToken as exc:
            # auth_token raises InvalidToken from inside its handler of
            # the connection error: that error is the context.
            if isinstance(exc.__context__, UNREACHABLE):
                LOG.error('Keystone is unreachable; answering 503: %s',
                          exc.__context__)
                raise KeystoneUnavailable() from exc
            raise
