"""Default policies, like Nova's: admin-only where Nova is admin-only."""
from oslo_config import cfg
from oslo_policy import policy

ADMIN = 'role:admin'
ADMIN_OR_OWNER = 'role:admin or project_id:%(project_id)s'

_RULES = [
    ('os_compute_api:servers:create', ADMIN_OR_OWNER, 'Create a server'),
    ('os_compute_api:servers:index', ADMIN_OR_OWNER, 'List servers'),
    ('os_compute_api:servers:index:get_all_tenants', ADMIN,
     'List servers of every project'),
    ('os_compute_api:servers:show', ADMIN_OR_OWNER, 'Show a server'),
    ('os_compute_api:servers:delete', ADMIN_OR_OWNER, 'Delete a server'),
    ('os_compute_api:servers:create:forced_host', ADMIN,
     'Boot on a named host (availability_zone zone:host)'),
    ('os_compute_api:os-extended-server-attributes', ADMIN,
     'See OS-EXT-SRV-ATTR fields (host, hypervisor hostname)'),
    ('os_compute_api:servers:start', ADMIN_OR_OWNER,
     'Start a stopped server (os-start)'),
    ('os_compute_api:servers:stop', ADMIN_OR_OWNER,
     'Stop a server (os-stop)'),
    ('os_compute_api:servers:resize', ADMIN_OR_OWNER, 'Resize a server'),
    ('os_compute_api:servers:confirm_resize', ADMIN_OR_OWNER,
     'Confirm a resize or cold migration'),
    ('os_compute_api:servers:revert_resize', ADMIN_OR_OWNER,
     'Revert a resize or cold migration'),
    ('os_compute_api:os-migrate-server:migrate', ADMIN, 'Cold migrate'),
    ('os_compute_api:os-migrate-server:migrate:host', ADMIN,
     'Cold migrate to a named host'),
    ('os_compute_api:os-migrate-server:migrate_live', ADMIN,
     'Live migrate'),
    ('os_compute_api:os-evacuate', ADMIN, 'Evacuate'),
    ('os_compute_api:os-migrations:index', ADMIN, 'List migrations'),
    ('os_compute_api:servers:migrations:index', ADMIN,
     'List in-progress live migrations of a server'),
    ('os_compute_api:servers:migrations:show', ADMIN,
     'Show an in-progress live migration'),
    ('os_compute_api:servers:migrations:force_complete', ADMIN,
     'Force a live migration to complete'),
    ('os_compute_api:servers:migrations:delete', ADMIN,
     'Abort a live migration'),
    ('os_compute_api:os-instance-actions:list', ADMIN_OR_OWNER,
     'List instance actions'),
    ('os_compute_api:os-instance-actions:show', ADMIN_OR_OWNER,
     'Show an instance action'),
    ('os_compute_api:os-instance-actions:events', ADMIN,
     'See the events of an action below 2.51'),
    ('os_compute_api:os-instance-actions:events:details', ADMIN,
     'See event tracebacks and real hosts'),
    ('os_compute_api:os-services:list', ADMIN, 'List services'),
    ('os_compute_api:os-services:update', ADMIN,
     'Enable, disable or force down a service'),
    ('os_compute_api:os-services:delete', ADMIN, 'Delete a service'),
    ('os_compute_api:os-hypervisors:list', ADMIN, 'List hypervisors'),
    ('os_compute_api:os-hypervisors:show', ADMIN, 'Show a hypervisor'),
    ('os_compute_api:os-hypervisors:statistics', ADMIN,
     'Sum every hypervisor (below 2.88)'),
    ('os_compute_api:os-availability-zone:list', '@',
     'List availability zones'),
    ('os_compute_api:os-availability-zone:detail', ADMIN,
     'List availability zones with their hosts and services'),
    ('os_compute_api:limits', '@', "Show the project's absolute limits"),
    ('os_compute_api:limits:other_project', ADMIN,
     "Show another project's limits (tenant_id)"),
    ('os_compute_api:os-flavor-manage:create', ADMIN, 'Create a flavor'),
    ('os_compute_api:os-flavor-manage:delete', ADMIN, 'Delete a flavor'),
    ('os_compute_api:os-quota-sets:show', ADMIN_OR_OWNER,
     "Show a project's quota"),
    ('os_compute_api:os-quota-sets:detail', ADMIN_OR_OWNER,
     "Show a project's quota with usage"),
    ('os_compute_api:os-quota-sets:defaults', '@',
     'Show the default quota'),
    ('os_compute_api:os-quota-sets:update', ADMIN, "Set a project's quota"),
    ('os_compute_api:os-quota-sets:delete', ADMIN,
     "Revert a project's quota to the defaults"),
    ('os_compute_api:os-server-groups:create', ADMIN_OR_OWNER,
     'Create a server group'),
    ('os_compute_api:os-server-groups:delete', ADMIN_OR_OWNER,
     'Delete a server group'),
    ('os_compute_api:os-server-groups:index', ADMIN_OR_OWNER,
     "List the project's server groups"),
    ('os_compute_api:os-server-groups:index:all_projects', ADMIN,
     'List the server groups of every project'),
    ('os_compute_api:os-server-groups:show', ADMIN_OR_OWNER,
     'Show a server group'),
    ('nova_moves:placement:show', ADMIN,
     'See resource providers, usages and allocations'),
    ('nova_moves:os-host-drains:create', ADMIN,
     'Drain a compute host (move every server off it)'),
    ('nova_moves:os-host-drains:index', ADMIN, 'List host drains'),
    ('nova_moves:os-host-drains:show', ADMIN,
     'Show a host drain and its servers'),
    ('nova_moves:os-host-drains:delete', ADMIN, 'Cancel a host drain'),
    ('nova_moves:test-hooks', ADMIN,
     'Inject failures into compute agents (only when enabled)'),
]


def list_rules():
    return [policy.RuleDefault(name, check, description=description)
            for name, check, description in _RULES]


def get_enforcer():
    """For oslopolicy-sample-generator and -policy-generator."""
    cfg.CONF([], project='nova_moves')
    return _build(cfg.CONF)


def _build(conf):
    enforcer = policy.Enforcer(conf)
    enforcer.register_defaults(list_rules())
    return enforcer
