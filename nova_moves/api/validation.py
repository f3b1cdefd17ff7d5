"""JSON-schema validation of request bodies, per microversion."""
import jsonschema

from nova_moves import exception

BOOLEAN = {'type': ['boolean', 'string'],
           'enum': [True, 'True', 'TRUE', 'true', '1', 'ON', 'On', 'on',
                    'YES', 'Yes', 'yes', False, 'False', 'FALSE', 'false',
                    '0', 'OFF', 'Off', 'off', 'NO', 'No', 'no']}
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
    path = '/'.join(str(p) for p in error.absolute_path)
    if error.validator == 'additionalProperties':
        return ('Additional properties are not allowed (%s)' %
                error.message.split('(', 1)[-1].rstrip(')'))
    if error.validator == 'required':
        return "'%s' is a required property" % error.message.split("'")[1]
    where = " for field '%s'" % path if path else ''
    return 'Invalid input%s. Value: %s. %s' % (
        where, error.instance, error.message)


def validate(body, schema):
    """Raise a 400 naming the offending field; return the body."""
    if body is None:
        raise exception.ValidationError(
            detail='The request body must be a JSON object.')
    validator = jsonschema.Draft4Validator(schema)
    errors = sorted(validator.iter_errors(body),
                    key=lambda e: (len(list(e.absolute_path)), e.path))
    if errors:
        raise exception.ValidationError(detail=_describe(errors[0]))
    return body
