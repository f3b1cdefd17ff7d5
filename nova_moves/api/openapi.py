"""The OpenAPI 3.1 description of the implemented API, served at
GET /openapi.json and checked in as doc/api-ref/openapi.json.

Paths come from the Flask routes themselves, so every implemented route is
described; request bodies are the JSON schemas the views validate with
(action bodies from each move module's ``BODY_SCHEMAS``); response schemas
are written here. Microversions are OpenAPI extensions:

- on an operation: ``x-min-version`` / ``x-max-version``;
- on a property: ``x-min-version`` / ``x-max-version`` (present only in that
  range), ``x-admin-only`` (shown to admins only) with ``x-public-since``
  (shown to everyone from that version);
- on an object: ``x-required``, the fields present whenever their range
  and audience say so (plain ``required`` holds only the fields present at
  every version for everyone);
- ``oneOf`` alternatives tagged with version ranges replace each other
  (e.g. the server's ``flavor`` below and from 2.47).

``specialize(doc, schema, version, admin)`` turns a schema into the exact
one for one microversion and audience; the functional tests validate real
responses with it.

Regenerate the checked-in copy with
``python -m nova_moves.api.openapi > doc/api-ref/openapi.json``.
"""
import copy
import importlib
import json
import re
import sys

from nova_moves.api import microversion
from nova_moves.api import openapi_routes
from nova_moves.api.openapi_schemas import (  # noqa: F401
    ANY_OBJ,
    INT,
    LINKS,
    OPENAPI_VERSION,
    SCHEMAS,
    STR,
    _MAX,
    f,
    listing,
    obj,
    ref,
    wrap)

def _ok(schema_or_name, description='OK'):
    schema = ref(schema_or_name) if isinstance(schema_or_name, str) \
        else schema_or_name
    return {'description': description,
            'content': {'application/json': {'schema': schema}}}


def _empty(description):
    return {'description': description}


# --- operations --------------------------------------------------------------
# endpoint -> summary, query parameters, responses, extras

_PAGING = ['limit', 'marker']
OPERATIONS = {
    'versions': ('List the API versions (no token).', [],
                 {'200': _ok('Versions')}),
    'v21': ('Show the v2.1 version (no token).', [], {'200': _ok('Version')}),
    'extensions': ("List nova_moves' additions inside Nova's microversions.",
                   [], {'200': _ok(wrap('extensions', {
                       'type': 'array', 'items': ref('Extension')}))}),
    'extension': ('Show one addition by its alias.', [],
                  {'200': _ok(wrap('extension', ref('Extension')))}),
    'servers_index': (
        'List servers (id, name, links).',
        ['all_tenants', 'project_id', 'host', 'status', 'name', 'deleted']
        + _PAGING, {'200': _ok(listing('servers', ref('ServerBrief')))}),
    'servers_detail': (
        'List servers with details.',
        ['all_tenants', 'project_id', 'host', 'status', 'name', 'deleted']
        + _PAGING, {'200': _ok(listing('servers', ref('ServerInList')))}),
    'servers_create': ('Boot a server (202; scheduled in the background).',
                       [], {'202': _ok('ServerCreated', 'Accepted')}),
    'servers_show': ('Show a server.', [],
                     {'200': _ok(wrap('server', ref('Server')))}),
    'servers_delete': ('Delete a server (409 while it is being moved).', [],
                       {'204': _empty('Deleted')}),
    'server_action': (
        'Run a server action; the body names it (see the oneOf).', [],
        {'200': _empty('evacuate: {"adminPass"} below 2.14, empty after'),
         '202': _empty('resize, revertResize, migrate, os-migrateLive, '
                       'os-start, os-stop'),
         '204': _empty('confirmResize')}),
    'actions_index': (
        'List the instance actions of a server.',
        ['limit', 'marker', 'changes-since', 'changes-before'],
        {'200': _ok(obj({
            'instanceActions': {'type': 'array',
                                'items': ref('InstanceAction')},
            'links': f(LINKS, since='2.58', optional=True)}))}),
    'actions_show': ('Show one instance action with its events.', [],
                     {'200': _ok(wrap('instanceAction',
                                      ref('InstanceActionDetail')))}),
    'flavors_index': ('List flavors.', ['is_public', 'minRam', 'minDisk']
                      + _PAGING,
                      {'200': _ok(listing('flavors', ref('FlavorBrief')))}),
    'flavors_detail': ('List flavors with details.',
                       ['is_public', 'minRam', 'minDisk'] + _PAGING,
                       {'200': _ok(listing('flavors', ref('Flavor')))}),
    'flavors_create': ('Create a flavor (admin).', [],
                       {'200': _ok(wrap('flavor', ref('Flavor')))}),
    'flavors_show': ('Show a flavor.', [],
                     {'200': _ok(wrap('flavor', ref('Flavor')))}),
    'flavors_delete': ('Delete a flavor (admin).', [],
                       {'202': _empty('Deleted')}),
    'flavors_extra_specs': ('Flavor extra specs (always empty).', [],
                            {'200': _ok(wrap('extra_specs', ANY_OBJ))}),
    'flavors_extra_spec': ('One flavor extra spec (never found).', [], {}),
    'services_index': ('List services (admin).', ['binary', 'host'],
                       {'200': _ok(wrap('services', {
                           'type': 'array', 'items': ref('Service')}))}),
    'services_update': (
        'Enable, disable or force down a service: PUT /os-services/{uuid} '
        'from 2.53; below, {service_id} is the action enable, disable, '
        'disable-log-reason or force-down (2.11) and the body names host '
        'and binary.', [],
        {'200': _ok({'oneOf': [
            f(wrap('service', ref('Service')), since='2.53'),
            f(ref('ServiceLegacyUpdate'), until='2.52')]})}),
    'services_delete': ('Delete a service (409 if a compute still hosts '
                        'servers).', [], {'204': _empty('Deleted')}),
    'hypervisors_index': ('List hypervisors (admin).',
                          ['hypervisor_hostname_pattern'],
                          {'200': _ok(wrap('hypervisors', {
                              'type': 'array',
                              'items': ref('HypervisorBrief')}))}),
    'hypervisors_detail': ('List hypervisors with details (admin).',
                           ['hypervisor_hostname_pattern'],
                           {'200': _ok(wrap('hypervisors', {
                               'type': 'array',
                               'items': ref('Hypervisor')}))}),
    'hypervisors_show': ('Show a hypervisor (admin).', [],
                         {'200': _ok(wrap('hypervisor', ref('Hypervisor')))}),
    'hypervisors_uptime': ('Hypervisor uptime (admin; removed in 2.88).',
                           [], {'200': _ok('HypervisorUptime')},
                           {'x-max-version': '2.87'}),
    'hypervisors_statistics': (
        'Sums over every hypervisor (admin; removed in 2.88).', [],
        {'200': _ok(wrap('hypervisor_statistics', obj({
            key: INT for key in (
                'count', 'vcpus', 'memory_mb', 'local_gb', 'vcpus_used',
                'memory_mb_used', 'local_gb_used', 'free_ram_mb',
                'free_disk_gb', 'current_workload', 'running_vms',
                'disk_available_least')})))},
        {'x-max-version': '2.87'}),
    'availability_zones': (
        'Availability zones of the compute services.', [],
        {'200': _ok('AvailabilityZones')}),
    'availability_zones_detail': (
        'Availability zones with their hosts and services (admin; the '
        'internal zone of conductors and schedulers too).', [],
        {'200': _ok('AvailabilityZones')}),
    'limits': ("The project's absolute limits and usage (tenant_id: "
               "another project's, admin).", ['tenant_id'],
               {'200': _ok('Limits')}),
    'aggregates_index': ('Host aggregates (always empty in nova_moves).',
                         [], {'200': _ok(wrap('aggregates', {
                             'type': 'array', 'maxItems': 0}))}),
    'migrations_index': (
        'List migrations (admin; a project manager with project_id of '
        'their own project, host fields null).',
        ['instance_uuid', 'host', 'source_compute', 'status',
         'migration_type', 'changes-since', 'changes-before', 'user_id',
         'project_id'] + _PAGING,
        {'200': _ok(listing('migrations', ref('Migration')))}),
    'migrations_show': (
        'Show one migration with its phases (admin, or a project manager '
        'for their own project without hosts; a nova_moves addition, Nova '
        'has no such route).', [],
        {'200': _ok(wrap('migration', ref('Migration'))),
         '404': _empty('No such migration')}),
    'server_migrations_index': (
        'In-progress live migrations of a server.', [],
        {'200': _ok(wrap('migrations', {'type': 'array',
                                        'items': ref('ServerMigration')}))},
        {'x-min-version': '2.23'}),
    'server_migrations_show': (
        'One in-progress live migration of a server.', [],
        {'200': _ok(wrap('migration', ref('ServerMigration')))},
        {'x-min-version': '2.23'}),
    'server_migrations_delete': (
        'Abort a live migration (running; queued and preparing from 2.65).',
        [], {'202': _empty('Accepted')}, {'x-min-version': '2.24'}),
    'server_migrations_action': (
        'Force a running live migration to complete.', [],
        {'202': _empty('Accepted')}, {'x-min-version': '2.22'}),
    'placement_show': ('nova_moves: resource providers, usages and every '
                       'allocation (admin).', [],
                       {'200': _ok(obj({'resource_providers': ANY_OBJ,
                                        'allocations': ANY_OBJ}))}),
    'quota_sets_show': ("A project's quota: instances, cores and ram are "
                        'enforced; the other fields are Nova\'s defaults.',
                        ['user_id'],
                        {'200': _ok(wrap('quota_set', ANY_OBJ))}),
    'quota_sets_detail': ("A project's quota with in_use per resource.", [],
                          {'200': _ok(wrap('quota_set', ANY_OBJ))}),
    'quota_sets_defaults': ('The [quota] defaults.', [],
                            {'200': _ok(wrap('quota_set', ANY_OBJ))}),
    'quota_sets_update': ("Set a project's quota (admin); -1 is unlimited; "
                          'below the usage only with force.', [],
                          {'200': _ok(wrap('quota_set', ANY_OBJ))}),
    'quota_sets_delete': ("Revert a project's quota to the defaults "
                          '(admin).', [], {'202': _empty('Accepted')}),
    'images_index': ('Images of the fake hypervisor, Glance v2 style.',
                     ['name', 'id'], {'200': _ok(obj({
                         'images': {'type': 'array', 'items': ref('Image')},
                         'schema': STR, 'first': STR}))}),
    'images_show': ('One image, Glance v2 style (unwrapped).', [],
                    {'200': _ok('Image')}),
    'identity_version': ('Minimal identity v3 for admin_token clients.', [],
                         {'200': _ok(wrap('version', ANY_OBJ))}),
    'host_drains_create': (
        'nova_moves: drain a compute host (admin); 202, the conductors '
        'move every server off it.', [],
        {'202': _ok(wrap('host_drain', ref('HostDrain')), 'Accepted')}),
    'host_drains_index': (
        'nova_moves: list host drains with their counts (admin).',
        ['host', 'status'], {'200': _ok(wrap('host_drains', {
            'type': 'array', 'items': ref('HostDrain')}))}),
    'host_drains_show': (
        'nova_moves: one host drain with every server (admin).', [],
        {'200': _ok(wrap('host_drain', ref('HostDrain')))}),
    'host_drains_delete': (
        'nova_moves: cancel a host drain (admin); moves under way finish.',
        [], {'202': _empty('Accepted')}),
    'server_groups_create': ('Create a server group.', [], {'200': _ok(
        wrap('server_group', ANY_OBJ))}),
    'server_groups_index': ('List server groups.',
                            ['all_projects', 'limit', 'offset'],
                            {'200': _ok(wrap('server_groups', {
                                'type': 'array', 'items': ANY_OBJ}))}),
    'server_groups_show': ('Show a server group with its members.', [],
                           {'200': _ok(wrap('server_group', ANY_OBJ))}),
    'server_groups_delete': ('Delete a server group.', [],
                             {'204': _empty('Deleted')}),
    'openapi': ('This document (no token).', [],
                {'200': _ok({'type': 'object', 'required': ['openapi']})}),
}
for _kind in ('projects', 'users', 'domains'):
    OPERATIONS['identity_%s_index' % _kind] = (
        'Look up %s by name (echoes the name; admin_token clients).' % _kind,
        ['name'], {'200': _ok(ANY_OBJ)})
    OPERATIONS['identity_%s_show' % _kind] = (
        'One of the %s (any id exists; admin_token clients).' % _kind, [],
        {'200': _ok(ANY_OBJ)})
_NO_TOKEN = {'versions', 'v21', 'v21_slash', 'identity_version',
             'identity_version_slash', 'openapi'}
_ALIASES = {'v21_slash': 'v21', 'identity_version_slash': 'identity_version'}
OPERATIONS.update(openapi_routes.OPERATIONS)
_NO_TOKEN |= openapi_routes.NO_TOKEN
_ALIASES.update(openapi_routes.ALIASES)
# Test-only routes exist only with [api] enable_test_hooks; the document
# describes what every deployment serves.
_HIDDEN = re.compile(r'^test_|^static$')


# --- request bodies ----------------------------------------------------------

def _version_range(low, high):
    return {'x-min-version': low or microversion.MIN_VERSION,
            'x-max-version': high or _MAX}


def _action_body(name, schema):
    """BODY_SCHEMAS hold either the whole body or just the value of the
    action key; the document always shows the whole body."""
    props = schema.get('properties') or {}
    if schema.get('type') == 'object' and list(props) == [name]:
        return copy.deepcopy(schema)
    return {'type': 'object', 'additionalProperties': False,
            'required': [name], 'properties': {name: copy.deepcopy(schema)}}


def _move_modules():
    modules = []
    for name in ('migrate', 'live_migrate', 'evacuate', 'power', 'lifecycle',
                 'lock', 'rebuild', 'reset_state', 'shelve'):
        try:
            modules.append(importlib.import_module('nova_moves.api.' + name))
        except ImportError:
            continue
    return modules


def _body_schemas():
    """{action_name: [(min, max, full body schema)]} over the move modules."""
    bodies = {}
    for module in _move_modules():
        for name, versions in sorted(getattr(module, 'BODY_SCHEMAS',
                                             {}).items()):
            bodies[name] = [(low, high, _action_body(name, schema))
                            for low, high, schema in versions]
    return bodies


def _tagged_alternatives(versions, action=None):
    alternatives = []
    for low, high, schema in versions:
        schema = dict(schema, **_version_range(low, high))
        if action:
            schema['x-action'] = action
        alternatives.append(schema)
    return alternatives


def _request_bodies():
    from nova_moves.api import flavors
    from nova_moves.api import host_drains
    from nova_moves.api import quotas
    from nova_moves.api import server_groups
    from nova_moves.api import servers
    from nova_moves.api import services
    bodies = {
        'servers_create': [servers.CREATE_SCHEMA],
        'host_drains_create': [host_drains.CREATE_SCHEMA],
        'flavors_create': _tagged_alternatives([
            ('2.1', '2.54', flavors._create_schema(
                microversion.APIVersion('2.1'))),
            ('2.55', None, flavors._create_schema(
                microversion.APIVersion('2.55')))]),
        'server_groups_create': _tagged_alternatives([
            ('2.1', '2.14', server_groups._create_schema(
                microversion.APIVersion('2.1'))),
            ('2.15', '2.63', server_groups._create_schema(
                microversion.APIVersion('2.15'))),
            ('2.64', None, server_groups._create_schema(
                microversion.APIVersion('2.64')))]),
        'quota_sets_update': [quotas._update_schema(
            microversion.APIVersion('2.95'))],
        'services_update': _tagged_alternatives([
            ('2.1', '2.52', services._LEGACY_SCHEMA),
            ('2.53', None, services.UPDATE_SCHEMA)]),
    }
    bodies.update(openapi_routes.request_bodies(_tagged_alternatives))
    actions = _body_schemas()
    server_actions = []
    for name, versions in sorted(actions.items()):
        if name == 'force_complete':
            bodies['server_migrations_action'] = _tagged_alternatives(
                versions, name)
            continue
        server_actions.extend(_tagged_alternatives(versions, name))
    if server_actions:
        bodies['server_action'] = server_actions
    return bodies


# --- the document ------------------------------------------------------------

def _openapi_path(rule):
    return re.sub(r'<(?:[^:<>]+:)?([^<>]+)>', r'{\1}', rule)


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


def _parameters(rule, query):
    params = [{'name': name, 'in': 'path', 'required': True,
               'schema': STR} for name in re.findall(
                   r'<(?:[^:<>]+:)?([^<>]+)>', rule)]
    params += [{'name': name, 'in': 'query', 'required': False,
                'schema': STR} for name in query]
    return params


def _errors(endpoint):
    errors = {'400': 'Bad request: the message names the field',
              '401': 'No token', '403': 'Forbidden by policy',
              '404': 'Not found', '406': 'Microversion out of range',
              '409': 'Conflict: wrong state or a move in progress'}
    if endpoint in _NO_TOKEN:
        return {}
    return {code: {'description': text, 'content': {'application/json': {
        'schema': ref('Fault')}}} for code, text in errors.items()}


def build(app=None):
    """The document for ``app`` (default: every registered route)."""
    if app is None:
        import flask
        from nova_moves.api import routes
        from nova_moves.api import identity
        app = flask.Flask('nova_moves.api.openapi')
        routes.register(app)
        if 'identity_version' not in app.view_functions:
            # Described whatever auth_strategy this process runs with
            # (served with noauth only).
            identity.register_routes(app)
    bodies = _request_bodies()
    paths = {}
    for rule in sorted(app.url_map.iter_rules(), key=lambda r: (r.rule,
                                                                r.endpoint)):
        if _HIDDEN.search(rule.endpoint) or rule.rule.endswith('/') and \
                rule.rule != '/':
            continue
        endpoint = _ALIASES.get(rule.endpoint, rule.endpoint)
        path = _openapi_path(rule.rule)
        for method in sorted(rule.methods - {'HEAD', 'OPTIONS'}):
            spec = OPERATIONS.get(endpoint)
            if spec is None:
                view = app.view_functions[rule.endpoint]
                doc = (view.__doc__ or endpoint).strip().splitlines()[0]
                spec = (doc, [], {'200': _empty('OK')})
            summary, query, responses = spec[:3]
            operation = {'operationId': endpoint, 'summary': summary,
                         'tags': [_tag(path)],
                         'parameters': _parameters(rule.rule, query),
                         'responses': dict(responses, **_errors(endpoint))}
            if len(spec) > 3:
                operation.update(spec[3])
            if endpoint in _NO_TOKEN:
                operation['security'] = []
            elif path.startswith('/v2.1'):
                operation['parameters'].append(
                    {'$ref': '#/components/parameters/microversion'})
            if endpoint in bodies:
                alternatives = bodies[endpoint]
                schema = alternatives[0] if len(alternatives) == 1 else \
                    {'oneOf': alternatives}
                operation['requestBody'] = {
                    'required': True,
                    'content': {'application/json': {'schema': schema}}}
            paths.setdefault(path, {})[method.lower()] = operation
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
    presence fails), x-required merged into required, versioned oneOf
    alternatives chosen."""
    version = microversion.APIVersion(str(version))
    schema = resolve(document, schema)
    if not isinstance(schema, dict):
        return schema
    alternatives = schema.get('oneOf')
    if alternatives and all('x-min-version' in resolve(document, a) or
                            'x-max-version' in resolve(document, a)
                            for a in alternatives):
        chosen = [a for a in alternatives
                  if _in_range(resolve(document, a), version)]
        if len(chosen) == 1:
            return specialize(document, chosen[0], version, admin)
    result = {k: v for k, v in schema.items()
              if k not in ('properties', 'required', 'x-required', 'items',
                           'oneOf', 'additionalProperties')}
    if 'oneOf' in schema:
        result['oneOf'] = [specialize(document, a, version, admin)
                           for a in schema['oneOf']]
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


# --- serving it --------------------------------------------------------------

def serve():
    import flask
    app = flask.current_app
    if 'nova_moves.openapi' not in app.extensions:
        app.extensions['nova_moves.openapi'] = dumps(build())
    return flask.Response(app.extensions['nova_moves.openapi'],
                          mimetype='application/json')


def register(app):
    app.add_url_rule('/openapi.json', 'openapi', serve, methods=['GET'])


def main():
    from nova_moves import conf
    conf.CONF([], project='nova_moves', default_config_files=[])
    sys.stdout.write(dumps(build()))


if __name__ == '__main__':
    main()
