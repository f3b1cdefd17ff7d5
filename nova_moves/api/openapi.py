"""The OpenAPI 3.1 description of the implemented API, served at
GET /openapi.json and checked in as doc/api-ref/openapi.json.

Paths and methods come from the table the app routes with (routes.py), so
every implemented route is described; request bodies are the schemas the
handlers declare with @validation.schema (POST /servers/{id}/action: one
alternative per action of server_actions.ACTIONS); summaries and response
schemas are in openapi_operations.py, openapi_routes.py and
openapi_schemas.py. Microversions are OpenAPI extensions:

- on an operation: ``x-min-version`` / ``x-max-version``;
- on a property: ``x-min-version`` / ``x-max-version`` (present only in that
  range), ``x-admin-only`` (shown to admins only) with ``x-public-since``
  (shown to everyone from that version);
- on an object: ``x-required``, the fields present whenever their range
  and audience say so (plain ``required`` holds only the fields present at
  every version for everyone);
- ``anyOf`` alternatives tagged with version ranges replace each other
  (e.g. the server's ``flavor`` below and from 2.47): anyOf, not oneOf,
  since a value may suit two versions (an integer swap is valid below
  and from 2.75), which a plain validator's oneOf refuses.

``specialize(doc, schema, version, admin)`` turns a schema into the exact
one for one microversion and audience; the functional tests validate real
responses with it.

Regenerate the checked-in copy with
``python -m nova_moves.api.openapi > doc/api-ref/openapi.json``.
"""
import copy
import json
import re
import sys

from nova_moves.api import microversion
from nova_moves.api import openapi_operations
from nova_moves.api import query as query_ints
from nova_moves.api.openapi_schemas import (
    OPENAPI_VERSION,
    SCHEMAS,
    STR,
    _MAX,
    ref)
from nova_moves.api import routes
from nova_moves.api import server_actions
from nova_moves.api import validation

OPERATIONS = openapi_operations.OPERATIONS
_NO_TOKEN = openapi_operations.NO_TOKEN
_ALIASES = openapi_operations.ALIASES

# --- request bodies ----------------------------------------------------------

def _version_range(low, high):
    return {'x-min-version': low, 'x-max-version': high}


def _tagged(declared, action=None):
    alternatives = []
    for low, high, schema in declared:
        schema = dict(copy.deepcopy(schema), **_version_range(low, high))
        if action:
            schema['x-action'] = action
        alternatives.append(schema)
    return alternatives


def _everywhere(declared):
    return len(declared) == 1 and declared[0][:2] == (
        microversion.MIN_VERSION, _MAX)


def _request_body(path, handler):
    """The alternatives of the body ``handler`` declares (None: no
    body); the server action's are every action's, tagged with its name."""
    if handler is server_actions.action:
        return [schema for name, action in sorted(
            server_actions.ACTIONS.items())
            for schema in _tagged(validation.schemas_of(action), name)]
    declared = validation.schemas_of(handler)
    if not declared:
        return None
    if _everywhere(declared):
        return [copy.deepcopy(declared[0][2])]
    action = None
    if path.endswith('/action'):
        # {"force_complete": null}: an action of its own resource.
        action = declared[0][2]['required'][0]
    return _tagged(declared, action)


# --- the document ------------------------------------------------------------

def _tag(path):
    parts = [p for p in path.split('/') if p and not p.startswith('{')]
    if not parts or parts[0] != 'v2.1':
        return 'versions' if not parts or parts[0] != 'v3' else 'identity'
    if len(parts) == 1:
        return 'versions'
    if parts[1] == 'servers' and len(parts) > 2 and parts[2] in (
            'os-instance-actions', 'migrations', 'action'):
        return {'os-instance-actions': 'instance actions',
                'migrations': 'server migrations',
                'action': 'server actions'}[parts[2]]
    return parts[1]


def _parameters(path, query):
    params = [{'name': name, 'in': 'path', 'required': True,
               'schema': STR} for name in re.findall(r'{([^{}]+)}', path)]
    params += [{'name': name, 'in': 'query', 'required': False,
                'schema': _query_schema(name)} for name in query]
    return params


def _query_schema(name):
    if name not in query_ints.INTEGERS:
        return STR
    low, high = query_ints.INTEGERS[name]
    return {'type': 'integer', 'minimum': low, 'maximum': high}


def _errors(endpoint):
    errors = {'400': 'Bad request: the message names the field',
              '401': 'No token', '403': 'Forbidden by policy',
              '404': 'Not found', '406': 'Microversion out of range',
              '409': 'Conflict: wrong state or a move in progress'}
    if endpoint in _NO_TOKEN:
        return {}
    return {code: {'description': text, 'content': {'application/json': {
        'schema': ref('Fault')}}} for code, text in errors.items()}


def _operation(path, name, handler):
    endpoint = _ALIASES.get(name, name)
    spec = OPERATIONS.get(endpoint)
    if spec is None:
        doc = (handler.__doc__ or endpoint).strip().splitlines()[0]
        spec = (doc, [], {'200': {'description': 'OK'}})
    summary, query, responses = spec[:3]
    operation = {'operationId': endpoint, 'summary': summary,
                 'tags': [_tag(path)],
                 'parameters': _parameters(path, query),
                 'responses': dict(responses, **_errors(endpoint))}
    if len(spec) > 3:
        operation.update(spec[3])
    if endpoint in _NO_TOKEN:
        operation['security'] = []
    elif path.startswith('/v2.1'):
        operation['parameters'].append(
            {'$ref': '#/components/parameters/microversion'})
    alternatives = _request_body(path, handler)
    if alternatives:
        schema = alternatives[0] if len(alternatives) == 1 else \
            {'anyOf': alternatives}
        operation['requestBody'] = {
            'required': True,
            'content': {'application/json': {'schema': schema}}}
    return operation


def build(table=None):
    """The document of ``table`` (default: every route a deployment may
    serve, routes.described())."""
    table = routes.described() if table is None else table
    paths = {}
    for path in sorted(table):
        if path.endswith('/') and path != '/':
            continue  # the same document as without the slash
        for method, (name, handler) in sorted(table[path].items()):
            paths.setdefault(path, {})[method.lower()] = _operation(
                path, name, handler)
    return {
        'openapi': OPENAPI_VERSION,
        'info': {
            'title': 'nova_moves compute API',
            'version': _MAX,
            'description': (
                'Nova compute API v2.1 as implemented by nova_moves, '
                'microversions %s to %s. Microversion notes are x- '
                'extensions, see x-microversions and the module docstring '
                'of nova_moves/api/openapi.py.' % (microversion.MIN_VERSION,
                                                   _MAX)),
            'x-microversions': {
                'min': microversion.MIN_VERSION, 'max': _MAX,
                'history': [line.strip() for line in
                            microversion.HISTORY.strip().splitlines()]}},
        'servers': [{'url': '/'}],
        'security': [{'token': []}],
        'paths': paths,
        'components': {
            'securitySchemes': {'token': {
                'type': 'apiKey', 'in': 'header', 'name': 'X-Auth-Token',
                'description': '"user:project"; admin when user is admin'}},
            'parameters': {'microversion': {
                'name': 'OpenStack-API-Version', 'in': 'header',
                'required': False,
                'description': '"compute X.Y" or "compute latest"; also '
                               'X-OpenStack-Nova-API-Version: X.Y. Echoed '
                               'in the response.',
                'schema': STR}},
            'schemas': copy.deepcopy(SCHEMAS)},
    }


def dumps(document):
    return json.dumps(document, indent=1, sort_keys=True) + '\n'


# --- using it: one microversion, one audience --------------------------------

def _in_range(schema, version):
    low, high = schema.get('x-min-version'), schema.get('x-max-version')
    return (low is None or version >= low) and (high is None or
                                                version <= high)


def _visible(schema, version, admin):
    if not schema.get('x-admin-only') or admin:
        return True
    public = schema.get('x-public-since')
    return public is not None and version >= public


def resolve(document, schema):
    while isinstance(schema, dict) and '$ref' in schema:
        name = schema['$ref'].rsplit('/', 1)[-1]
        schema = document['components']['schemas'][name]
    return schema


def specialize(document, schema, version, admin=True):
    """The exact schema at microversion ``version`` for an admin or not:
    refs inlined, out-of-range and hidden properties dropped (so their
    presence fails), x-required merged into required, versioned anyOf
    (or oneOf) alternatives chosen."""
    version = microversion.APIVersion(str(version))
    schema = resolve(document, schema)
    if not isinstance(schema, dict):
        return schema
    alternatives = schema.get('anyOf') or schema.get('oneOf')
    if alternatives and all('x-min-version' in resolve(document, a) or
                            'x-max-version' in resolve(document, a)
                            for a in alternatives):
        chosen = [a for a in alternatives
                  if _in_range(resolve(document, a), version)]
        if len(chosen) == 1:
            return specialize(document, chosen[0], version, admin)
    result = {k: v for k, v in schema.items()
              if k not in ('properties', 'required', 'x-required', 'items',
                           'oneOf', 'anyOf', 'additionalProperties')}
    for key in ('oneOf', 'anyOf'):
        if key in schema:
            result[key] = [specialize(document, a, version, admin)
                           for a in schema[key]]
    if 'items' in schema:
        result['items'] = specialize(document, schema['items'], version,
                                     admin)
    if isinstance(schema.get('additionalProperties'), dict):
        result['additionalProperties'] = specialize(
            document, schema['additionalProperties'], version, admin)
    elif 'additionalProperties' in schema:
        result['additionalProperties'] = schema['additionalProperties']
    if 'properties' in schema:
        kept = {}
        for name, prop in schema['properties'].items():
            raw = resolve(document, prop)
            if _in_range(raw, version) and _visible(raw, version, admin):
                kept[name] = specialize(document, prop, version, admin)
        result['properties'] = kept
        required = [n for n in schema.get('required', []) +
                    schema.get('x-required', []) if n in kept]
        if required:
            result['required'] = required
    return result


def response_schema(document, path, method, status, version, admin=True):
    operation = document['paths'][path][method.lower()]
    content = operation['responses'][str(status)]['content']
    return specialize(document, content['application/json']['schema'],
                      version, admin)


def text():
    """The document as served at GET /openapi.json and checked in."""
    return dumps(build())


def main():
    from nova_moves import conf
    conf.CONF([], project='nova_moves', default_config_files=[])
    sys.stdout.write(text())


if __name__ == '__main__':
    main()
