"""The API worker process: each request is read whole before a thread
runs it.

One asyncio loop per worker runs tornado's HTTP/1.1 server on the
sockets gunicorn's master bound. The loop reads a request's line,
headers and body (tornado enforces the header and body deadlines and
sizes); only a complete request goes to one of [api] threads threads,
which runs the WSGI app and returns the whole response for the loop to
write. A client that sends slowly, or not at all, costs a socket and a
buffer in the loop, never a thread: that is what gunicorn's gthread
worker could not promise (a thread there parses the headers and reads
the body from the socket itself).

gunicorn's master still supervises the workers (SIGTERM drain, SIGHUP,
worker timeout, systemd), see server.py."""
import asyncio
import concurrent.futures
import email.utils
import io
import json
import logging as std_logging
import os
import signal
import sys
import threading
import time
import urllib.parse

from gunicorn.workers import base
from oslo_config import cfg
from oslo_log import log as logging
from tornado import httpserver
from tornado import httputil

from nova_moves import conf
from nova_moves import service
from nova_moves.wsgi import edge

CONF = conf.CONF
LOG = logging.getLogger(__name__)

SERVER_HEADER = 'nova-moves'
# What a body may be beyond [oslo_middleware] max_request_body_size and
# still be read, so that the pipeline (not the server) answers its 413.
BODY_SLACK = 64 * 1024
# Headers whose name holds "_" are dropped, as gunicorn does: a proxy
# that set X-Forwarded-For could not stop a client's X_Forwarded_For.
_NO_BODY = frozenset((204, 304))
_FAULT_NAMES = {400: 'badRequest', 500: 'computeFault'}


class _Date:
    """The Date header, formatted once a second."""
    second = None
    value = None

    def __call__(self):
        now = int(time.time())
        if now != self.second:
            self.value = email.utils.formatdate(now, usegmt=True)
            self.second = now
        return self.value


def _local_address(stream):
    """The connection's own address: an IP, or 'unix'."""
    try:
        name = stream.socket.getsockname()
    except (AttributeError, OSError):  # closed meanwhile
        return ''
    return 'unix' if isinstance(name, (str, bytes)) else name[0]


def run_wsgi(app, environ):
    """In a worker thread: the app's status, headers and whole body."""
    response = []
    chunks = []

    def start_response(status, headers, exc_info=None):
        if exc_info and response:
            raise exc_info[1].with_traceback(exc_info[2])
        response[:] = [status, headers]
        return chunks.append

    result = app(environ, start_response)
    try:
        for chunk in result:
            if chunk:
                chunks.append(chunk)
    finally:
        close = getattr(result, 'close', None)
        if close is not None:
            close()
    if not response:
        raise RuntimeError('the app returned without start_response')
    return response[0], response[1], b''.join(chunks)


class Request(httputil.HTTPMessageDelegate):
    """One request on one connection: buffered by the loop, run in a
    thread, answered by the loop."""

    def __init__(self, server, server_conn, request_conn):
        self.server = server
        self.server_conn = server_conn
        self.conn = request_conn
        self.start_line = None
        self.headers = None
        self.chunks = []
        # Set for a body too big to read: its announced Content-Length,
        # and the stream taken over from tornado to answer on.
        self.announced = None
        self.stream = None
        self.local_addr = ''
        self.finishing = False

    def headers_received(self, start_line, headers):
        self.start_line = start_line
        self.headers = headers
        self.local_addr = _local_address(self.conn.stream)
        self.server.progress(self.server_conn, self.server.reading)
        length = headers.get('Content-Length', '')
        if length.isdigit() and int(length) > self.server.max_body_size:
            # Too big to read: the app answers now, from the announced
            # length (the pipeline's 413, in Nova's fault format, logged
            # as any request), and the connection is closed after it
            # instead of reading the body.
            self.announced = length
            self.stream = self.conn.detach()
            self.finish()

    def data_received(self, chunk):
        self.chunks.append(chunk)

    def on_connection_close(self):
        # The client went away before its request was complete.
        self.chunks = []

    def body_too_big(self):
        """A chunked body grew past what the server reads: answer the
        pipeline's 413 now (as for an announced length) and linger."""
        self.announced = str(self.server.max_body_size + 1)
        self.chunks = []
        self.stream = self.conn.detach()
        self.finish()

    def finish(self):
        if self.finishing:
            return  # answered early (body_too_big); tornado calls again
        self.finishing = True
        # From here the request is in flight: a drain waits for it (one
        # still being read is not: its client can send it again).
        self.server.progress(self.server_conn, None)
        self.server.busy[self.server_conn] = self
        try:
            environ = self.environ()
        except ValueError:
            self._respond_error(400, 'Bad Request')
            return
        future = self.server.executor.submit(run_wsgi, self.server.app,
                                             environ)
        loop = self.server.loop
        future.add_done_callback(
            lambda f: loop.call_soon_threadsafe(self._respond, f))

    def environ(self):
        start, headers = self.start_line, self.headers
        body = b''.join(self.chunks)
        self.chunks = []
        target = start.path
        if target.startswith(('http://', 'https://')):
            parts = urllib.parse.urlsplit(target)
            target = parts.path + ('?' + parts.query if parts.query else '')
        path, _, query = target.partition('?')
        host, port = self.server.address
        context = self.conn.context
        environ = {
            'REQUEST_METHOD': start.method,
            'SCRIPT_NAME': '',
            # PEP 3333: the decoded path's bytes, as latin-1.
            'PATH_INFO': urllib.parse.unquote_to_bytes(path).decode(
                'latin-1'),
            'QUERY_STRING': query,
            'SERVER_NAME': host,
            'SERVER_PORT': port,
            'SERVER_PROTOCOL': start.version,
            'REMOTE_ADDR': context.remote_ip,
            # The address the connection came to (mod_wsgi's name): what
            # noauth's loopback check reads, whatever [api] listen says.
            'SERVER_ADDR': self.local_addr,
            'REMOTE_PORT': str(context.address[1]) if isinstance(
                context.address, tuple) else '',
            # The whole body is here: its length is known even when the
            # client sent it chunked.
            'CONTENT_LENGTH': self.announced or str(len(body)),
            'wsgi.version': (1, 0),
            'wsgi.url_scheme': 'http',
            'wsgi.input': io.BytesIO(body),
            'wsgi.input_terminated': True,
            'wsgi.errors': sys.stderr,
            'wsgi.multithread': True,
            'wsgi.multiprocess': self.server.multiprocess,
            'wsgi.run_once': False,
        }
        for name in headers:
            if '_' in name:
                continue
            key = name.upper().replace('-', '_')
            if key == 'CONTENT_TYPE':
                environ[key] = headers[name]
            elif key not in ('CONTENT_LENGTH', 'TRANSFER_ENCODING'):
                environ['HTTP_' + key] = ','.join(headers.get_list(name))
        return environ

    def _respond(self, future):
        try:
            try:
                status, headers, body = future.result()
                code, _, reason = status.partition(' ')
                code = int(code)
            except Exception:
                LOG.exception('The API failed to answer %s %s',
                              self.start_line.method, self.start_line.path)
                self._respond_error(500, 'Internal Server Error')
                return
            out = httputil.HTTPHeaders()
            for name, value in headers:
                out.add(name, value)
            self._write(code, reason, out, body)
        finally:
            self.server.busy.pop(self.server_conn, None)

    def _respond_error(self, code, reason):
        # Nova's fault body, as every other answer: never a bare text.
        self.server.busy.pop(self.server_conn, None)
        body = json.dumps({_FAULT_NAMES.get(code, 'computeFault'): {
            'code': code, 'message': reason}}).encode()
        self._write(code, reason, httputil.HTTPHeaders(
            {'Content-Type': 'application/json'}), body)

    def _write(self, code, reason, headers, body):
        if 'Server' not in headers:
            headers['Server'] = SERVER_HEADER
        if 'Date' not in headers:
            headers['Date'] = self.server.date()
        if ('Content-Length' not in headers and code not in _NO_BODY and
                code >= 200):
            headers['Content-Length'] = str(len(body))
        if self.start_line.method == 'HEAD' or code in _NO_BODY:
            body = b''
        if self.stream is not None:
            self._write_and_close(code, reason, headers, body)
            return
        try:
            self.conn.write_headers(
                httputil.ResponseStartLine('HTTP/1.1', code, reason),
                headers, body or None)
            self.conn.finish()
        except Exception:
            # The client left, or the app's headers were not HTTP: the
            # connection goes; the worker stays.
            LOG.debug('Could not write the response', exc_info=True)
            self.conn.close()


    def _write_and_close(self, code, reason, headers, body):
        headers['Connection'] = 'close'
        head = ['HTTP/1.1 %d %s' % (code, reason)] + [
            '%s: %s' % (name, value) for name, value in headers.get_all()]
        stream, self.stream = self.stream, None
        if stream.closed():
            return
        try:
            if any('\r' in line or '\n' in line for line in head):
                raise ValueError('CR or LF in a response header')
            written = stream.write(
                ('\r\n'.join(head) + '\r\n\r\n').encode('latin-1') + body)
        except Exception:
            LOG.debug('Could not write the response', exc_info=True)
            stream.close()
            return

        server = self.server

        def linger(future):
            if future.exception() is not None:  # a client that left
                stream.close()
                return
            server.loop.create_task(server.linger(stream))
        written.add_done_callback(linger)


class HTTPServer(edge.Edge, httpserver.HTTPServer):
    """tornado's server with a connection cap that sheds the least
    advanced connections (edge.py), and the requests in flight known (for
    the drain)."""

    def initialize(self, app, executor, address, multiprocess,
                   max_connections, max_per_source=0, **kwargs):
        super().initialize(None, **kwargs)
        self.loop = asyncio.get_event_loop()
        self.app = app
        self.executor = executor
        self.address = address
        self.multiprocess = multiprocess
        self.max_connections = max_connections
        self.max_body_size = kwargs['max_body_size']
        self.date = _Date()
        # HTTP1ServerConnection -> its Request read whole and not yet
        # answered.
        self.busy = {}
        self.init_edge(max_per_source)

    def start_request(self, server_conn, request_conn):
        self.progress(server_conn, self.waiting)
        request = Request(self, server_conn, request_conn)
        edge.answer_413_for_chunked(request_conn, request)
        return request

    def close_idle(self):
        for conn in list(self._connections):
            if conn not in self.busy:
                conn.stream.close()


def max_body_size():
    """What the server reads of a body: [oslo_middleware]
    max_request_body_size and some slack, so that a body a little over
    the limit gets the pipeline's 413 with its message; a bigger one
    gets the same 413 before the rest is read (announced or chunked),
    then a lingering close (edge.py)."""
    try:
        limit = CONF.oslo_middleware.max_request_body_size
    except cfg.NoSuchOptError:
        # Not registered until the pipeline is built (the lazy WSGI
        # entry point builds it on the first request): its default.
        limit = 112 * 1024
    return limit + BODY_SLACK


def _reload_soon(_signum, _frame):
    # Not in the handler itself: reloading takes logging's locks, which the
    # interrupted code may hold.
    threading.Thread(target=service.reload_config, daemon=True,
                     name='reload-config').start()


def _server_address(sockets):
    name = sockets[0].getsockname() if sockets else ('', 0)
    return str(name[0]), str(name[1])


class Worker(base.Worker):
    """A gunicorn worker whose event loop buffers requests for a pool
    of [api] threads threads (see the module's doc)."""

    def init_signals(self):
        # SIGHUP reloads the mutable options instead of killing the
        # worker (gunicorn leaves SIGHUP at its default in workers).
        super().init_signals()
        signal.signal(signal.SIGHUP, _reload_soon)
        signal.siginterrupt(signal.SIGHUP, False)
        # gunicorn resets SIGUSR2 to its default (exit) in workers.
        service.setup_reports('nova-moves-api')

    def run(self):
        # A malformed or timed-out client request is the client's
        # business, not a server event worth a line per connection.
        std_logging.getLogger('tornado.general').setLevel(std_logging.WARNING)
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        keepalive = self.cfg.keepalive
        executor = concurrent.futures.ThreadPoolExecutor(
            self.cfg.threads, thread_name_prefix='api')
        # One deadline per request, from the connection's opening or its
        # previous response to the end of the headers: tornado has one.
        header_timeout = CONF.api.header_timeout
        deadline = (min(keepalive, header_timeout) if keepalive > 0
                    else header_timeout)
        self.server = HTTPServer(
            self.wsgi, executor, _server_address(self.sockets),
            self.cfg.workers > 1, self.cfg.worker_connections,
            max_per_source=CONF.api.max_connections_per_source,
            no_keep_alive=keepalive <= 0,
            idle_connection_timeout=deadline,
            body_timeout=CONF.api.body_timeout,
            max_body_size=max_body_size())
        try:
            loop.run_until_complete(self._serve())
        finally:
            executor.shutdown(wait=False, cancel_futures=True)
            loop.close()

    async def _serve(self):
        for listener in self.sockets:
            listener.setblocking(False)
        self.server.add_sockets(self.sockets)
        while self.alive:
            self.notify()
            if self.ppid != os.getppid():
                self.log.info('Parent changed, shutting down: %s', self)
                break
            await asyncio.sleep(0.5)
        await self._drain()

    async def _drain(self):
        """SIGTERM: stop accepting at once, close the connections with no
        request in flight (idle, or a request still being read), let the
        requests in flight finish (graceful_timeout at most)."""
        self.server.stop()
        self.server.conn_params.no_keep_alive = True
        deadline = time.monotonic() + self.cfg.graceful_timeout
        while True:
            self.server.close_idle()
            if not self.server.busy or time.monotonic() > deadline:
                break
            self.notify()
            await asyncio.sleep(0.1)
        if self.server.busy:
            self.log.warning('%d requests still running after the '
                             'graceful shutdown timeout',
                             len(self.server.busy))
        for conn in list(self.server._connections):
            conn.stream.close()
