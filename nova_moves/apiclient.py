"""A small HTTP client of the compute API, for tests, the harness and
the quickstart: token ``user:project`` (or a callable returning a token,
e.g. one renewing a Keystone token) and a microversion per call."""
import time

import requests
from requests import adapters
from urllib3.util import retry as urllib3_retry

# An idle keep-alive connection the server closes just as a request goes
# out on it fails with RemoteDisconnected: an idempotent request is sent
# again on a new connection (urllib3's default methods; never a POST).
_RETRY = urllib3_retry.Retry(total=2, connect=2, read=2, status=0, other=0,
                             raise_on_status=False)
# A POST is never sent again, so it never goes out on a connection idle
# long enough to race the server's close ([api] keep_alive_timeout, 5 s
# by default): the pool is dropped first and a new connection opened.
_STALE_FOR_POST = 2.0
_IDEMPOTENT = frozenset(('GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'))


class APIError(Exception):
    def __init__(self, response):
        self.response = response
        self.status = response.status_code
        super().__init__('%s %s -> %s %s' % (
            response.request.method, response.request.url,
            response.status_code, response.text[:500]))


class Client:

    def __init__(self, endpoint, token='admin:admin', version='2.1',
                 auth_session=None):
        self.endpoint = endpoint.rstrip('/')
        self.token = token
        self.version = version
        self.session = requests.Session()
        for prefix in ('http://', 'https://'):
            self.session.mount(prefix, adapters.HTTPAdapter(
                max_retries=_RETRY))
        # A keystoneauth1 session (nova_moves.cliauth) authenticates and
        # renews its token itself; ``token`` is then unused.
        self.auth_session = auth_session
        self._answered_at = 0.0

    def as_user(self, token, version=None):
        return Client(self.endpoint, token, version or self.version)

    def request(self, method, path, body=None, version=None, expect=None,
                params=None, headers=None):
        headers = dict(headers or {}, **{
            'OpenStack-API-Version': 'compute %s' % (
                version or self.version)})
        if self.auth_session is not None:
            response = self.auth_session.request(
                self.endpoint + path, method, json=body, headers=headers,
                params=params, timeout=120, raise_exc=False)
        else:
            headers['X-Auth-Token'] = (
                self.token() if callable(self.token) else self.token)
            if method.upper() not in _IDEMPOTENT and \
                    time.monotonic() - self._answered_at > _STALE_FOR_POST:
                self.session.close()
            response = self.session.request(
                method, self.endpoint + path, json=body, headers=headers,
                params=params, timeout=120)
            self._answered_at = time.monotonic()
        if expect is not None and response.status_code not in (
                expect if isinstance(expect, (list, tuple)) else [expect]):
            raise APIError(response)
        return response

    def get(self, path, **kw):
        return self.request('GET', path, **kw)

    def post(self, path, body=None, **kw):
        return self.request('POST', path, body, **kw)

    def put(self, path, body=None, **kw):
        return self.request('PUT', path, body, **kw)

    def delete(self, path, **kw):
        return self.request('DELETE', path, **kw)

    # -- conveniences ---------------------------------------------------
    def create_flavor(self, name, vcpus=1, ram=512, disk=1, flavor_id=None):
        body = {'flavor': {'name': name, 'vcpus': vcpus, 'ram': ram,
                           'disk': disk}}
        if flavor_id:
            body['flavor']['id'] = flavor_id
        return self.post('/flavors', body, expect=200).json()['flavor']

    def boot(self, name, flavor_id, host=None, wait=True, timeout=60,
             image_ref='fake'):
        server = {'name': name, 'flavorRef': flavor_id,
                  'imageRef': image_ref, 'networks': 'none'}
        if host:
            server['availability_zone'] = 'nova:%s' % host
        body = self.post('/servers', {'server': server},
                         expect=202).json()['server']
        if wait:
            return self.wait_for_status(body['id'], ('ACTIVE', 'ERROR'),
                                        timeout=timeout)
        return body

    def server(self, server_id, version=None):
        return self.get('/servers/%s' % server_id, version=version,
                        expect=200).json()['server']

    def action(self, server_id, body, version=None, expect=None):
        return self.post('/servers/%s/action' % server_id, body,
                         version=version, expect=expect)

    def wait_for(self, predicate, timeout=60, interval=0.1, what='condition'):
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            last = predicate()
            if last:
                return last
            time.sleep(interval)
        raise TimeoutError('timed out after %ss waiting for %s (last: %r)'
                           % (timeout, what, last))

    def wait_for_status(self, server_id, statuses, timeout=60,
                        task_state_none=True):
        statuses = (statuses,) if isinstance(statuses, str) else statuses

        def _check():
            server = self.server(server_id, version='2.47')
            if server['status'] in statuses and (
                    not task_state_none or
                    server['OS-EXT-STS:task_state'] is None):
                return server
            return None
        return self.wait_for(_check, timeout=timeout,
                             what='%s in %s' % (server_id, statuses))

    def actions(self, server_id, version='2.84'):
        return self.get('/servers/%s/os-instance-actions' % server_id,
                        version=version, expect=200).json()['instanceActions']

    def action_detail(self, server_id, request_id, version='2.84'):
        return self.get('/servers/%s/os-instance-actions/%s' % (
            server_id, request_id), version=version,
            expect=200).json()['instanceAction']

    def migrations(self, version='2.80', **params):
        return self.get('/os-migrations', version=version, params=params,
                        expect=200).json()['migrations']

    def placement(self):
        return self.get('/os-nova-moves-placement', expect=200).json()

    def services(self, binary=None, version='2.53'):
        params = {'binary': binary} if binary else None
        return self.get('/os-services', params=params, version=version,
                        expect=200).json()['services']

    def set_faults(self, host, fail_operations, operation_seconds=None):
        body = {'fail_operations': fail_operations}
        if operation_seconds is not None:
            body['operation_seconds'] = operation_seconds
        return self.put('/os-nova-moves-test/computes/%s/faults' % host,
                        body, expect=200).json()
