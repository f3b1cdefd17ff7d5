"""nova-moves-api's HTTP side on the operator's configuration
(api_server_base): connections that send nothing or send slowly hold no
worker thread, and oslo.middleware's pipeline (request id with an access
log, /healthcheck, CORS, proxy headers, size limit) answers as
configured."""
import socket
import threading
import time

import requests

from tests.functional import api_server_base


class APIHTTPTest(api_server_base.APIServerTestCase):

    def test_idle_connections_hold_no_thread(self):
        # Connections that never send a request (half-open, slowloris)
        # wait in the workers' pollers, not in their 2 x 4 threads.
        port = self.stack.api_port
        idle = [socket.create_connection(('127.0.0.1', port), 10)
                for _ in range(100)]
        self.addCleanup(lambda: [sock.close() for sock in idle])
        time.sleep(1)  # accepted by now
        started = time.monotonic()
        response = requests.get(
            'http://127.0.0.1:%d/v2.1/flavors' % port, timeout=60,
            headers={'X-Auth-Token': 'admin:admin'})
        self.assertEqual(200, response.status_code)
        self.assertLess(time.monotonic() - started, 3)
        # ...and each is closed after [api] keep_alive_timeout (3 s).
        for sock in idle:
            sock.settimeout(30)
            try:
                self.assertEqual(b'', sock.recv(1))
            except ConnectionResetError:
                pass

    def test_slow_clients_hold_no_thread(self):
        # 60 clients sending their headers a line a second and 60 sending
        # a body a byte a second, against 2 workers x 4 threads: a server
        # that gives a thread to a request before it is read whole stops
        # answering anyone else.
        port = self.stack.api_port
        slow = SlowClients(port, 60)
        self.addCleanup(slow.close)
        slow.start()
        time.sleep(2)  # every slow one has sent more than its first line
        session = requests.Session()
        session.headers['X-Auth-Token'] = 'admin:admin'
        times = []
        for _ in range(20):
            started = time.monotonic()
            response = session.get(
                'http://127.0.0.1:%d/v2.1/flavors' % port, timeout=30)
            self.assertEqual(200, response.status_code, response.text)
            times.append(time.monotonic() - started)
            time.sleep(0.2)
        # Generous: the machine is shared; the old server took > 30 s.
        self.assertLess(max(times), 5, times)
        # The server, not the clients, ends them: headers within [api]
        # keep_alive_timeout (3 s, below header_timeout), bodies within
        # body_timeout (6 s).
        closed = slow.wait_closed(20)
        self.assertEqual({'header': 60, 'body': 60}, closed)

    def test_healthcheck_needs_no_token(self):
        url = 'http://127.0.0.1:%d/healthcheck' % self.stack.api_port
        response = requests.get(url, timeout=30)
        self.assertEqual(200, response.status_code, response.text)
        response = requests.get(url, headers={'Accept': 'application/json'},
                                timeout=30)
        self.assertEqual(200, response.status_code, response.text)
        self.assertEqual([], response.json()['reasons'])
        # Everything else still wants one.
        self.assertEqual(401, requests.get(
            'http://127.0.0.1:%d/v2.1/servers' % self.stack.api_port,
            timeout=30).status_code)

    def test_request_id_returned_and_logged(self):
        marker = len(self.stack.log('api'))
        response = self.admin.get('/flavors', expect=200)
        request_id = response.headers['x-openstack-request-id']
        self.assertRegex(request_id, r'^req-[0-9a-f-]{36}$')
        self.assertEqual(request_id, response.headers['x-compute-request-id'])
        # The access line: the request id, status, bytes and duration.
        line = self.admin.wait_for(
            lambda: _line_with(self.stack.log('api')[marker:], request_id),
            timeout=10, what='access log line')
        self.assertRegex(line, r'"GET /v2.1/flavors" status: 200 len: %d '
                               r'microversion: 2.1 time: \d+\.\d+' % len(
                                   response.content))
        # A caller's valid global request id is kept; a bogus one is not.
        global_id = 'req-12345678-1234-1234-1234-123456789012'
        self.admin.session.headers['X-OpenStack-Request-ID'] = global_id
        self.addCleanup(self.admin.session.headers.pop,
                        'X-OpenStack-Request-ID')
        response = self.admin.get('/flavors', expect=200)
        self.assertNotEqual(global_id,
                            response.headers['x-openstack-request-id'])
        line = self.admin.wait_for(
            lambda: _line_with(self.stack.log('api')[marker:],
                               response.headers['x-openstack-request-id']),
            timeout=10, what='access log line')
        self.assertIn(global_id, line)
        # No framework or version in Server: (werkzeug's said both).
        self.assertNotIn('werkzeug', response.headers.get('Server', '')
                         .lower())
        self.assertNotIn('python', response.headers.get('Server', '')
                         .lower())
        self.assertEqual('nova-moves', response.headers.get('Server'))

    def test_body_over_the_limit_is_413(self):
        flavor = {'flavor': {'name': 'x' * 5000, 'vcpus': 1, 'ram': 1,
                             'disk': 1}}
        response = self.admin.post('/flavors', flavor)
        self.assertEqual(413, response.status_code, response.text)
        self.assertIn('at most 4096 bytes',
                      response.json()['overLimit']['message'])
        # Unannounced length (chunked) is held to the same limit.
        response = requests.post(
            self.stack.endpoint + '/flavors',
            data=iter([b'{"flavor": {"name": "', b'x' * 5000, b'"}}']),
            headers={'X-Auth-Token': 'admin:admin',
                     'Content-Type': 'application/json'}, timeout=30)
        self.assertEqual(413, response.status_code, response.text)

    def test_cors_preflight_for_the_allowed_origin(self):
        url = self.stack.endpoint + '/servers'
        response = requests.options(url, headers={
            'Origin': 'https://dashboard.example',
            'Access-Control-Request-Method': 'GET'}, timeout=30)
        self.assertEqual('https://dashboard.example', response.headers.get(
            'Access-Control-Allow-Origin'))
        response = requests.options(url, headers={
            'Origin': 'https://evil.example',
            'Access-Control-Request-Method': 'GET'}, timeout=30)
        self.assertNotIn('Access-Control-Allow-Origin', response.headers)

    def test_links_follow_the_tls_proxy(self):
        response = requests.get(
            'http://127.0.0.1:%d/v2.1/' % self.stack.api_port,
            headers={'X-Forwarded-Proto': 'https',
                     'X-Forwarded-Host': 'compute.example'}, timeout=30)
        self.assertEqual(200, response.status_code, response.text)
        hrefs = [link['href'] for link in response.json()['version']['links']
                 if link.get('rel') == 'self']
        self.assertEqual(1, len(hrefs), response.text)
        self.assertTrue(hrefs[0].startswith('https://compute.example/'),
                        hrefs)


class SlowClients:
    """``count`` slow-header and ``count`` slow-body connections, fed a
    header line or a body byte a second by one thread."""

    def __init__(self, port, count):
        self.socks = []
        self.closed = {'header': 0, 'body': 0}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._feed, daemon=True)
        for _ in range(count):
            for kind, first in (
                    ('header', b'GET /v2.1/flavors HTTP/1.1\r\n'
                               b'Host: localhost\r\n'),
                    ('body', b'POST /v2.1/flavors HTTP/1.1\r\n'
                             b'Host: localhost\r\n'
                             b'X-Auth-Token: admin:admin\r\n'
                             b'Content-Type: application/json\r\n'
                             b'Content-Length: 4000\r\n\r\n{')):
                sock = socket.create_connection(('127.0.0.1', port), 10)
                sock.sendall(first)
                sock.setblocking(False)
                self.socks.append((kind, sock))

    def start(self):
        self.thread.start()

    def _feed(self):
        line = 0
        while not self.stop.wait(1):
            line += 1
            for kind, sock in list(self.socks):
                try:
                    sock.send(b'X-Slow-%d: x\r\n' % line
                              if kind == 'header' else b' ')
                except (BlockingIOError, OSError):
                    pass

    def wait_closed(self, timeout):
        """{kind: connections the server closed} within ``timeout``."""
        deadline = time.monotonic() + timeout
        pending = list(self.socks)
        while pending and time.monotonic() < deadline:
            for kind, sock in list(pending):
                try:
                    data = sock.recv(4096)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b''
                if not data:
                    self.closed[kind] += 1
                    pending.remove((kind, sock))
            time.sleep(0.2)
        return self.closed

    def close(self):
        self.stop.set()
        self.thread.join(5)
        for _kind, sock in self.socks:
            sock.close()


def _line_with(log, needle):
    for line in log.splitlines():
        if needle in line and 'nova_moves.api.accesslog' in line:
            return line
    return None
