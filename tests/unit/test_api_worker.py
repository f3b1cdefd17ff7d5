"""The API worker's pieces that need no socket: the WSGI call made in a
thread, the environ built from a buffered request, the open-files limit.
The server itself is tested for real in tests/functional/test_api_server.py
(drain, SIGHUP, IPv6) and test_api_http.py (idle and slow clients)."""
import json
import resource
from unittest import mock

import testtools
from tornado import httputil

from nova_moves.wsgi import server
from nova_moves.wsgi import worker


class RunWSGITest(testtools.TestCase):

    def test_whole_response_and_close(self):
        closed = []

        class Body(list):
            def close(self):
                closed.append(True)

        def app(environ, start_response):
            write = start_response('202 Accepted', [('X-A', '1')])
            write(b'early ')
            return Body([b'a', b'', b'b'])
        self.assertEqual(('202 Accepted', [('X-A', '1')], b'early ab'),
                         worker.run_wsgi(app, {}))
        self.assertEqual([True], closed)

    def test_app_without_start_response(self):
        self.assertRaises(RuntimeError, worker.run_wsgi,
                          lambda environ, start_response: [b'x'], {})


class EnvironTest(testtools.TestCase):

    def request(self, method, path, headers, chunks):
        srv = mock.Mock(address=('127.0.0.1', '8774'), multiprocess=True,
                        busy={})
        conn = mock.Mock()
        conn.context.remote_ip = '192.0.2.7'
        conn.context.address = ('192.0.2.7', 40000)
        conn.stream.socket.getsockname.return_value = ('127.0.0.1', 8774)
        req = worker.Request(srv, object(), conn)
        req.headers_received(
            httputil.RequestStartLine(method, path, 'HTTP/1.1'),
            httputil.HTTPHeaders(headers))
        for chunk in chunks:
            req.data_received(chunk)
        return req.environ()

    def test_chunked_body_gets_its_length(self):
        environ = self.request('POST', '/v2.1/servers/a%20b/action?x=1',
                               {'Transfer-Encoding': 'chunked',
                                'Content-Type': 'application/json',
                                'X-Auth-Token': 'admin:admin',
                                'X_Auth_Token': 'spoofed'},
                               [b'{"migrate"', b': null}'])
        self.assertEqual('17', environ['CONTENT_LENGTH'])
        self.assertEqual(b'{"migrate": null}', environ['wsgi.input'].read())
        self.assertEqual('/v2.1/servers/a b/action', environ['PATH_INFO'])
        self.assertEqual('x=1', environ['QUERY_STRING'])
        self.assertEqual('application/json', environ['CONTENT_TYPE'])
        self.assertEqual('admin:admin', environ['HTTP_X_AUTH_TOKEN'])
        self.assertNotIn('HTTP_TRANSFER_ENCODING', environ)
        self.assertEqual('192.0.2.7', environ['REMOTE_ADDR'])
        # The connection's own address, for noauth's loopback check.
        self.assertEqual('127.0.0.1', environ['SERVER_ADDR'])
        self.assertTrue(environ['wsgi.input_terminated'])

    def test_path_bytes_as_latin1(self):
        environ = self.request('GET', '/os-hypervisors/%C2%B2', {}, [])
        self.assertEqual('/os-hypervisors/\xc2\xb2', environ['PATH_INFO'])
        self.assertEqual('0', environ['CONTENT_LENGTH'])


class OpenFilesLimitTest(testtools.TestCase):

    @mock.patch.object(resource, 'setrlimit')
    @mock.patch.object(resource, 'getrlimit', return_value=(1024, 524288))
    def test_raised_to_the_hard_limit(self, getrlimit, setrlimit):
        self.assertEqual(524288, server.raise_open_files_limit(5100))
        setrlimit.assert_called_once_with(resource.RLIMIT_NOFILE,
                                          (524288, 524288))

    @mock.patch.object(resource, 'setrlimit')
    @mock.patch.object(resource, 'getrlimit', return_value=(65536, 65536))
    def test_left_alone_when_enough(self, getrlimit, setrlimit):
        self.assertEqual(65536, server.raise_open_files_limit(5100))
        setrlimit.assert_not_called()


class WorkerErrorTest(testtools.TestCase):

    def test_an_app_that_fails_gets_a_fault_body_not_bare_text(self):
        srv = mock.Mock(busy={})
        srv.date.return_value = 'Sun, 29 Nov 2026 07:00:00 GMT'
        conn = mock.Mock()
        req = worker.Request(srv, object(), conn)
        req.start_line = httputil.RequestStartLine('GET', '/v2.1/servers',
                                                   'HTTP/1.1')
        req._respond_error(500, 'Internal Server Error')
        _start, headers, body = conn.write_headers.call_args[0]
        self.assertEqual('application/json', headers['Content-Type'])
        self.assertEqual(500, json.loads(body)['computeFault']['code'])
