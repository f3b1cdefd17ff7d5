"""The API worker's connection budget and its early answers (worker.py's
HTTPServer mixes ``Edge`` in).

Shedding. [api] max_connections bounds one worker's sockets. When it is
full, the connection that has sent the least of a request for the
longest is closed to make room for the newcomer: first those still
waiting for a request's headers (new, or kept alive after a response),
oldest first; then those reading a body, oldest first; a connection with
a request in flight is never shed (if all are, the newcomer is closed).
Slow clients that fill the worker so lose their place to whoever comes
next instead of locking every new client out. [api]
max_connections_per_source (off by default) applies the same rule to
one client address, for deployments without a front proxy.

Lingering close. After an early answer (a 413 before the body was read)
the connection is not closed at once: closing a socket with unread data
makes the kernel send a reset, which can destroy the answer before the
client, still sending, reads it. The server shuts its side down and reads
and discards what the client still sends, for at most LINGER_SECONDS and
LINGER_BYTES, then closes (as Apache's and nginx's lingering close do).
"""
import asyncio
import collections
import socket

from tornado import http1connection
from tornado import httpserver
from tornado import httputil
from tornado import iostream

LINGER_SECONDS = 10
LINGER_BYTES = 16 * 1024 * 1024
# Lingering sockets are no longer tornado's connections (not counted by
# max_connections): at most this many per worker, beyond they close.
MAX_LINGERING = 1000


class Edge:
    """Connection accounting for an httpserver.HTTPServer subclass."""

    def init_edge(self, max_per_source):
        # Connections not in flight, oldest first (see the module's doc).
        self.waiting = collections.OrderedDict()
        self.reading = collections.OrderedDict()
        self.per_source = max_per_source
        self.sources = collections.Counter()
        self.lingering = 0
        self.shed = 0
        # Connections closed to make room that tornado still holds.
        self.closing = 0

    def progress(self, server_conn, where):
        """``server_conn`` goes to the end of ``where`` (self.waiting or
        self.reading); None: in flight or closed."""
        self.waiting.pop(server_conn, None)
        self.reading.pop(server_conn, None)
        if where is not None:
            where[server_conn] = None

    def _shed(self, source=None):
        """Close the connection that has sent the least of a request for
        the longest (of ``source`` only, when given); False when every
        one has a request in flight."""
        for queue in (self.waiting, self.reading):
            for conn in queue:
                if source is None or conn.nm_source == source:
                    self.progress(conn, None)
                    conn.nm_shed = True
                    self.closing += 1
                    self.shed += 1
                    conn.stream.close()
                    return True
        return False

    def handle_stream(self, stream, address):
        source = address[0] if isinstance(address, tuple) and address \
            else None
        if self.per_source and source is not None and \
                self.sources[source] >= self.per_source and \
                not self._shed(source):
            stream.close()
            return
        # A connection being closed to make room still counts until
        # tornado lets it go (on_close): the cap may be passed by those.
        if len(self._connections) - self.closing >= \
                self.max_connections and not self._shed():
            stream.close()  # every connection has a request in flight
            return
        # tornado's handle_stream, keeping the connection it makes.
        context = httpserver._HTTPRequestContext(
            stream, address, self.protocol, self.trusted_downstream)
        conn = http1connection.HTTP1ServerConnection(
            stream, self.conn_params, context)
        conn.nm_source = source
        conn.nm_shed = False
        if source is not None:
            self.sources[source] += 1
        self._connections.add(conn)
        self.waiting[conn] = None
        conn.start_serving(self)

    def on_close(self, server_conn):
        super().on_close(server_conn)
        self.progress(server_conn, None)
        if getattr(server_conn, 'nm_shed', False):
            self.closing -= 1
        source = getattr(server_conn, 'nm_source', None)
        if source is not None:
            self.sources[source] -= 1
            if self.sources[source] <= 0:
                del self.sources[source]

    async def linger(self, stream):
        """After an early answer: shut our side down (the client reads
        the answer, then EOF), read and discard what the client still
        sends, then close."""
        if self.lingering >= MAX_LINGERING:
            stream.close()
            return
        self.lingering += 1
        try:
            stream.socket.shutdown(socket.SHUT_WR)
            deadline = self.loop.time() + LINGER_SECONDS
            drained = 0
            while drained < LINGER_BYTES:
                left = deadline - self.loop.time()
                if left <= 0:
                    break
                drained += len(await asyncio.wait_for(
                    stream.read_bytes(64 * 1024, partial=True), left))
        except (iostream.StreamClosedError, asyncio.TimeoutError, OSError,
                AttributeError):
            pass  # the client closed (what we wait for), or too slow
        finally:
            self.lingering -= 1
            stream.close()


def answer_413_for_chunked(request_conn, request):
    """tornado answers a chunked body that grows past max_body_size with
    a bare 400 and a close; this connection's reader calls
    ``request.body_too_big()`` instead (the pipeline's 413, lingering)."""
    read_chunked = request_conn._read_chunked_body

    async def read_chunked_body(delegate):
        try:
            await read_chunked(delegate)
        except httputil.HTTPInputError as exc:
            if 'too large' not in str(exc) or request_conn.stream is None:
                raise
            request.body_too_big()

    request_conn._read_chunked_body = read_chunked_body
