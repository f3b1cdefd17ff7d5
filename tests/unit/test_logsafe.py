"""Control characters in log messages: escaped by the handler filter
(every module's records) and in the API's access log line."""
import io
import logging

import fixtures
import testtools

from nova_moves.api import accesslog
from nova_moves import logsafe


class EscapeTest(testtools.TestCase):

    def test_control_characters_escaped(self):
        self.assertEqual('a\\x0ab\\x0dc\\x1b[31m\\x00\\x7f\\x85\\u2028\\x09',
                         logsafe.escape('a\nb\rc\x1b[31m\x00\x7f\x85'
                                        '\u2028\t'))
        self.assertEqual('plain é ü 日本', logsafe.escape('plain é ü 日本'))


class HandlerFilterTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.stream = io.StringIO()
        self.logger = logging.Logger('test-logsafe')
        handler = logging.StreamHandler(self.stream)
        handler.setFormatter(logging.Formatter('PREFIX %(message)s'))
        self.logger.addHandler(handler)
        logsafe.install(self.logger)
        logsafe.install(self.logger)  # once only
        self.assertEqual(1, len(handler.filters))

    def test_one_record_is_one_line(self):
        self.logger.warning('name %s, size %d, %r', 'vm\nPREFIX forged',
                            3, {'k': '\x1b'})
        self.logger.warning('no args\r\nPREFIX forged too')
        lines = self.stream.getvalue().splitlines()
        self.assertEqual(
            ["PREFIX name vm\\x0aPREFIX forged, size 3, {'k': '\\x1b'}",
             'PREFIX no args\\x0d\\x0aPREFIX forged too'], lines)

    def test_tracebacks_stay_readable(self):
        try:
            raise ValueError('boom')
        except ValueError:
            self.logger.exception('failed for %s', 'x\ny')
        text = self.stream.getvalue()
        self.assertIn('PREFIX failed for x\\x0ay\nTraceback', text)


class AccessLogTest(testtools.TestCase):

    def test_request_values_escaped(self):
        def app(environ, start_response):
            start_response('404 Not Found', [])
            return [b'{}']
        environ = {'REQUEST_METHOD': 'GE\nT', 'REMOTE_ADDR': '127.0.0.1',
                   'PATH_INFO': '/v2.1/servers/x\n2026-01-01 INFO forged'
                                '\x1b[2J\x00\xc2\x85',
                   'QUERY_STRING': 'a=\r\n'}
        logger = self.useFixture(fixtures.FakeLogger(
            name=accesslog.LOG.logger.name, level=logging.INFO,
            format='%(message)s'))
        body = accesslog.AccessLog(app)(environ, lambda *a: None)
        list(body)
        body.close()
        [line] = logger.output.splitlines()
        self.assertNotRegex(line, '[\x00-\x1f\x7f-\x9f]')
        self.assertIn('"GE\\x0aT /v2.1/servers/x\\x0a2026-01-01 INFO forged'
                      '\\x1b[2J\\x00\xc2\\x85?a=\\x0d\\x0a"', line)
