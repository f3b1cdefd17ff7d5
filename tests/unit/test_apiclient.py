"""nova_moves.apiclient: a keep-alive connection the server closed is
retried for idempotent requests, never for a POST."""
import socket
import threading

import testtools

from nova_moves import apiclient


class _DropFirst:
    """Accepts connections; the first request is read and its connection
    closed without an answer (a server closing an idle keep-alive
    connection as the request arrives), later ones get 200."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(('127.0.0.1', 0))
        self.sock.listen(4)
        self.requests = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return 'http://127.0.0.1:%d' % self.sock.getsockname()[1]

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                self.requests += 1
                if self.requests > 1:
                    conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n'
                                 b'Connection: close\r\n\r\n{}')

    def close(self):
        self.sock.close()


class RetryTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.server = _DropFirst()
        self.addCleanup(self.server.close)
        self.client = apiclient.Client(self.server.url)

    def test_get_is_sent_again_on_a_new_connection(self):
        self.assertEqual(200, self.client.get('/servers').status_code)
        self.assertEqual(2, self.server.requests)

    def test_post_is_not_sent_twice(self):
        self.assertRaises(Exception, self.client.post, '/servers', {})
        self.assertEqual(1, self.server.requests)
