"""OpenAPI operations, schemas and request bodies of the server metadata,
server tags, flavor extra specs and access lists, PUT /servers/{id},
quota classes, hypervisor search/servers and the v2.0 version document
(openapi.py merges them; kept here so that module stays small)."""
from nova_moves.api.openapi_schemas import (
    INT, NSTR, SCHEMAS, STR, by_version, f, listing, obj, ref, wrap)


def _ok(schema, description='OK'):
    if isinstance(schema, str):
        schema = ref(schema)
    return {'description': description,
            'content': {'application/json': {'schema': schema}}}


_SERVERS_OF_HOST = {'type': 'array', 'items': obj({'name': STR,
                                                    'uuid': STR})}
for _name in ('HypervisorBrief', 'Hypervisor'):
    # 2.53 with_servers (and /os-hypervisors/{pattern}/servers below).
    SCHEMAS[_name]['properties']['servers'] = f(_SERVERS_OF_HOST,
                                                optional=True)
# PUT /servers/{id}: Nova's reduced server (no OS-EXT-*, usage, zone,
# config drive, key, host status, security groups or volumes).
SCHEMAS['ServerUpdated'] = obj({
    name: schema for name, schema in SCHEMAS['Server']['properties'].items()
    if not name.startswith(('OS-EXT-SRV-ATTR:', 'OS-SRV-USG:',
                            'OS-EXT-STS:'))
    and name not in ('OS-EXT-AZ:availability_zone', 'config_drive',
                     'key_name', 'host_status', 'security_groups',
                     'os-extended-volumes:volumes_attached')})
_METADATA = {'type': 'object', 'additionalProperties': STR}
# GET /servers/{id}/diagnostics from 2.48 (Nova's view: every field,
# null where the driver does not know it).
_NINT, _NNUM = {'type': ['integer', 'null']}, {'type': ['number', 'null']}
SCHEMAS['ServerDiagnostics'] = obj({
    'state': {'type': ['string', 'null'], 'enum': [
        'pending', 'running', 'paused', 'shutdown', 'crashed', 'suspended',
        None]},
    'driver': NSTR, 'hypervisor': NSTR, 'hypervisor_os': NSTR,
    'uptime': _NINT, 'config_drive': {'type': ['boolean', 'null']},
    'num_cpus': _NINT, 'num_nics': _NINT, 'num_disks': _NINT,
    'cpu_details': {'type': 'array', 'items': obj({
        'id': _NINT, 'time': _NINT, 'utilisation': _NINT})},
    'nic_details': {'type': 'array', 'items': obj(dict(
        {name: _NINT for name in (
            'rx_octets', 'rx_errors', 'rx_drop', 'rx_packets', 'tx_octets',
            'tx_errors', 'tx_drop', 'tx_packets')},
        mac_address=NSTR, rx_rate=_NINT, tx_rate=_NINT))},
    'disk_details': {'type': 'array', 'items': obj({
        name: _NINT for name in ('read_bytes', 'read_requests',
                                 'write_bytes', 'write_requests',
                                 'errors_count')})},
    'memory_details': obj({'maximum': _NINT, 'used': _NINT})})
# Below 2.48: the driver's own flat keys (here libvirt's old ones).
_DIAGNOSTICS_FLAT = {'type': 'object', 'additionalProperties': _NNUM}
_QUOTA_CLASS = obj(dict(
    {name: INT for name in ('cores', 'ram', 'instances', 'metadata_items',
                            'key_pairs')},
    **{name: f(INT, until='2.49') for name in (
        'fixed_ips', 'floating_ips', 'security_groups',
        'security_group_rules')},
    **{name: f(INT, since='2.50') for name in (
        'server_groups', 'server_group_members')},
    **{name: f(INT, until='2.56') for name in (
        'injected_files', 'injected_file_content_bytes',
        'injected_file_path_bytes')}))
SCHEMAS['QuotaClassSet'] = wrap('quota_class_set', obj(dict(
    _QUOTA_CLASS['properties'], id=STR)))
SCHEMAS['QuotaClassSetUpdated'] = wrap('quota_class_set', _QUOTA_CLASS)

_BEFORE_2_53 = {'x-max-version': '2.52'}
OPERATIONS = {
    'v20': ('Show the v2.0 version (no token; nothing is served under '
            '/v2/).', [], {'200': _ok('Version')}),
    'flavors_update': (
        "Update a flavor's description (admin).", [],
        {'200': _ok(wrap('flavor', ref('Flavor')))},
        {'x-min-version': '2.55'}),
    'servers_update': (
        'Update a server: name, accessIPv4/6, OS-DCF:diskConfig, '
        'description (2.19), pinned_availability_zone (2.104: null '
        'unpins, the current zone re-pins, else 409).', [],
        {'200': _ok(wrap('server', ref('ServerUpdated')))}),
    'server_metadata_index': ("A server's metadata.", [],
                              {'200': _ok(wrap('metadata', _METADATA))}),
    'server_metadata_create': (
        "Add items to a server's metadata (403 past maxServerMeta).", [],
        {'200': _ok(wrap('metadata', _METADATA))}),
    'server_metadata_update_all': (
        "Replace a server's metadata (403 past maxServerMeta).", [],
        {'200': _ok(wrap('metadata', _METADATA))}),
    'server_metadata_show': ('One metadata item.', [],
                             {'200': _ok(wrap('meta', _METADATA))}),
    'server_metadata_update': ('Set one metadata item.', [],
                               {'200': _ok(wrap('meta', _METADATA))}),
    'server_metadata_delete': ('Delete one metadata item.', [],
                               {'204': {'description': 'Deleted'}}),
    'quota_class_sets_show': (
        'A quota class (admin); the default class holds every '
        "project's defaults.", [], {'200': _ok('QuotaClassSet')}),
    'quota_class_sets_update': (
        'Set a quota class (admin); -1 is unlimited.', [],
        {'200': _ok('QuotaClassSetUpdated')}),
    'hypervisors_search': (
        'Hypervisors whose hostname contains the pattern (admin; removed '
        'in 2.53: use hypervisor_hostname_pattern).', [],
        {'200': _ok(wrap('hypervisors', {
            'type': 'array', 'items': ref('HypervisorBrief')}))},
        _BEFORE_2_53),
    'hypervisors_servers': (
        'Hypervisors whose hostname contains the pattern, with their '
        'servers (admin; removed in 2.53: use with_servers).', [],
        {'200': _ok(wrap('hypervisors', {
            'type': 'array', 'items': ref('HypervisorBrief')}))},
        _BEFORE_2_53),
    'hypervisors_index': (
        'List hypervisors (admin).',
        ['hypervisor_hostname_pattern', 'with_servers', 'limit', 'marker'],
        {'200': _ok(listing('hypervisors', ref('HypervisorBrief')))}),
    'hypervisors_detail': (
        'List hypervisors with details (admin).',
        ['hypervisor_hostname_pattern', 'with_servers', 'limit', 'marker'],
        {'200': _ok(listing('hypervisors', ref('Hypervisor')))}),
    'hypervisors_show': ('Show a hypervisor (admin).', ['with_servers'],
                         {'200': _ok(wrap('hypervisor', ref('Hypervisor')))}),
    'host_drains_index': (
        'nova_moves: list host drains with their counts (admin).',
        ['host', 'status', 'limit', 'marker'],
        {'200': _ok(listing('host_drains', ref('HostDrain')))}),
}
_SERVER_FILTERS = ['all_tenants', 'project_id', 'host', 'status', 'name',
                   'flavor', 'image', 'reservation_id', 'changes-since',
                   'deleted', 'sort_key', 'sort_dir', 'limit', 'marker']
OPERATIONS['servers_index'] = (
    'List servers (id, name, links).', _SERVER_FILTERS,
    {'200': _ok(listing('servers', {'anyOf': [
        ref('ServerBrief'), ref('ServerPartial')]}))})
OPERATIONS['servers_detail'] = (
    'List servers with details.', _SERVER_FILTERS,
    {'200': _ok(listing('servers', {'anyOf': [
        ref('ServerInList'), ref('ServerPartial')]}))})
_FLAVOR_FILTERS = ['is_public', 'minRam', 'minDisk', 'sort_key', 'sort_dir',
                   'limit', 'marker', 'name']  # name: 2.102
OPERATIONS['flavors_index'] = ('List flavors.', _FLAVOR_FILTERS, {
    '200': _ok(listing('flavors', ref('FlavorBrief')))})
OPERATIONS['flavors_detail'] = ('List flavors with details.',
                                _FLAVOR_FILTERS, {
                                    '200': _ok(listing('flavors',
                                                       ref('Flavor')))})
_SPECS = {'type': 'object', 'additionalProperties': STR}
# Create and update answer with the request body, as Nova: a number
# stays a number there (it is stored, and shown, as its string).
_SPECS_ECHO = {'type': 'object',
               'additionalProperties': {'type': ['string', 'number']}}
_ACCESS = wrap('flavor_access', {'type': 'array', 'items': obj(
    {'flavor_id': STR, 'tenant_id': STR})})
_TAGS = wrap('tags', {'type': 'array', 'items': STR})
_TAGS_FROM = {'x-min-version': '2.26'}
OPERATIONS.update({
    'flavors_extra_specs_create': (
        "Add or update a flavor's extra specs (admin); answers with the "
        'request body.', [], {'200': _ok(wrap('extra_specs',
                                              _SPECS_ECHO))}),
    'flavors_extra_spec': ('One flavor extra spec: {key: value}.', [],
                           {'200': _ok(_SPECS)}),
    'flavors_extra_spec_update': (
        'Set one flavor extra spec (admin); the body names the key of '
        'the URL.', [], {'200': _ok(_SPECS_ECHO)}),
    'flavors_extra_spec_delete': ('Delete one flavor extra spec (admin).',
                                  [], {'200': {'description': 'Deleted'}}),
    'flavors_access': (
        "A private flavor's access list (admin; 404 for a public one).",
        [], {'200': _ok(_ACCESS)}),
    'flavors_action': (
        'addTenantAccess (409: public flavor or already listed) or '
        'removeTenantAccess (404: not listed) (admin).', [],
        {'200': _ok(_ACCESS)}),
    'server_diagnostics': (
        "A server's diagnostics from its hypervisor (admin; 409 unless "
        'it runs on a host, 501 when the hypervisor gives none): Nova\'s '
        'standard format from 2.48, flat driver keys (cpu0_time, memory, '
        'vda_read ...) below.', [],
        {'200': _ok(by_version(('2.48', None, ref('ServerDiagnostics')),
                               (None, '2.47', _DIAGNOSTICS_FLAT)))}),
    'server_tags_index': ("A server's tags.", [], {'200': _ok(_TAGS)},
                          _TAGS_FROM),
    'server_tags_update_all': ("Replace a server's tags (at most 50).", [],
                               {'200': _ok(_TAGS)}, _TAGS_FROM),
    'server_tags_delete_all': ("Delete a server's tags.", [],
                               {'204': {'description': 'Deleted'}},
                               _TAGS_FROM),
    'server_tags_show': ('Whether the server has the tag (204, else 404).',
                         [], {'204': {'description': 'Tagged'}}, _TAGS_FROM),
    'server_tags_update': (
        'Add a tag: 201 with its Location, 204 when already there.', [],
        {'201': {'description': 'Added'},
         '204': {'description': 'Already there'}}, _TAGS_FROM),
    'server_tags_delete': ('Delete a tag.', [],
                           {'204': {'description': 'Deleted'}}, _TAGS_FROM),
})
ALIASES = {'v20_slash': 'v20'}
NO_TOKEN = {'v20', 'v20_slash'}


__all__ = ['OPERATIONS', 'ALIASES', 'NO_TOKEN']
