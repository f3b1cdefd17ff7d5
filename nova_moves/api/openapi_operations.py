"""OpenAPI operations by operation id (routes.ROUTES names each row):
summary, query parameters, responses and extras (x-min-version ...).
openapi_routes.py adds and refines some (kept apart so that each module
stays small)."""
from nova_moves.api import openapi_keypairs
from nova_moves.api import openapi_nova_apis
from nova_moves.api import openapi_routes
from nova_moves.api.openapi_schemas import (
    ANY_OBJ, INT, LINKS, STR, f, listing, obj, ref, wrap)


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
    'servers_create': ('Boot a server (202; scheduled in the background).',
                       [], {'202': _ok('ServerCreated', 'Accepted')}),
    'servers_show': ('Show a server.', [],
                     {'200': _ok(wrap('server', ref('Server')))}),
    'servers_delete': ('Delete a server (409 while it is being moved).', [],
                       {'204': _empty('Deleted')}),
    'server_action': (
        'Run a server action; the body names it (see the oneOf).', [],
        {'200': _empty('evacuate: {"adminPass"} below 2.14, empty after; '
                       'os-getConsoleOutput: {"output": "..."}; '
                       'rescue: {"adminPass"}'),
         '202': _empty('resize, revertResize, migrate, os-migrateLive, '
                       'os-start, os-stop, unrescue'),
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
    'flavors_create': ('Create a flavor (admin).', [],
                       {'200': _ok(wrap('flavor', ref('Flavor')))}),
    'flavors_show': ('Show a flavor.', [],
                     {'200': _ok(wrap('flavor', ref('Flavor')))}),
    'flavors_delete': ('Delete a flavor (admin).', [],
                       {'202': _empty('Deleted')}),
    'flavors_extra_specs': ("A flavor's extra specs.", [],
                            {'200': _ok(wrap('extra_specs', ANY_OBJ))}),
    'services_index': ('List services (admin).', ['binary', 'host'],
                       {'200': _ok(wrap('services', {
                           'type': 'array', 'items': {'anyOf': [
                               ref('Service'),
                               ref('ServicePartial')]}}))}),
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
    'aggregates_index': ('List host aggregates (admin).',
                         [], {'200': _ok(wrap('aggregates', {
                             'type': 'array', 'items': ANY_OBJ}))}),
    'aggregates_create': (
        'Create a host aggregate (admin; 409 for a name in use).', [],
        {'200': _ok(wrap('aggregate', ANY_OBJ))}),
    'aggregates_show': ('Show a host aggregate (admin).', [],
                        {'200': _ok(wrap('aggregate', ANY_OBJ))}),
    'aggregates_update': (
        'Rename a host aggregate or set its availability zone (admin).',
        [], {'200': _ok(wrap('aggregate', ANY_OBJ))}),
    'aggregates_delete': (
        'Delete a host aggregate (admin; 400 while it has hosts). 200 '
        'with an empty body, as Nova.', [], {'200': _empty('Deleted')}),
    'aggregates_action': (
        'add_host, remove_host or set_metadata (a null value deletes the '
        'key) on a host aggregate (admin).', [],
        {'200': _ok(wrap('aggregate', ANY_OBJ))}),
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
                                        'allocations': ANY_OBJ,
                                        'consumer_generations': ANY_OBJ}))}),
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
    'images_index': ('Images, Glance v2 style: [api] image_names, the '
                     'local image store\'s (private ones to their project '
                     'and admins) and the shelved servers\' snapshots.',
                     ['name', 'id', 'status', 'visibility'],
                     {'200': _ok(obj({
                         'images': {'type': 'array', 'items': ref('Image')},
                         'schema': STR, 'first': STR}))}),
    'images_show': ('One image, Glance v2 style (unwrapped).', [],
                    {'200': _ok('Image')}),
    'identity_version': ('Minimal identity v3 for admin_token clients.', [],
                         {'200': _ok(wrap('version', ANY_OBJ))}),
    'host_drains_create': (
        'nova_moves: drain a compute host (admin); 202, the conductors '
        'move every server off it; with "check": true, 200 and the plan '
        'only (nothing written).', [],
        {'202': _ok(wrap('host_drain', ref('HostDrain')), 'Accepted'),
         '200': _ok(wrap('host_drain_plan', ref('HostDrainPlan')),
                    'The plan only')}),
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
NO_TOKEN = {'versions', 'v21', 'v21_slash', 'identity_version',
            'identity_version_slash', 'openapi'}
ALIASES = {'v21_slash': 'v21', 'identity_version_slash': 'identity_version'}
OPERATIONS.update(openapi_routes.OPERATIONS)
OPERATIONS.update(openapi_keypairs.OPERATIONS)
OPERATIONS.update(openapi_nova_apis.OPERATIONS)
NO_TOKEN |= openapi_routes.NO_TOKEN
ALIASES.update(openapi_routes.ALIASES)
