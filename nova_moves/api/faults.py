"""Nova's fault bodies: {"badRequest": {"code": 400, "message": "..."}}."""
import flask

FAULT_NAMES = {400: 'badRequest', 401: 'unauthorized', 403: 'forbidden',
               404: 'itemNotFound', 405: 'badMethod',
               409: 'conflictingRequest', 413: 'overLimit',
               415: 'badMediaType', 429: 'overLimit', 501: 'notImplemented',
               503: 'serviceUnavailable'}


def fault_response(code, message):
    name = FAULT_NAMES.get(code, 'computeFault')
    response = flask.jsonify({name: {'code': code, 'message': message}})
    response.status_code = code
    return response
