"""OpenAPI operations and schemas of Nova's own compute APIs served for
issue 40: server addresses, os-hosts, the usage reports, the server
password and external events (openapi_operations.py merges them)."""
from nova_moves.api.openapi_schemas import (
    INT, LINKS, NSTR, NUM, SCHEMAS, STR, f, obj, ok as _ok, ref, wrap)


_ADDRESSES = {'type': 'object', 'additionalProperties': {
    'type': 'array', 'items': obj({'version': INT, 'addr': STR})}}
_RESOURCE = wrap('resource', obj({
    'host': STR, 'project': STR, 'cpu': INT, 'memory_mb': INT,
    'disk_gb': INT}))
SCHEMAS['ServerUsage'] = obj({
    'hours': NUM, 'flavor': STR, 'instance_id': STR, 'name': STR,
    'tenant_id': STR, 'memory_mb': INT, 'local_gb': INT, 'vcpus': INT,
    'started_at': STR, 'ended_at': NSTR, 'state': STR, 'uptime': INT})
SCHEMAS['TenantUsage'] = obj({
    'tenant_id': STR, 'start': STR, 'stop': STR, 'total_hours': NUM,
    'total_vcpus_usage': NUM, 'total_memory_mb_usage': NUM,
    'total_local_gb_usage': NUM,
    'server_usages': f({'type': 'array', 'items': ref('ServerUsage')},
                       optional=True)})
SCHEMAS['UsageAuditLog'] = obj({
    'period_beginning': STR, 'period_ending': STR, 'num_hosts': INT,
    'num_hosts_done': INT, 'num_hosts_running': INT,
    'num_hosts_not_run': INT,
    'hosts_not_run': {'type': 'array', 'items': STR},
    'total_instances': INT, 'total_errors': INT, 'overall_status': STR,
    'log': {'type': 'object', 'additionalProperties': obj({
        'state': STR, 'instances': INT, 'errors': INT, 'message': STR})}})
_EVENTS = wrap('events', {'type': 'array', 'items': obj({
    'name': STR, 'server_uuid': STR, 'status': STR, 'code': INT,
    'tag': f(STR, optional=True)})})
_HOSTS_UNTIL = {'x-max-version': '2.42'}
_USAGE_QUERY = ['start', 'end']
_POWER = obj({'host': STR, 'power_action': {}})
# 501 as Nova's libvirt driver; the 200 body is that of the drivers that
# had host power actions.
_POWER_ANSWERS = {'200': _ok(_POWER),
                  '501': {'description': 'Not supported'}}

OPERATIONS = {
    'extensions': (
        "Nova's frozen extension list, then nova_moves' additions inside "
        "Nova's microversions.", [], {'200': _ok(wrap('extensions', {
            'type': 'array', 'items': ref('Extension')}))}),
    'extension': ("One extension by its alias (Nova's or nova_moves').", [],
                  {'200': _ok(wrap('extension', ref('Extension')))}),
    'ips_index': ("A server's addresses by network label (none: no "
                  'network service here).', [],
                  {'200': _ok(wrap('addresses', _ADDRESSES))}),
    'ips_show': ("A server's addresses on one network (404 when it is "
                 'not on that network).', [], {'200': _ok(_ADDRESSES)}),
    'server_password_show': (
        "The server's encrypted password as its guest posted it ('' when "
        'none).', [], {'200': _ok(wrap('password', STR))}),
    'server_password_clear': (
        "Forget the server's stored password (the guest's does not "
        'change).', [], {'204': {'description': 'Cleared'}}),
    'hosts_index': ('List hosts (admin; deprecated, below 2.43).',
                    ['zone'], {'200': _ok(wrap('hosts', {
                        'type': 'array', 'items': obj({
                            'host_name': STR, 'service': STR,
                            'zone': STR})}))}, _HOSTS_UNTIL),
    'hosts_show': (
        "A compute host's resources: (total), (used_now), (used_max) and "
        'per project (admin; below 2.43).', [],
        {'200': _ok(wrap('host', {'type': 'array', 'items': _RESOURCE}))},
        _HOSTS_UNTIL),
    'hosts_update': (
        'Host status / maintenance mode (admin; below 2.43): 501, use '
        'os-services.', [], {'501': {'description': 'Not supported'}},
        _HOSTS_UNTIL),
    'hosts_startup': ('Power a host on (admin; below 2.43): 501.', [],
                      _POWER_ANSWERS, _HOSTS_UNTIL),
    'hosts_shutdown': ('Power a host off (admin; below 2.43): 501.', [],
                       _POWER_ANSWERS, _HOSTS_UNTIL),
    'hosts_reboot': ('Reboot a host (admin; below 2.43): 501.', [],
                     _POWER_ANSWERS, _HOSTS_UNTIL),
    'tenant_usage_index': (
        "Every project's usage in a period (admin); detailed=1 lists "
        'the servers; limit/marker page the servers from 2.40.',
        _USAGE_QUERY + ['detailed', 'limit', 'marker'],
        {'200': _ok(obj({
            'tenant_usages': {'type': 'array', 'items': ref('TenantUsage')},
            'tenant_usages_links': f(LINKS, optional=True)}))}),
    'tenant_usage_show': (
        "One project's usage in a period, with its servers ({} when "
        'none).', _USAGE_QUERY + ['limit', 'marker'],
        {'200': _ok(obj({
            'tenant_usage': {'oneOf': [ref('TenantUsage'), obj({})]},
            'tenant_usage_links': f(LINKS, optional=True)}))}),
    'usage_audit_log_index': (
        'The usage audit of the last completed period, by compute host '
        '(admin).', [],
        {'200': _ok(wrap('instance_usage_audit_logs',
                         ref('UsageAuditLog')))}),
    'usage_audit_log_show': (
        'The usage audit of the period completed before a time '
        '("YYYY-MM-DD HH:MM:SS[.ffffff]", admin).', [],
        {'200': _ok(wrap('instance_usage_audit_log',
                         ref('UsageAuditLog')))}),
    'server_external_events_create': (
        'Events about servers from other services (service or admin): '
        '200 all accepted, 207 otherwise (each event has its code).', [],
        {'200': _ok(_EVENTS), '207': _ok(_EVENTS, 'Some not accepted')}),
}
