"""Default policies: Nova's rule names and Nova's current defaults
(base rules as in nova/policies/base.py of Nova 32.0.0, 2025.2).

Project-scoped personas, as Keystone's bootstrap roles imply them
(admin -> manager -> member -> reader):

- ``PROJECT_READER_OR_ADMIN``: look at a project's servers.
- ``PROJECT_MEMBER_OR_ADMIN``: change them (create, delete, power,
  resize and its confirm/revert, lifecycle actions).
- ``PROJECT_MANAGER_OR_ADMIN``: move them without naming a host (cold
  and live migrate, list/abort/force-complete a project's migrations).
- ``ADMIN``: everything about hosts and other projects.

Every rule is ``scope_types=['project']``: with scope enforced (the
default here), a system-scoped token is refused on all of them.

The legacy rules (``is_admin:True or project_id:%(project_id)s``) are
the base rules' ``deprecated_rule``, as in Nova: an operator who sets
``[oslo_policy] enforce_new_defaults = False`` gets them back, OR'd with
the new ones. Nothing else brings them back.
"""
from oslo_config import cfg
from oslo_policy import opts as policy_opts
from oslo_policy import policy

from nova_moves.api import host_usage_policies

ADMIN = 'rule:context_is_admin'
PROJECT_MANAGER_OR_ADMIN = 'rule:project_manager_or_admin'
PROJECT_MEMBER_OR_ADMIN = 'rule:project_member_or_admin'
PROJECT_READER_OR_ADMIN = 'rule:project_reader_or_admin'
ANY = '@'
NOBODY = '!'

LEGACY_ADMIN = 'is_admin:True'
LEGACY_ADMIN_OR_OWNER = 'is_admin:True or project_id:%(project_id)s'
_LEGACY_REASON = ('The legacy admin/owner rules ignore the reader, member '
                  'and manager roles: any role in a project could change '
                  "that project's servers.")
_LEGACY_SINCE = '21.0.0'  # Nova's, for the same deprecation
_DEPRECATED_ADMIN = policy.DeprecatedRule(
    'rule:admin_api', LEGACY_ADMIN, deprecated_reason=_LEGACY_REASON,
    deprecated_since=_LEGACY_SINCE)
_DEPRECATED_ADMIN_OR_OWNER = policy.DeprecatedRule(
    'rule:admin_or_owner', LEGACY_ADMIN_OR_OWNER,
    deprecated_reason=_LEGACY_REASON, deprecated_since=_LEGACY_SINCE)

# (name, check string, description, deprecated rule) of Nova's base rules.
_BASE = [
    ('context_is_admin', 'role:admin',
     "Decides what is required for the 'is_admin:True' check to succeed.",
     _DEPRECATED_ADMIN),
    ('project_manager_api', 'role:manager and project_id:%(project_id)s',
     'Default rule for Project level management APIs.', _DEPRECATED_ADMIN),
    ('project_member_api', 'role:member and project_id:%(project_id)s',
     'Default rule for Project level non admin APIs.',
     _DEPRECATED_ADMIN_OR_OWNER),
    ('project_reader_api', 'role:reader and project_id:%(project_id)s',
     'Default rule for Project level read only APIs.',
     _DEPRECATED_ADMIN_OR_OWNER),
    ('project_manager_or_admin',
     'rule:project_manager_api or rule:context_is_admin',
     'Default rule for Project Manager or admin APIs.', _DEPRECATED_ADMIN),
    ('project_member_or_admin',
     'rule:project_member_api or rule:context_is_admin',
     'Default rule for Project Member or admin APIs.',
     _DEPRECATED_ADMIN_OR_OWNER),
    ('project_reader_or_admin',
     'rule:project_reader_api or rule:context_is_admin',
     'Default rule for Project reader or admin APIs.',
     _DEPRECATED_ADMIN_OR_OWNER),
    ('service_api', 'role:service',
     'Default rule for service-to-service APIs.', _DEPRECATED_ADMIN),
    ('service_or_admin', 'rule:service_api or rule:context_is_admin',
     'Default rule for service or admin APIs.', _DEPRECATED_ADMIN),
]
# The legacy rules themselves, kept under Nova's names so that a
# policy file written against them still parses; nothing uses them.
_LEGACY = [
    ('admin_or_owner', LEGACY_ADMIN_OR_OWNER,
     'Default rule for most non-Admin APIs (legacy, unused).'),
    ('admin_api', LEGACY_ADMIN,
     'Default rule for most Admin APIs (legacy, unused).'),
]

S = 'os_compute_api:servers:'
ACTION = 'POST /servers/{server_id}/action (%s)'
SRV = '/servers/{server_id}'
MIG = '/servers/{server_id}/migrations/{migration_id}'
KP = 'os_compute_api:os-keypairs:'
ADMIN_OR_USER = '(' + ADMIN + ') or user_id:%(user_id)s'

# (name, check string, description, operations "METHOD path").
_API = [
    # -- servers (nova/policies/servers.py) ------------------------------
    (S + 'index', PROJECT_READER_OR_ADMIN, 'List all servers',
     ['GET /servers']),
    (S + 'detail', PROJECT_READER_OR_ADMIN,
     'List all servers with detailed information', ['GET /servers/detail']),
    (S + 'index:get_all_tenants', ADMIN, 'List all servers for all projects',
     ['GET /servers']),
    (S + 'detail:get_all_tenants', ADMIN,
     'List all servers with detailed information for all projects',
     ['GET /servers/detail']),
    (S + 'allow_all_filters', ADMIN, 'Allow all filters when listing servers',
     ['GET /servers', 'GET /servers/detail']),
    (S + 'show', PROJECT_READER_OR_ADMIN, 'Show a server', ['GET ' + SRV]),
    (S + 'show:host_status', ADMIN,
     'Show a server with additional host status information',
     ['GET ' + SRV, 'GET /servers/detail']),
    (S + 'show:host_status:unknown-only', ADMIN,
     'Show a server with host status information, only if it is UNKNOWN',
     ['GET ' + SRV, 'GET /servers/detail']),
    (S + 'create', PROJECT_MEMBER_OR_ADMIN, 'Create a server',
     ['POST /servers']),
    (S + 'create:forced_host', ADMIN,
     'Create a server on the specified host and/or node, bypassing the '
     'scheduler filters', ['POST /servers']),
    ('compute:servers:create:requested_destination', ADMIN,
     'Create a server on the requested host and/or hypervisor_hostname, '
     'validated by the scheduler filters', ['POST /servers']),
    (S + 'create:attach_volume', PROJECT_MEMBER_OR_ADMIN,
     'Create a server with the requested volume attached to it',
     ['POST /servers']),
    (S + 'create:attach_network', PROJECT_MEMBER_OR_ADMIN,
     'Create a server with the requested network attached to it',
     ['POST /servers']),
    (S + 'create:trusted_certs', PROJECT_MEMBER_OR_ADMIN,
     'Create a server with trusted image certificate IDs',
     ['POST /servers']),
    (S + 'create:zero_disk_flavor', ADMIN,
     'Create a server with a flavor that has 0 disk', ['POST /servers']),
    (S + 'delete', PROJECT_MEMBER_OR_ADMIN, 'Delete a server',
     ['DELETE ' + SRV]),
    (S + 'update', PROJECT_MEMBER_OR_ADMIN, 'Update a server',
     ['PUT ' + SRV]),
    (S + 'confirm_resize', PROJECT_MEMBER_OR_ADMIN, 'Confirm a server resize',
     [ACTION % 'confirmResize']),
    (S + 'revert_resize', PROJECT_MEMBER_OR_ADMIN, 'Revert a server resize',
     [ACTION % 'revertResize']),
    (S + 'reboot', PROJECT_MEMBER_OR_ADMIN, 'Reboot a server',
     [ACTION % 'reboot']),
    (S + 'resize', PROJECT_MEMBER_OR_ADMIN, 'Resize a server',
     [ACTION % 'resize']),
    # Nova's rule and default (nobody). Allowed, a resize or cold
    # migration whose cell has no host may go to another cell
    # (doc/cells.md "Cross-cell resize").
    ('compute:servers:resize:cross_cell', NOBODY,
     'Resize or cold migrate a server across cells when its own cell has '
     'no valid host. By default, this is disabled for all users; test it '
     'with admins before opening it to other users.',
     [ACTION % 'resize', ACTION % 'migrate']),
    (S + 'rebuild', PROJECT_MEMBER_OR_ADMIN, 'Rebuild a server',
     [ACTION % 'rebuild']),
    (S + 'rebuild:trusted_certs', PROJECT_MEMBER_OR_ADMIN,
     'Rebuild a server with trusted image certificate IDs',
     [ACTION % 'rebuild']),
    (S + 'start', PROJECT_MEMBER_OR_ADMIN, 'Start a server',
     [ACTION % 'os-start']),
    (S + 'stop', PROJECT_MEMBER_OR_ADMIN, 'Stop a server',
     [ACTION % 'os-stop']),
    ('os_compute_api:os-extended-server-attributes', ADMIN,
     'Return extended attributes (OS-EXT-SRV-ATTR) for a server',
     ['GET ' + SRV, 'GET /servers/detail']),
    # -- server lifecycle actions ----------------------------------------
    ('os_compute_api:os-pause-server:pause', PROJECT_MEMBER_OR_ADMIN,
     'Pause a server', [ACTION % 'pause']),
    ('os_compute_api:os-pause-server:unpause', PROJECT_MEMBER_OR_ADMIN,
     'Unpause a paused server', [ACTION % 'unpause']),
    ('os_compute_api:os-suspend-server:suspend', PROJECT_MEMBER_OR_ADMIN,
     'Suspend a server', [ACTION % 'suspend']),
    ('os_compute_api:os-suspend-server:resume', PROJECT_MEMBER_OR_ADMIN,
     'Resume a suspended server', [ACTION % 'resume']),
    ('os_compute_api:os-lock-server:lock', PROJECT_MEMBER_OR_ADMIN,
     'Lock a server', [ACTION % 'lock']),
    ('os_compute_api:os-lock-server:unlock', PROJECT_MEMBER_OR_ADMIN,
     'Unlock a server', [ACTION % 'unlock']),
    ('os_compute_api:os-lock-server:unlock:unlock_override', ADMIN,
     'Unlock a server, regardless who locked it (checked after '
     'os_compute_api:os-lock-server:unlock passes)', [ACTION % 'unlock']),
    ('os_compute_api:os-admin-actions:reset_state', ADMIN,
     'Reset the state of a given server', [ACTION % 'os-resetState']),
    ('os_compute_api:os-deferred-delete:restore', PROJECT_MEMBER_OR_ADMIN,
     'Restore a soft deleted server', [ACTION % 'restore']),
    ('os_compute_api:os-deferred-delete:force', PROJECT_MEMBER_OR_ADMIN,
     'Force delete a server before deferred cleanup',
     [ACTION % 'forceDelete']),
    ('os_compute_api:os-admin-password', PROJECT_MEMBER_OR_ADMIN,
     'Change the administrative password for a server',
     [ACTION % 'changePassword']),
    ('os_compute_api:os-admin-actions:inject_network_info', ADMIN,
     'Inject network information into the server',
     [ACTION % 'injectNetworkInfo']),
    ('os_compute_api:os-security-groups:add', PROJECT_MEMBER_OR_ADMIN,
     'Add security groups to server', [ACTION % 'addSecurityGroup']),
    ('os_compute_api:os-security-groups:remove', PROJECT_MEMBER_OR_ADMIN,
     'Remove security groups from server',
     [ACTION % 'removeSecurityGroup']),
    ('os_compute_api:os-rescue', PROJECT_MEMBER_OR_ADMIN,
     'Rescue a server', [ACTION % 'rescue']),
    ('os_compute_api:os-unrescue', PROJECT_MEMBER_OR_ADMIN,
     'Unrescue a server', [ACTION % 'unrescue']),
    ('os_compute_api:os-shelve:shelve', PROJECT_MEMBER_OR_ADMIN,
     'Shelve server', [ACTION % 'shelve']),
    ('os_compute_api:os-shelve:unshelve', PROJECT_MEMBER_OR_ADMIN,
     'Unshelve (restore) shelved server', [ACTION % 'unshelve']),
    ('os_compute_api:os-shelve:unshelve_to_host', ADMIN,
     'Unshelve (restore) shelve offloaded server to a specific host',
     [ACTION % 'unshelve']),
    ('os_compute_api:os-shelve:shelve_offload', ADMIN,
     'Shelf-offload (remove) server', [ACTION % 'shelveOffload']),
    ('os_compute_api:os-console-output', PROJECT_MEMBER_OR_ADMIN,
     'Show console output for a server', [ACTION % 'os-getConsoleOutput']),
    ('os_compute_api:os-server-diagnostics', ADMIN,
     'Show the usage data for a server', ['GET %s/diagnostics' % SRV]),
    # -- server metadata --------------------------------------------------
    ('os_compute_api:os-server-tags:index', PROJECT_READER_OR_ADMIN,
     'List all tags for given server', ['GET /servers/{server_id}/tags']),
    ('os_compute_api:os-server-tags:show', PROJECT_READER_OR_ADMIN,
     'Check tag existence on the server',
     ['GET /servers/{server_id}/tags/{tag}']),
    ('os_compute_api:os-server-tags:update_all', PROJECT_MEMBER_OR_ADMIN,
     'Replace all tags on specified server with the new set of tags.',
     ['PUT /servers/{server_id}/tags']),
    ('os_compute_api:os-server-tags:update', PROJECT_MEMBER_OR_ADMIN,
     'Add a single tag to the server if server has no specified tag',
     ['PUT /servers/{server_id}/tags/{tag}']),
    ('os_compute_api:os-server-tags:delete_all', PROJECT_MEMBER_OR_ADMIN,
     'Delete all the server tags', ['DELETE /servers/{server_id}/tags']),
    ('os_compute_api:os-server-tags:delete', PROJECT_MEMBER_OR_ADMIN,
     'Delete a single tag from the specified server',
     ['DELETE /servers/{server_id}/tags/{tag}']),
    ('os_compute_api:server-metadata:index', PROJECT_READER_OR_ADMIN,
     'List all metadata of a server', ['GET %s/metadata' % SRV]),
    ('os_compute_api:server-metadata:show', PROJECT_READER_OR_ADMIN,
     'Show metadata for a server', ['GET %s/metadata/{key}' % SRV]),
    ('os_compute_api:server-metadata:create', PROJECT_MEMBER_OR_ADMIN,
     'Create metadata for a server', ['POST %s/metadata' % SRV]),
    ('os_compute_api:server-metadata:update_all', PROJECT_MEMBER_OR_ADMIN,
     'Replace metadata for a server', ['PUT %s/metadata' % SRV]),
    ('os_compute_api:server-metadata:update', PROJECT_MEMBER_OR_ADMIN,
     'Update metadata from a server', ['PUT %s/metadata/{key}' % SRV]),
    ('os_compute_api:server-metadata:delete', PROJECT_MEMBER_OR_ADMIN,
     'Delete metadata from a server', ['DELETE %s/metadata/{key}' % SRV]),
    # -- moves -------------------------------------------------------------
    ('os_compute_api:os-migrate-server:migrate', PROJECT_MANAGER_OR_ADMIN,
     'Cold migrate a server without specifying a host',
     [ACTION % 'migrate']),
    ('os_compute_api:os-migrate-server:migrate:host', ADMIN,
     'Cold migrate a server to a specified host', [ACTION % 'migrate']),
    ('os_compute_api:os-migrate-server:migrate_live',
     PROJECT_MANAGER_OR_ADMIN,
     'Live migrate a server to a new host without a reboot without '
     'specifying a host', [ACTION % 'os-migrateLive']),
    ('os_compute_api:os-migrate-server:migrate_live:host', ADMIN,
     'Live migrate a server to a specified host without a reboot',
     [ACTION % 'os-migrateLive']),
    ('os_compute_api:os-evacuate', ADMIN,
     'Evacuate a server from a failed host to a new host',
     [ACTION % 'evacuate']),
    ('os_compute_api:os-migrations:index', PROJECT_MANAGER_OR_ADMIN,
     'List migrations without host info',
     ['GET /os-migrations', 'GET /os-migrations/{migration_id}']),
    ('os_compute_api:os-migrations:index:all_projects', ADMIN,
     'List migrations for all or cross projects',
     ['GET /os-migrations', 'GET /os-migrations/{migration_id}']),
    ('os_compute_api:os-migrations:index:host', ADMIN,
     'List migrations with host info',
     ['GET /os-migrations', 'GET /os-migrations/{migration_id}']),
    (S + 'migrations:index', PROJECT_MANAGER_OR_ADMIN,
     'Lists in-progress live migrations for a given server without host '
     'info', ['GET /servers/{server_id}/migrations']),
    (S + 'migrations:index:host', ADMIN,
     'Lists in-progress live migrations for a given server with host info',
     ['GET /servers/{server_id}/migrations']),
    (S + 'migrations:show', ADMIN,
     'Show details for an in-progress live migration for a given server',
     ['GET ' + MIG]),
    (S + 'migrations:force_complete', PROJECT_MANAGER_OR_ADMIN,
     'Force an in-progress live migration for a given server to complete',
     ['POST %s/action (force_complete)' % MIG]),
    (S + 'migrations:delete', PROJECT_MANAGER_OR_ADMIN,
     'Delete(Abort) an in-progress live migration', ['DELETE ' + MIG]),
    # -- instance actions --------------------------------------------------
    ('os_compute_api:os-instance-actions:list', PROJECT_READER_OR_ADMIN,
     'List actions for a server',
     ['GET /servers/{server_id}/os-instance-actions']),
    ('os_compute_api:os-instance-actions:show', PROJECT_READER_OR_ADMIN,
     'Show action details for a server',
     ['GET /servers/{server_id}/os-instance-actions/{request_id}']),
    ('os_compute_api:os-instance-actions:events', ADMIN,
     'Add events details in action details for a server (below 2.51)',
     ['GET /servers/{server_id}/os-instance-actions/{request_id}']),
    ('os_compute_api:os-instance-actions:events:details', ADMIN,
     'Add "details" (and tracebacks) in action events for a server',
     ['GET /servers/{server_id}/os-instance-actions/{request_id}']),
    # -- server groups -----------------------------------------------------
    ('os_compute_api:os-server-groups:create', PROJECT_MEMBER_OR_ADMIN,
     'Create a new server group', ['POST /os-server-groups']),
    ('os_compute_api:os-server-groups:delete', PROJECT_MEMBER_OR_ADMIN,
     'Delete a server group',
     ['DELETE /os-server-groups/{server_group_id}']),
    ('os_compute_api:os-server-groups:index', PROJECT_READER_OR_ADMIN,
     'List all server groups', ['GET /os-server-groups']),
    ('os_compute_api:os-server-groups:index:all_projects', ADMIN,
     'List all server groups for all projects', ['GET /os-server-groups']),
    ('os_compute_api:os-server-groups:show', PROJECT_READER_OR_ADMIN,
     'Show details of a server group',
     ['GET /os-server-groups/{server_group_id}']),
    # -- services, hypervisors, aggregates, zones --------------------------
    ('os_compute_api:os-services:list', ADMIN,
     'List all running Compute services in a region', ['GET /os-services']),
    ('os_compute_api:os-services:update', ADMIN,
     'Update a Compute service', ['PUT /os-services/{service_id}']),
    ('os_compute_api:os-services:delete', ADMIN,
     'Delete a Compute service', ['DELETE /os-services/{service_id}']),
    ('os_compute_api:os-hypervisors:list', ADMIN, 'List all hypervisors',
     ['GET /os-hypervisors']),
    ('os_compute_api:os-hypervisors:list-detail', ADMIN,
     'List all hypervisors with details', ['GET /os-hypervisors/detail']),
    ('os_compute_api:os-hypervisors:statistics', ADMIN,
     'Show summary statistics for all hypervisors (below 2.88)',
     ['GET /os-hypervisors/statistics']),
    ('os_compute_api:os-hypervisors:show', ADMIN,
     'Show details for a hypervisor',
     ['GET /os-hypervisors/{hypervisor_id}']),
    ('os_compute_api:os-hypervisors:uptime', ADMIN,
     'Show the uptime of a hypervisor (below 2.88)',
     ['GET /os-hypervisors/{hypervisor_id}/uptime']),
    ('os_compute_api:os-hypervisors:search', ADMIN,
     'Search hypervisor by hypervisor_hostname pattern (below 2.53)',
     ['GET /os-hypervisors/{hypervisor_hostname_pattern}/search']),
    ('os_compute_api:os-hypervisors:servers', ADMIN,
     'List all servers on hypervisors (below 2.53)',
     ['GET /os-hypervisors/{hypervisor_hostname_pattern}/servers']),
    ('os_compute_api:os-aggregates:index', ADMIN, 'List all aggregates',
     ['GET /os-aggregates']),
    ('os_compute_api:os-aggregates:create', ADMIN, 'Create an aggregate',
     ['POST /os-aggregates']),
    ('os_compute_api:os-aggregates:show', ADMIN,
     'Show details for an aggregate', ['GET /os-aggregates/{aggregate_id}']),
    ('os_compute_api:os-aggregates:update', ADMIN,
     'Update name and/or availability zone of an aggregate',
     ['PUT /os-aggregates/{aggregate_id}']),
    ('os_compute_api:os-aggregates:delete', ADMIN, 'Delete an aggregate',
     ['DELETE /os-aggregates/{aggregate_id}']),
    ('os_compute_api:os-aggregates:add_host', ADMIN,
     'Add a host to an aggregate',
     ['POST /os-aggregates/{aggregate_id}/action (add_host)']),
    ('os_compute_api:os-aggregates:remove_host', ADMIN,
     'Remove a host from an aggregate',
     ['POST /os-aggregates/{aggregate_id}/action (remove_host)']),
    ('os_compute_api:os-aggregates:set_metadata', ADMIN,
     'Create or replace metadata for an aggregate',
     ['POST /os-aggregates/{aggregate_id}/action (set_metadata)']),
    ('os_compute_api:os-availability-zone:list', ANY,
     'List availability zone information without host information',
     ['GET /os-availability-zone']),
    ('os_compute_api:os-availability-zone:detail', ADMIN,
     'List detailed availability zone information with host information',
     ['GET /os-availability-zone/detail']),
    # -- flavors, limits, quotas, extensions -------------------------------
    ('os_compute_api:os-flavor-manage:create', ADMIN, 'Create a flavor',
     ['POST /flavors']),
    ('os_compute_api:os-flavor-manage:update', ADMIN,
     'Update a flavor', ['PUT /flavors/{flavor_id}']),
    ('os_compute_api:os-flavor-manage:delete', ADMIN, 'Delete a flavor',
     ['DELETE /flavors/{flavor_id}']),
    ('os_compute_api:os-flavor-extra-specs:index', PROJECT_READER_OR_ADMIN,
     'List extra specs for a flavor',
     ['GET /flavors/{flavor_id}/os-extra_specs']),
    ('os_compute_api:os-flavor-extra-specs:show', PROJECT_READER_OR_ADMIN,
     'Show an extra spec for a flavor',
     ['GET /flavors/{flavor_id}/os-extra_specs/{flavor_extra_spec_key}']),
    ('os_compute_api:os-flavor-extra-specs:create', ADMIN,
     'Create extra specs for a flavor',
     ['POST /flavors/{flavor_id}/os-extra_specs']),
    ('os_compute_api:os-flavor-extra-specs:update', ADMIN,
     'Update an extra spec for a flavor',
     ['PUT /flavors/{flavor_id}/os-extra_specs/{flavor_extra_spec_key}']),
    ('os_compute_api:os-flavor-extra-specs:delete', ADMIN,
     'Delete an extra spec for a flavor',
     ['DELETE /flavors/{flavor_id}/os-extra_specs/{flavor_extra_spec_key}']),
    ('os_compute_api:os-flavor-access', ADMIN,
     'List flavor access information',
     ['GET /flavors/{flavor_id}/os-flavor-access']),
    ('os_compute_api:os-flavor-access:add_tenant_access', ADMIN,
     'Add flavor access to a tenant',
     ['POST /flavors/{flavor_id}/action (addTenantAccess)']),
    ('os_compute_api:os-flavor-access:remove_tenant_access', ADMIN,
     'Remove flavor access from a tenant',
     ['POST /flavors/{flavor_id}/action (removeTenantAccess)']),
    ('os_compute_api:limits', ANY, 'Show rate and absolute limits for the '
     'current user project', ['GET /limits']),
    ('os_compute_api:limits:other_project', ADMIN,
     'Show rate and absolute limits of another project', ['GET /limits']),
    ('os_compute_api:os-quota-sets:show', PROJECT_READER_OR_ADMIN,
     'Show a quota', ['GET /os-quota-sets/{tenant_id}']),
    ('os_compute_api:os-quota-sets:detail', PROJECT_READER_OR_ADMIN,
     'Show the detail of quota', ['GET /os-quota-sets/{tenant_id}/detail']),
    ('os_compute_api:os-quota-sets:defaults', ANY,
     'List default quotas', ['GET /os-quota-sets/{tenant_id}/defaults']),
    ('os_compute_api:os-quota-sets:update', ADMIN, 'Update the quotas',
     ['PUT /os-quota-sets/{tenant_id}']),
    ('os_compute_api:os-quota-sets:delete', ADMIN,
     'Revert quotas to defaults', ['DELETE /os-quota-sets/{tenant_id}']),
    ('os_compute_api:os-quota-class-sets:show', ADMIN,
     'List quotas for specific quota classs',
     ['GET /os-quota-class-sets/{quota_class}']),
    ('os_compute_api:os-quota-class-sets:update', ADMIN,
     'Update quotas for specific quota class',
     ['PUT /os-quota-class-sets/{quota_class}']),
    ('os_compute_api:extensions', ANY, 'List available extensions and '
     'show information for an extension by alias',
     ['GET /extensions', 'GET /extensions/{alias}']),
    # -- nova_moves additions (no Nova counterpart): admin only ------------
    # -- os-keypairs (nova/policies/keypairs.py): the admin, or the
    # user whose key pairs they are --------------------------------------
    (KP + 'index', ADMIN_OR_USER, 'List all keypairs', ['GET /os-keypairs']),
    (KP + 'create', ADMIN_OR_USER, 'Create a keypair',
     ['POST /os-keypairs']),
    (KP + 'delete', ADMIN_OR_USER, 'Delete a keypair',
     ['DELETE /os-keypairs/{keypair_name}']),
    (KP + 'show', ADMIN_OR_USER, 'Show details of a keypair',
     ['GET /os-keypairs/{keypair_name}']),
    ('nova_moves:placement:show', ADMIN,
     'See resource providers, usages and allocations',
     ['GET /os-nova-moves-placement']),
    ('nova_moves:os-host-drains:create', ADMIN,
     'Drain a compute host (move every server off it)',
     ['POST /os-host-drains']),
    ('nova_moves:os-host-drains:index', ADMIN, 'List host drains',
     ['GET /os-host-drains']),
    ('nova_moves:os-host-drains:show', ADMIN,
     'Show a host drain and its servers', ['GET /os-host-drains/{drain_id}']),
    ('nova_moves:os-host-drains:delete', ADMIN, 'Cancel a host drain',
     ['DELETE /os-host-drains/{drain_id}']),
    ('nova_moves:test-hooks', ADMIN,
     'Inject failures into compute agents (only when enabled)',
     ['PUT /os-nova-moves-test/computes/{host}/faults']),
]

_API += host_usage_policies.RULES

# Nova's deprecated_rule for the rules it split in 32.0.0: an operator's
# override of the old rule carries over to the new, admin-only one.
_SPLIT_FROM = {
    'os_compute_api:os-migrate-server:migrate_live:host':
        'os_compute_api:os-migrate-server:migrate_live',
    'os_compute_api:os-migrations:index:all_projects':
        'os_compute_api:os-migrations:index',
    'os_compute_api:os-migrations:index:host':
        'os_compute_api:os-migrations:index',
    S + 'migrations:index:host': S + 'migrations:index',
}
_SPLIT_REASON = ('Split out of %s to keep host details and other projects '
                 'admin-only; an override of that rule carries over.')


def _operations(ops):
    return [{'method': op.split(' ', 1)[0], 'path': op.split(' ', 1)[1]}
            for op in ops]


def list_rules():
    rules = [policy.RuleDefault(name, check, description,
                                deprecated_rule=deprecated)
             for name, check, description, deprecated in _BASE]
    rules += [policy.RuleDefault(name, check, description,
                                 deprecated_for_removal=True,
                                 deprecated_reason=_LEGACY_REASON,
                                 deprecated_since=_LEGACY_SINCE)
              for name, check, description in _LEGACY]
    for name, check, description, ops in _API:
        deprecated = None
        if name in _SPLIT_FROM:
            deprecated = policy.DeprecatedRule(
                _SPLIT_FROM[name], ADMIN,
                deprecated_reason=_SPLIT_REASON % _SPLIT_FROM[name],
                deprecated_since='32.0.0')
        rules.append(policy.DocumentedRuleDefault(
            name, check, description, _operations(ops),
            scope_types=['project'], deprecated_rule=deprecated))
    return rules


def set_defaults(conf):
    """Nova's current behaviour: new defaults and token scope enforced.
    (oslo.policy >= 4.5 has no enforce_scope option: always enforced.)"""
    policy_opts.set_defaults(conf, enforce_new_defaults=True,
                             enforce_scope=True)


def get_enforcer():
    """For oslopolicy-sample-generator and -policy-generator."""
    cfg.CONF([], project='nova_moves')
    return _build(cfg.CONF)


def _build(conf):
    set_defaults(conf)
    enforcer = policy.Enforcer(conf)
    enforcer.register_defaults(list_rules())
    return enforcer
