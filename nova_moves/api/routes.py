"""Every route of the API in one table, as placement's handler.py:
path template -> HTTP method -> (operation id, handler).

app.py builds Flask's URL map from it, a method the table does not list
for a path is a 405 whose Allow header the table gives, and the OpenAPI
document (openapi.py) describes exactly these rows. POST
/servers/{id}/action has a second-level table: server_actions.ACTIONS,
action name -> handler. Request bodies are declared on the handlers
(@validation.schema); the query parameters each operation accepts are
its OpenAPI operation's, refused otherwise from 2.102 before the handler
runs (query_params.py; tests/unit/api/test_microversions_2102.py walks
every GET row)."""
import functools

from nova_moves.api import aggregates
from nova_moves.api import auth
from nova_moves.api import availability_zones
from nova_moves.api import flavor_extras
from nova_moves.api import flavors
from nova_moves.api import host_drains
from nova_moves.api import hosts
from nova_moves.api import hypervisors
from nova_moves.api import identity
from nova_moves.api import images
from nova_moves.api import instance_actions
from nova_moves.api import keypairs
from nova_moves.api import ips
from nova_moves.api import limits
from nova_moves.api import live_migrate
from nova_moves.api import migrations
from nova_moves.api import placement
from nova_moves.api import quota_classes
from nova_moves.api import quotas
from nova_moves.api import server_actions
from nova_moves.api import server_diagnostics
from nova_moves.api import server_external_events
from nova_moves.api import server_groups
from nova_moves.api import server_index
from nova_moves.api import server_metadata
from nova_moves.api import server_password
from nova_moves.api import server_tags
from nova_moves.api import servers
from nova_moves.api import services
from nova_moves.api import tenant_usage
from nova_moves.api import test_hooks
from nova_moves.api import usage_audit_log
from nova_moves.api import versions

_SERVER = '/v2.1/servers/{server_id}'
_HYPERVISORS = '/v2.1/os-hypervisors'
_QUOTAS = '/v2.1/os-quota-sets/{project_id}'

ROUTES = {
    '/': {'GET': ('versions', versions.root)},
    '/openapi.json': {'GET': ('openapi', versions.openapi)},
    '/v2': {'GET': ('v20', versions.v20)},
    '/v2/': {'GET': ('v20_slash', versions.v20)},
    '/v2.1': {'GET': ('v21', versions.v21)},
    '/v2.1/': {'GET': ('v21_slash', versions.v21)},
    '/v2.1/extensions': {'GET': ('extensions', versions.extension_list)},
    '/v2.1/extensions/{alias}': {'GET': ('extension', versions.extension)},
    '/v2.1/flavors': {
        'GET': ('flavors_index', flavors.index),
        'POST': ('flavors_create', flavors.create)},
    '/v2.1/flavors/detail': {'GET': ('flavors_detail', flavors.detail)},
    '/v2.1/flavors/{flavor_id}': {
        'GET': ('flavors_show', flavors.show),
        'PUT': ('flavors_update', flavors.update),
        'DELETE': ('flavors_delete', flavors.delete)},
    '/v2.1/flavors/{flavor_id}/action': {
        'POST': ('flavors_action', flavor_extras.action)},
    '/v2.1/flavors/{flavor_id}/os-extra_specs': {
        'GET': ('flavors_extra_specs', flavor_extras.index),
        'POST': ('flavors_extra_specs_create', flavor_extras.create)},
    '/v2.1/flavors/{flavor_id}/os-extra_specs/{key}': {
        'GET': ('flavors_extra_spec', flavor_extras.show),
        'PUT': ('flavors_extra_spec_update', flavor_extras.update),
        'DELETE': ('flavors_extra_spec_delete', flavor_extras.delete)},
    '/v2.1/flavors/{flavor_id}/os-flavor-access': {
        'GET': ('flavors_access', flavor_extras.access_index)},
    '/v2.1/images': {'GET': ('images_index', images.index)},
    '/v2.1/images/{image_ref}': {'GET': ('images_show', images.show)},
    '/v2.1/limits': {'GET': ('limits', limits.show)},
    '/v2.1/os-aggregates': {
        'GET': ('aggregates_index', aggregates.index),
        'POST': ('aggregates_create', aggregates.create)},
    '/v2.1/os-aggregates/{aggregate_id}': {
        'GET': ('aggregates_show', aggregates.show),
        'PUT': ('aggregates_update', aggregates.update),
        'DELETE': ('aggregates_delete', aggregates.delete)},
    '/v2.1/os-aggregates/{aggregate_id}/action': {
        'POST': ('aggregates_action', aggregates.action)},
    '/v2.1/os-availability-zone': {
        'GET': ('availability_zones', availability_zones.index)},
    '/v2.1/os-availability-zone/detail': {
        'GET': ('availability_zones_detail', availability_zones.detail)},
    '/v2.1/os-host-drains': {
        'GET': ('host_drains_index', host_drains.index),
        'POST': ('host_drains_create', host_drains.create)},
    '/v2.1/os-host-drains/{drain_id}': {
        'GET': ('host_drains_show', host_drains.show),
        'DELETE': ('host_drains_delete', host_drains.delete)},
    _HYPERVISORS: {'GET': ('hypervisors_index', hypervisors.index)},
    _HYPERVISORS + '/detail': {
        'GET': ('hypervisors_detail', hypervisors.detail)},
    _HYPERVISORS + '/statistics': {
        'GET': ('hypervisors_statistics', hypervisors.statistics)},
    _HYPERVISORS + '/{hypervisor_id}': {
        'GET': ('hypervisors_show', hypervisors.show)},
    _HYPERVISORS + '/{hypervisor_id}/uptime': {
        'GET': ('hypervisors_uptime', hypervisors.uptime)},
    _HYPERVISORS + '/{pattern}/search': {
        'GET': ('hypervisors_search', hypervisors.search)},
    _HYPERVISORS + '/{pattern}/servers': {
        'GET': ('hypervisors_servers', hypervisors.servers)},
    '/v2.1/os-keypairs': {
        'GET': ('keypairs_index', keypairs.index),
        'POST': ('keypairs_create', keypairs.create)},
    '/v2.1/os-keypairs/{keypair_name}': {
        'GET': ('keypairs_show', keypairs.show),
        'DELETE': ('keypairs_delete', keypairs.delete)},
    '/v2.1/os-migrations': {'GET': ('migrations_index', migrations.index)},
    '/v2.1/os-migrations/{migration_id}': {
        'GET': ('migrations_show', migrations.show)},
    '/v2.1/os-nova-moves-placement': {
        'GET': ('placement_show', placement.show)},
    '/v2.1/os-quota-class-sets/{class_name}': {
        'GET': ('quota_class_sets_show', quota_classes.show),
        'PUT': ('quota_class_sets_update', quota_classes.update)},
    _QUOTAS: {
        'GET': ('quota_sets_show', quotas.show),
        'PUT': ('quota_sets_update', quotas.update),
        'DELETE': ('quota_sets_delete', quotas.delete)},
    _QUOTAS + '/defaults': {
        'GET': ('quota_sets_defaults', quotas.defaults)},
    _QUOTAS + '/detail': {'GET': ('quota_sets_detail', quotas.detail)},
    '/v2.1/os-server-groups': {
        'GET': ('server_groups_index', server_groups.index),
        'POST': ('server_groups_create', server_groups.create)},
    '/v2.1/os-server-groups/{group_id}': {
        'GET': ('server_groups_show', server_groups.show),
        'DELETE': ('server_groups_delete', server_groups.delete)},
    '/v2.1/os-services': {'GET': ('services_index', services.index)},
    '/v2.1/os-services/{service_id}': {
        'PUT': ('services_update', services.update),
        'DELETE': ('services_delete', services.delete)},
    '/v2.1/servers': {
        'GET': ('servers_index', server_index.index),
        'POST': ('servers_create', servers.create)},
    '/v2.1/servers/detail': {'GET': ('servers_detail',
                                      server_index.detail)},
    _SERVER: {
        'GET': ('servers_show', servers.show),
        'PUT': ('servers_update', servers.update),
        'DELETE': ('servers_delete', servers.delete)},
    _SERVER + '/action': {'POST': ('server_action', server_actions.action)},
    _SERVER + '/diagnostics': {
        'GET': ('server_diagnostics', server_diagnostics.index)},
    _SERVER + '/metadata': {
        'GET': ('server_metadata_index', server_metadata.index),
        'POST': ('server_metadata_create', server_metadata.create),
        'PUT': ('server_metadata_update_all', server_metadata.update_all)},
    _SERVER + '/metadata/{key}': {
        'GET': ('server_metadata_show', server_metadata.show),
        'PUT': ('server_metadata_update', server_metadata.update),
        'DELETE': ('server_metadata_delete', server_metadata.delete)},
    _SERVER + '/tags': {
        'GET': ('server_tags_index', server_tags.index),
        'PUT': ('server_tags_update_all', server_tags.update_all),
        'DELETE': ('server_tags_delete_all', server_tags.delete_all)},
    _SERVER + '/tags/{tag}': {
        'GET': ('server_tags_show', server_tags.show),
        'PUT': ('server_tags_update', server_tags.update),
        'DELETE': ('server_tags_delete', server_tags.delete)},
    _SERVER + '/migrations': {
        'GET': ('server_migrations_index', live_migrate.index)},
    _SERVER + '/migrations/{migration_id}': {
        'GET': ('server_migrations_show', live_migrate.show),
        'DELETE': ('server_migrations_delete', live_migrate.delete)},
    _SERVER + '/migrations/{migration_id}/action': {
        'POST': ('server_migrations_action', live_migrate.action)},
    _SERVER + '/os-instance-actions': {
        'GET': ('actions_index', instance_actions.index)},
    _SERVER + '/os-instance-actions/{request_id}': {
        'GET': ('actions_show', instance_actions.show)},
}
# Nova's own compute APIs of issue 40: addresses, os-hosts (below 2.43),
# usage reports, the server password, external events.
_HOST = '/v2.1/os-hosts/{host_name}'
_USAGE = '/v2.1/os-simple-tenant-usage'
_AUDIT = '/v2.1/os-instance_usage_audit_log'
ROUTES.update({
    _SERVER + '/ips': {'GET': ('ips_index', ips.index)},
    _SERVER + '/ips/{network_label}': {'GET': ('ips_show', ips.show)},
    _SERVER + '/os-server-password': {
        'GET': ('server_password_show', server_password.index),
        'DELETE': ('server_password_clear', server_password.clear)},
    '/v2.1/os-hosts': {'GET': ('hosts_index', hosts.index)},
    _HOST: {'GET': ('hosts_show', hosts.show),
            'PUT': ('hosts_update', hosts.update)},
    _HOST + '/startup': {'GET': ('hosts_startup', hosts.startup)},
    _HOST + '/shutdown': {'GET': ('hosts_shutdown', hosts.shutdown)},
    _HOST + '/reboot': {'GET': ('hosts_reboot', hosts.reboot)},
    _USAGE: {'GET': ('tenant_usage_index', tenant_usage.index)},
    _USAGE + '/{tenant_id}': {'GET': ('tenant_usage_show',
                                      tenant_usage.show)},
    _AUDIT: {'GET': ('usage_audit_log_index', usage_audit_log.index)},
    _AUDIT + '/{before_timestamp}': {
        'GET': ('usage_audit_log_show', usage_audit_log.show)},
    '/v2.1/os-server-external-events': {
        'POST': ('server_external_events_create',
                 server_external_events.create)},
})

# A minimal identity v3 (api/identity.py): served with noauth only, where
# made-up projects and users are true; with Keystone, /v3 is Keystone's.
IDENTITY_ROUTES = {
    '/v3': {'GET': ('identity_version', identity.version)},
    '/v3/': {'GET': ('identity_version_slash', identity.version)},
}
for _kind in ('projects', 'users', 'domains'):
    IDENTITY_ROUTES['/v3/' + _kind] = {'GET': (
        'identity_%s_index' % _kind, functools.partial(identity.listing,
                                                       _kind))}
    IDENTITY_ROUTES['/v3/%s/{ident}' % _kind] = {'GET': (
        'identity_%s_show' % _kind, functools.partial(identity.lookup,
                                                      _kind))}

# Served only with [api] enable_test_hooks (functional tests); never
# described in the OpenAPI document.
TEST_ROUTES = {
    '/v2.1/os-nova-moves-test/computes/{host}/faults': {
        'PUT': ('test_faults', test_hooks.set_faults)},
}


def table(conf):
    """The routes this process serves under ``conf``."""
    routes = dict(ROUTES)
    if auth.is_noauth(conf):
        routes.update(IDENTITY_ROUTES)
    if conf.api.enable_test_hooks:
        routes.update(TEST_ROUTES)
    return routes


def described():
    """The routes the OpenAPI document describes: every deployment's,
    the identity v3 included whatever auth_strategy this process runs."""
    return dict(ROUTES, **IDENTITY_ROUTES)
