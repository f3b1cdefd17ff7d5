"""Nova's fault bodies: {"badRequest": {"code": 400, "message": "..."}}.

A message never echoes a request value beyond a short prefix, whichever
view composed it ("Flavor <100 KB flavorRef> could not be found"): a run
of more than ECHO_MAX non-blank characters is cut to an escaped excerpt,
and the whole message to MESSAGE_MAX characters."""
import re

import flask

from nova_moves.api import input_guard

ECHO_MAX = 80
EXCERPT = 64
MESSAGE_MAX = 1024
_LONG_WORD = re.compile(r'\S{%d,}' % (ECHO_MAX + 1))

FAULT_NAMES = {400: 'badRequest', 401: 'unauthorized', 403: 'forbidden',
               404: 'itemNotFound', 405: 'badMethod',
               409: 'conflictingRequest', 413: 'overLimit',
               415: 'badMediaType', 429: 'overLimit', 501: 'notImplemented',
               503: 'serviceUnavailable'}


def bounded(message):
    """``message`` with no long echo of a request value."""
    if not isinstance(message, str):
        return message
    message = _LONG_WORD.sub(
        lambda m: input_guard.excerpt(m.group(), EXCERPT), message)
    if len(message) > MESSAGE_MAX:
        message = message[:MESSAGE_MAX] + '...'
    return message


def fault_response(code, message):
    message = bounded(message)
    name = FAULT_NAMES.get(code, 'computeFault')
    response = flask.jsonify({name: {'code': code, 'message': message}})
    response.status_code = code
    return response
