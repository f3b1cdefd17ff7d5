"""Nova's rules (names, defaults, descriptions of nova/policies/*.py,
Nova 32.0.0) for the server addresses, os-hosts, the usage reports,
the server password and external events; policies.py registers them
with the rest. A leaf: the check strings are policies.py's rule names.
"""
ADMIN = 'rule:context_is_admin'
PROJECT_MEMBER_OR_ADMIN = 'rule:project_member_or_admin'
PROJECT_READER_OR_ADMIN = 'rule:project_reader_or_admin'
# Nova's SERVICE_ROLE: the service role (Neutron, Cinder sending events)
# or admin, until Nova drops admin from it.
SERVICE_OR_ADMIN = 'rule:service_or_admin'

_HOSTS = 'os_compute_api:os-hosts:%s'
_HOST = '/os-hosts/{host_name}'
_PASSWORD = '/servers/{server_id}/os-server-password'
_USAGE = 'os_compute_api:os-simple-tenant-usage:%s'
_AUDIT = 'os_compute_api:os-instance-usage-audit-log:%s'

# (name, check string, description, operations "METHOD path").
RULES = [
    ('os_compute_api:ips:show', PROJECT_READER_OR_ADMIN,
     'Show IP addresses details for a network label of a server',
     ['GET /servers/{server_id}/ips/{network_label}']),
    ('os_compute_api:ips:index', PROJECT_READER_OR_ADMIN,
     'List IP addresses that are assigned to a server',
     ['GET /servers/{server_id}/ips']),
    (_HOSTS % 'list', ADMIN, 'List physical hosts (deprecated: '
     'os-hypervisors and os-services; below 2.43).',
     ['GET /os-hosts']),
    (_HOSTS % 'show', ADMIN, 'Show physical host (below 2.43).',
     ['GET ' + _HOST]),
    (_HOSTS % 'update', ADMIN, 'Update physical host (below 2.43).',
     ['PUT ' + _HOST]),
    (_HOSTS % 'reboot', ADMIN, 'Reboot physical host (below 2.43).',
     ['GET %s/reboot' % _HOST]),
    (_HOSTS % 'shutdown', ADMIN, 'Shutdown physical host (below 2.43).',
     ['GET %s/shutdown' % _HOST]),
    (_HOSTS % 'start', ADMIN, 'Start physical host (below 2.43).',
     ['GET %s/startup' % _HOST]),
    (_USAGE % 'show', PROJECT_READER_OR_ADMIN,
     'Show usage statistics for a specific tenant',
     ['GET /os-simple-tenant-usage/{tenant_id}']),
    (_USAGE % 'list', ADMIN, 'List per tenant usage statistics for all '
     'tenants', ['GET /os-simple-tenant-usage']),
    (_AUDIT % 'list', ADMIN, 'List all usage audits.',
     ['GET /os-instance_usage_audit_log']),
    (_AUDIT % 'show', ADMIN, 'List all usage audits occurred before a '
     'specified time for all servers on all compute hosts where usage '
     'auditing is configured',
     ['GET /os-instance_usage_audit_log/{before_timestamp}']),
    ('os_compute_api:os-server-password:show', PROJECT_READER_OR_ADMIN,
     'Show the encrypted administrative password of a server',
     ['GET ' + _PASSWORD]),
    ('os_compute_api:os-server-password:clear', PROJECT_MEMBER_OR_ADMIN,
     'Clear the encrypted administrative password of a server',
     ['DELETE ' + _PASSWORD]),
    ('os_compute_api:os-server-external-events:create', SERVICE_OR_ADMIN,
     'Create one or more external events',
     ['POST /os-server-external-events']),
]
