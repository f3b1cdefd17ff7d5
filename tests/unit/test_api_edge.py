"""The API worker's connection budget (nova_moves/wsgi/edge.py) without
sockets: who is shed when the worker, or one source, is full."""
from unittest import mock

import testtools

from nova_moves.wsgi import edge


class _Conn:
    def __init__(self, stream, params, context):
        self.stream = stream
        self.context = context
        self.served = False

    def start_serving(self, _delegate):
        self.served = True


class _Server(edge.Edge):
    protocol = None
    trusted_downstream = None
    conn_params = None

    def __init__(self, cap, per_source=0):
        self.max_connections = cap
        self._connections = set()
        self.init_edge(per_source)


class EdgeTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        patcher = mock.patch.object(edge.http1connection,
                                    'HTTP1ServerConnection', _Conn)
        patcher.start()
        self.addCleanup(patcher.stop)
        context = mock.patch.object(edge.httpserver, '_HTTPRequestContext',
                                    lambda stream, address, *a: address)
        context.start()
        self.addCleanup(context.stop)

    def connect(self, server, ip='192.0.2.1'):
        stream = mock.Mock()
        stream.closed.return_value = False
        server.handle_stream(stream, (ip, 40000))
        return stream, next((c for c in server._connections
                             if c.stream is stream), None)

    def release(self, server, conn):
        # What tornado does once a closed connection's loop ended.
        server._connections.discard(conn)
        server.progress(conn, None)
        if conn.nm_shed:
            server.closing -= 1
        server.sources[conn.nm_source] -= 1

    def test_full_sheds_waiting_then_reading_never_in_flight(self):
        server = _Server(cap=4)
        conns = [self.connect(server)[1] for _ in range(4)]
        server.progress(conns[0], None)            # in flight
        server.progress(conns[1], server.reading)  # reading a body
        # conns[2], conns[3]: waiting for headers, 2 the older.
        stream, newcomer = self.connect(server)
        self.assertTrue(newcomer.served)
        conns[2].stream.close.assert_called_once_with()
        for conn in (conns[0], conns[1], conns[3]):
            conn.stream.close.assert_not_called()
        self.release(server, conns[2])
        self.release(server, conns[3])  # its client left
        server.progress(newcomer, None)            # in flight
        server.progress(self.connect(server)[1], None)
        # Full, nobody waiting for headers: the body reader goes.
        self.assertIsNotNone(self.connect(server)[1])
        conns[1].stream.close.assert_called_once_with()
        conns[0].stream.close.assert_not_called()
        self.assertEqual(2, server.shed)

    def test_all_in_flight_closes_the_newcomer(self):
        server = _Server(cap=2)
        for _ in range(2):
            server.progress(self.connect(server)[1], None)
        stream, conn = self.connect(server)
        self.assertIsNone(conn)
        stream.close.assert_called_once_with()

    def test_per_source_sheds_within_the_source(self):
        server = _Server(cap=100, per_source=2)
        other = self.connect(server, '198.51.100.9')[1]
        first = self.connect(server)[1]
        self.connect(server)
        stream, conn = self.connect(server)  # a third from 192.0.2.1
        self.assertIsNotNone(conn)
        first.stream.close.assert_called_once_with()
        other.stream.close.assert_not_called()

    def test_per_source_off_by_default(self):
        server = _Server(cap=100)
        conns = [self.connect(server)[1] for _ in range(50)]
        self.assertEqual(0, server.shed)
        self.assertTrue(all(c.served for c in conns))
