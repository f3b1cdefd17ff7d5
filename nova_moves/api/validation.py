"""JSON-schema validation of request bodies, per microversion.

A handler declares its body with ``@schema(body, min_version,
max_version)``, one per microversion range (Nova's decorator), and the
decorator validates it before the handler runs (as Nova's: a bad body
is a 400 before the handler's policy and lookup), so a handler that
never calls ``body()`` is validated all the same; ``body()`` returns
the validated body. A POST or PUT handler without a body declares that
instead (``@unvalidated(reason)``): tests/unit/api/test_routes.py fails
for one that declares neither. The OpenAPI document reads the same
declarations (``schemas_of``)."""
import functools

import flask
import jsonschema

from nova_moves.api import input_guard
from nova_moves.api import microversion
from nova_moves.api import request as api_req
from nova_moves import exception

BOOLEAN = {'type': ['boolean', 'string'],
           'enum': [True, 'True', 'TRUE', 'true', '1', 'ON', 'On', 'on',
                    'YES', 'Yes', 'yes', False, 'False', 'FALSE', 'false',
                    '0', 'OFF', 'Off', 'off', 'NO', 'No', 'no']}
NULLABLE_BOOLEAN = {'type': ['boolean', 'string', 'null'],
                    'enum': BOOLEAN['enum'] + [None]}
HOSTNAME = {'type': 'string', 'minLength': 1, 'maxLength': 255,
            'pattern': r'^[a-zA-Z0-9-._]*$'}
NULLABLE_HOSTNAME = {'type': ['string', 'null'], 'minLength': 1,
                     'maxLength': 255, 'pattern': r'^[a-zA-Z0-9-._]*$'}
FLAVOR_REF = {'type': ['string', 'integer'], 'minLength': 1}


def to_bool(value):
    if isinstance(value, bool):
        return value
    return str(value).lower() in ('true', '1', 'on', 'yes')


def _describe(error):
    path = input_guard.excerpt(
        '/'.join(str(p) for p in error.absolute_path), 128)
    if error.validator == 'additionalProperties':
        return input_guard.excerpt(
            'Additional properties are not allowed (%s)' %
            error.message.split('(', 1)[-1].rstrip(')'), 256)
    if error.validator == 'required':
        return "'%s' is a required property" % error.message.split("'")[1]
    where = " for field '%s'" % path if path else ''
    message = error.message
    if len(message) > 160:
        # jsonschema's message repeats the whole value; never echo it.
        message = 'It does not satisfy %s %s.' % (
            error.validator, input_guard.excerpt(error.validator_value))
    return 'Invalid input%s. Value: %s. %s' % (
        where, input_guard.excerpt(error.instance), message)


class _Validators:
    """One validator per schema, built on first use: building one costs
    more than validating a small body, and the schemas never change.
    Keyed by id() with the schema kept alive, so an id is never reused;
    bounded, because a few views build their schema per request."""
    by_id = {}
    limit = 256


def _validator(schema):
    entry = _Validators.by_id.get(id(schema))
    if entry is None or entry[0] is not schema:
        if len(_Validators.by_id) >= _Validators.limit:
            _Validators.by_id.clear()
        entry = _Validators.by_id[id(schema)] = (
            schema, jsonschema.Draft4Validator(schema))
    return entry[1]


def validate(body, schema):
    """Raise a 400 naming the offending field; return the body."""
    if body is None:
        raise exception.ValidationError(
            detail='The request body must be a JSON object.')
    validator = _validator(schema)
    errors = sorted(validator.iter_errors(body),
                    key=lambda e: (len(list(e.absolute_path)), e.path))
    if errors:
        raise exception.ValidationError(detail=_describe(errors[0]))
    return body


def schema(body, min_version=None, max_version=None):
    """Declare ``body`` (the whole request body's JSON schema; for a
    server action, ``{name: value}``) as the handler's from
    ``min_version`` to ``max_version`` (default: every version)."""
    low = min_version or microversion.MIN_VERSION
    high = max_version or microversion.MAX_VERSION

    def declare(handler):
        if not getattr(handler, 'validates_body', False):
            handler = _validating(handler)
        declared = handler.__dict__.setdefault('body_schemas', [])
        # Decorators apply bottom-up; keep the ranges in version order.
        declared.append((low, high, body))
        declared.sort(key=lambda entry: microversion.APIVersion(entry[0]))
        return handler
    return declare


def _validating(handler):
    """``handler``, its request body validated first (against the
    schema it declared for the request's version)."""
    @functools.wraps(handler)
    def validated(*args, **kwargs):
        flask.g.validated_body = (validated, body(validated))
        return handler(*args, **kwargs)
    validated.validates_body = True
    return validated


def unvalidated(reason):
    """Declare that a POST or PUT handler takes no body to validate
    (``reason`` says why: none is read, or another handler's schema
    applies)."""
    def declare(handler):
        handler.body_unvalidated = reason
        return handler
    return declare


def schemas_of(handler):
    """[(min_version, max_version, schema)] declared on ``handler``."""
    return list(getattr(handler, 'body_schemas', ()))


def schema_for(handler, version):
    """The schema ``handler`` declared for ``version``; 404 when no range
    covers it (the method does not exist at that version, as Nova's
    VersionNotFoundForAPIMethod)."""
    for low, high, body_schema in schemas_of(handler):
        if low <= version <= high:
            return body_schema
    raise exception.NotFound()


def body(handler=None):
    """This request's JSON body, validated against the schema its handler
    (or ``handler``) declared for the request's microversion."""
    handler = handler or api_req.handler()
    done = flask.g.get('validated_body')
    if done is not None and done[0] is handler:
        return done[1]  # validated by the decorator on the way in
    return validate(api_req.json_body(),
                    schema_for(handler, api_req.version()))
