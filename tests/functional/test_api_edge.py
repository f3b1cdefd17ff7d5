"""nova-moves-api's worker at its limits, on raw sockets: an early 413
is readable by a client still sending (lingering close), a chunked body
over the limit is a 413 too, and a full worker sheds the connections that
have sent the least of a request for the longest, not the newcomer."""
import copy
import socket
import time

import requests

from tests.functional import api_server_base

CAP = 30
LIMIT = 4096  # api_server_base's max_request_body_size


def _read_all(sock, timeout=30):
    sock.settimeout(timeout)
    data = b''
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        data += chunk
    return data


def _closed(sock):
    """True when the server closed ``sock`` (EOF or reset)."""
    sock.setblocking(False)
    try:
        return sock.recv(4096) == b''
    except BlockingIOError:
        return False
    except OSError:
        return True


class APIEdgeTest(api_server_base.APIServerTestCase):
    EXTRA_CONF = copy.deepcopy(api_server_base.APIServerTestCase.EXTRA_CONF)
    EXTRA_CONF['api'].update({'workers': 1, 'max_connections': CAP,
                              'header_timeout': 60,
                              'keep_alive_timeout': 60,
                              'body_timeout': 60})

    def connect(self):
        sock = socket.create_connection(('127.0.0.1', self.stack.api_port),
                                        10)
        self.addCleanup(sock.close)
        return sock

    def test_413_is_readable_by_a_client_still_sending(self):
        size = 2 * 1024 * 1024
        sock = self.connect()
        sock.sendall(b'POST /v2.1/flavors HTTP/1.1\r\nHost: x\r\n'
                     b'X-Auth-Token: admin:admin\r\n'
                     b'Content-Type: application/json\r\n'
                     b'Content-Length: %d\r\n\r\n' % size)
        time.sleep(0.5)  # the answer is sent before the body
        # Without a lingering close this is a reset (EPIPE/ECONNRESET)
        # and the answer is lost.
        sock.sendall(b'x' * size)
        data = _read_all(sock)
        self.assertTrue(data.startswith(b'HTTP/1.1 413 '), data[:200])
        self.assertIn(b'overLimit', data)

    def _chunked(self, total, chunk=8192):
        sock = self.connect()
        sock.sendall(b'POST /v2.1/flavors HTTP/1.1\r\nHost: x\r\n'
                     b'X-Auth-Token: admin:admin\r\n'
                     b'Content-Type: application/json\r\n'
                     b'Connection: close\r\n'
                     b'Transfer-Encoding: chunked\r\n\r\n')
        sent = 0
        try:
            while sent < total:
                sock.sendall(b'%x\r\n%s\r\n' % (chunk, b'x' * chunk))
                sent += chunk
            sock.sendall(b'0\r\n\r\n')
        except OSError as exc:
            self.fail('the server reset a client still sending: %s' % exc)
        return _read_all(sock)

    def test_chunked_body_over_the_limit_is_413(self):
        # Past what the server reads (limit + 64 KiB): answered early.
        data = self._chunked(1024 * 1024)
        self.assertTrue(data.startswith(b'HTTP/1.1 413 '), data[:200])
        self.assertIn(b'overLimit', data)
        # Over the limit but read whole: the pipeline's 413.
        data = self._chunked(LIMIT + 8192)
        self.assertTrue(data.startswith(b'HTTP/1.1 413 '), data[:200])

    def test_a_full_worker_sheds_the_slowest_not_the_newcomer(self):
        headers = []
        for _ in range(CAP // 2):  # the oldest: headers never finished
            sock = self.connect()
            sock.sendall(b'GET /v2.1/flavors HTTP/1.1\r\nHost: x\r\n')
            headers.append(sock)
        bodies = []
        for _ in range(CAP - CAP // 2):  # headers done, body pending
            sock = self.connect()
            sock.sendall(b'POST /v2.1/flavors HTTP/1.1\r\nHost: x\r\n'
                         b'X-Auth-Token: admin:admin\r\n'
                         b'Content-Type: application/json\r\n'
                         b'Content-Length: 100\r\n\r\n{')
            bodies.append(sock)
        time.sleep(1)  # all accepted: the worker is full
        answered = 0
        for _ in range(CAP // 2):
            # Each newcomer stays connected (kept alive): every one needs
            # a place.
            sock = self.connect()
            sock.sendall(b'GET /v2.1/flavors HTTP/1.1\r\nHost: x\r\n'
                         b'X-Auth-Token: admin:admin\r\n\r\n')
            sock.settimeout(10)
            data = b''
            while b'\r\n\r\n' not in data:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                data += chunk
            answered += data.startswith(b'HTTP/1.1 200 ')
        self.assertEqual(CAP // 2, answered)
        # The newest kept-alive one is served again.
        response = requests.get(
            'http://127.0.0.1:%d/v2.1/flavors' % self.stack.api_port,
            timeout=10, headers={'X-Auth-Token': 'admin:admin'})
        self.assertEqual(200, response.status_code)
        time.sleep(0.5)
        # Those that had sent the least (no complete headers) went, the
        # oldest first; those reading a body stayed.
        self.assertEqual(CAP // 2, sum(_closed(s) for s in headers))
        self.assertEqual(0, sum(_closed(s) for s in bodies))
