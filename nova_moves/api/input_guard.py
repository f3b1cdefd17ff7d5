"""Hostile input stops here, as a 4xx with Nova's fault body.

Two layers. ``InputGuard`` (WSGI, outermost) refuses what no view should
ever see: bodies over ``MAX_BODY`` (413, before reading them; Nova's
oslo.middleware sizelimit is 112 KiB), a body that cannot be read (a
malformed chunked encoding), and a path or query string that is not UTF-8
or holds NUL or other control characters (PostgreSQL rejects NUL in any
text, so it would otherwise be a 500 deep in a query). ``parse_json``
reads a request body: no NaN/Infinity, no nesting deeper than
``MAX_DEPTH``, no NUL or lone surrogate in any key or string.

No message echoes the input beyond a short, escaped excerpt.
"""
import io
import json
import re
import urllib.parse

from nova_moves import exception

MAX_BODY = 112 * 1024
MAX_DEPTH = 32
_CONTROL = re.compile(r'[\x00-\x08\x0b-\x1f\x7f]')
_SURROGATE = re.compile(r'[\ud800-\udfff]')


def excerpt(value, limit=64):
    """A value for an error message: repr-escaped and cut short, so a
    50 MB field or a control character never reaches the client raw."""
    text = value if isinstance(value, str) else repr(value)
    text = text.encode('unicode_escape', 'backslashreplace').decode('ascii')
    return text if len(text) <= limit else text[:limit] + '...'


def refuse_unknown_query(args, allowed):
    """Nova's 400 for the first query parameter of ``args`` not in
    ``allowed`` (its query schemas: 2.75 for some routes, 2.102 all)."""
    unknown = sorted(set(args) - set(allowed))
    if unknown:
        raise exception.ValidationError(
            detail="Invalid input for query parameters. Additional "
                   "properties are not allowed ('%s' was unexpected)"
                   % excerpt(unknown[0]))


def _fault(start_response, code, name, message):
    body = json.dumps({name: {'code': code, 'message': message}}).encode()
    start_response('%d %s' % (code, {400: 'Bad Request',
                                     413: 'Request Entity Too Large'}[code]),
                   [('Content-Type', 'application/json'),
                    ('Content-Length', str(len(body)))])
    return [body]


def _text_problem(raw, what):
    """Why the WSGI (latin-1) string ``raw`` is unacceptable, or None."""
    try:
        text = urllib.parse.unquote(raw.encode('latin-1').decode('utf-8'),
                                    errors='strict')
    except (UnicodeError, ValueError):
        return '%s is not valid UTF-8.' % what
    if _CONTROL.search(text):
        return '%s contains a NUL or control character.' % what
    return None


class InputGuard:
    def __init__(self, app, max_body=MAX_BODY):
        self.app = app
        self.max_body = max_body

    def __call__(self, environ, start_response):
        for key, what in (('PATH_INFO', 'The request path'),
                          ('QUERY_STRING', 'The query string')):
            problem = _text_problem(environ.get(key, ''), what)
            if problem:
                return _fault(start_response, 400, 'badRequest', problem)
        length = environ.get('CONTENT_LENGTH')
        if length:
            try:
                length = int(length)
            except ValueError:
                return _fault(start_response, 400, 'badRequest',
                              'Invalid Content-Length.')
            if length > self.max_body:
                return self._too_big(start_response)
        elif 'chunked' in environ.get('HTTP_TRANSFER_ENCODING', '').lower():
            # Read the whole (bounded) body here: a malformed chunk is the
            # client's fault, not a 500 from inside a view.
            try:
                data = environ['wsgi.input'].read(self.max_body + 1)
            except Exception:  # noqa: BLE001 - any reader error
                return _fault(start_response, 400, 'badRequest',
                              'Malformed request body (bad chunked '
                              'transfer encoding).')
            if len(data) > self.max_body:
                return self._too_big(start_response)
            environ['wsgi.input'] = io.BytesIO(data)
            environ['CONTENT_LENGTH'] = str(len(data))
            environ.pop('HTTP_TRANSFER_ENCODING', None)
            environ['wsgi.input_terminated'] = False
        return self.app(environ, start_response)

    def _too_big(self, start_response):
        return _fault(start_response, 413, 'overLimit',
                      'Request is too large: the body may be at most %d '
                      'bytes.' % self.max_body)


def _reject_constant(name):
    raise exception.ValidationError(
        detail='Invalid JSON number %s: NaN and Infinity are not '
               'allowed.' % excerpt(name))


def _finite_float(text):
    value = float(text)
    if value in (float('inf'), float('-inf')):  # 1e400
        _reject_constant(text)
    return value


def _check_tree(value):
    """Depth, NUL and lone surrogates, iteratively (no recursion limit)."""
    stack = [(value, 1, '')]
    while stack:
        node, depth, path = stack.pop()
        if depth > MAX_DEPTH:
            raise exception.ValidationError(
                detail='The request body is nested too deeply (more than '
                       '%d levels).' % MAX_DEPTH)
        if isinstance(node, dict):
            for key, item in node.items():
                _check_string(key, path or 'a key')
                stack.append((item, depth + 1,
                              '%s/%s' % (path, excerpt(key, 32))))
        elif isinstance(node, list):
            stack.extend((item, depth + 1, '%s/%d' % (path, i))
                         for i, item in enumerate(node))
        elif isinstance(node, str):
            _check_string(node, path)


def _check_string(text, path):
    if '\x00' in text or _SURROGATE.search(text):
        raise exception.ValidationError(
            detail="Invalid input for field '%s': strings may not contain "
                   "NUL or lone surrogate characters." % (path.lstrip('/')
                                                          or '/'))


def parse_json(data):
    """The decoded JSON body, or a 400 that does not echo it."""
    try:
        text = data.decode('utf-8') if isinstance(data, bytes) else data
        body = json.loads(text, parse_constant=_reject_constant,
                          parse_float=_finite_float)
    except exception.ValidationError:
        raise
    except RecursionError:
        raise exception.ValidationError(
            detail='The request body is nested too deeply (more than %d '
                   'levels).' % MAX_DEPTH)
    except (ValueError, UnicodeDecodeError):
        raise exception.ValidationError(
            detail='Malformed request body: it is not valid JSON.')
    _check_tree(body)
    return body
