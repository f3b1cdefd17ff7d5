"""One INFO line per request, as Nova's request log has it:

  [req-… admin admin …] 127.0.0.1 "POST /v2.1/servers/…/action"
  status: 202 len: 0 microversion: 2.30 time: 0.0412

The request id comes from oslo.middleware's request_id (outside this
middleware); it is made the thread's logging context before anything
else runs, so every line the request logs carries it, authenticated or
not.

Every request value in the line (path, query, method, address) is
escaped (nova_moves/logsafe.py): a ``%0A`` in a path must not start a
line of the client's choosing.
"""
import time

from oslo_context import context as oslo_context
from oslo_log import log as logging

from nova_moves import logsafe

LOG = logging.getLogger(__name__)


class AccessLog:
    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        started = time.monotonic()
        request_id = environ.get('openstack.request_id')
        # Replaces whatever context an earlier request left on this thread.
        oslo_context.RequestContext(
            request_id=request_id,
            global_request_id=environ.get('openstack.global_request_id'))
        seen = {}

        def _start_response(status, headers, exc_info=None):
            seen['status'] = status.split(' ', 1)[0]
            for name, value in headers:
                if name.lower() == 'openstack-api-version':
                    seen['microversion'] = value.split(' ')[-1]
            return start_response(status, headers, exc_info)

        body = self.app(environ, _start_response)
        return _Logged(body, environ, seen, started)


class _Logged:
    """The response body, counted as it is sent; the line is written when
    the server closes it (the response is complete then)."""

    def __init__(self, body, environ, seen, started):
        self._body = body
        self._environ = environ
        self._seen = seen
        self._started = started
        self._length = 0

    def __iter__(self):
        for chunk in self._body:
            self._length += len(chunk)
            yield chunk

    def close(self):
        try:
            if hasattr(self._body, 'close'):
                self._body.close()
        finally:
            environ = self._environ
            path = environ.get('SCRIPT_NAME', '') + environ.get(
                'PATH_INFO', '')
            if environ.get('QUERY_STRING'):
                path += '?' + environ['QUERY_STRING']
            esc = logsafe.escape
            LOG.info('%s "%s %s" status: %s len: %d microversion: %s '
                     'time: %.4f', esc(environ.get('REMOTE_ADDR') or '-'),
                     esc(environ.get('REQUEST_METHOD') or '-'), esc(path),
                     self._seen.get('status', '-'), self._length,
                     esc(self._seen.get('microversion', '-')),
                     time.monotonic() - self._started)
