"""Response schemas of the OpenAPI description (see openapi.py for the
microversion extensions they use) and the small builders they are written
with."""
import copy

from nova_moves.api import microversion

OPENAPI_VERSION = '3.1.0'
_MAX = microversion.MAX_VERSION

# --- schema helpers ----------------------------------------------------------

STR = {'type': 'string'}
NSTR = {'type': ['string', 'null']}
INT = {'type': 'integer'}
BOOL = {'type': 'boolean'}
NUM = {'type': 'number'}
ANY_OBJ = {'type': 'object'}
LINKS = {'type': 'array', 'items': {
    'type': 'object', 'required': ['rel', 'href'],
    'properties': {'rel': STR, 'href': STR, 'type': STR},
    'additionalProperties': False}}


def f(schema, since=None, until=None, admin=False, public_since=None,
      optional=False):
    """A property: ``schema`` with its microversion range and audience."""
    schema = copy.deepcopy(schema)
    if since:
        schema['x-min-version'] = since
    if until:
        schema['x-max-version'] = until
    if admin:
        schema['x-admin-only'] = True
    if public_since:
        schema['x-public-since'] = public_since
    if optional:
        schema['x-optional'] = True
    return schema


def obj(properties, additional=False):
    required, x_required = [], []
    for name, schema in properties.items():
        if schema.get('x-optional'):
            continue
        if any(k in schema for k in ('x-min-version', 'x-max-version',
                                     'x-admin-only')):
            x_required.append(name)
        else:
            required.append(name)
    body = {'type': 'object', 'properties': properties,
            'additionalProperties': additional}
    if required:
        body['required'] = required
    if x_required:
        body['x-required'] = x_required
    return body


def by_version(*alternatives):
    """(since, until, schema) alternatives of one value (anyOf: see
    openapi.py)."""
    return {'anyOf': [f(schema, since=since, until=until)
                      for since, until, schema in alternatives]}


def ref(name):
    return {'$ref': '#/components/schemas/%s' % name}


def wrap(key, schema):
    return obj({key: schema})


def ok(schema, description='OK'):
    """A JSON response of ``schema`` (a name: that component's)."""
    if isinstance(schema, str):
        schema = ref(schema)
    return {'description': description,
            'content': {'application/json': {'schema': schema}}}


def listing(key, schema):
    return obj({key: {'type': 'array', 'items': schema},
                key + '_links': f(LINKS, optional=True)})


# --- response schemas --------------------------------------------------------

# Every status views.server_status shows (a unit test holds them equal).
_STATUSES = ['ACTIVE', 'BUILD', 'ERROR', 'SHUTOFF', 'DELETED', 'RESIZE',
             'VERIFY_RESIZE', 'REVERT_RESIZE', 'MIGRATING', 'REBUILD',
             'PAUSED', 'SUSPENDED', 'SHELVED', 'SHELVED_OFFLOADED',
             'REBOOT', 'HARD_REBOOT', 'RESCUE']

_FLAVOR_LINK = obj({'id': STR, 'links': LINKS})
_FLAVOR_EMBEDDED = obj({'vcpus': INT, 'ram': INT, 'disk': INT,
                        'ephemeral': INT, 'swap': INT,
                        'original_name': STR, 'extra_specs': ANY_OBJ})

SCHEMAS = {
    'Fault': {'type': 'object', 'minProperties': 1, 'maxProperties': 1,
              'additionalProperties': obj({'code': INT, 'message': STR})},
    'VersionItem': obj({
        'id': STR, 'status': STR, 'version': STR, 'min_version': STR,
        'updated': STR, 'links': LINKS,
        'media-types': f({'type': 'array'}, optional=True)}),
    # nova_moves' additions, in Nova's extension_info format
    # (api/extensions.py).
    'Extension': obj({'alias': STR, 'name': STR, 'description': STR,
                      'links': {'type': 'array'}, 'namespace': STR,
                      'updated': STR}),
    'Versions': wrap('versions', {'type': 'array',
                                  'items': ref('VersionItem')}),
    'Version': wrap('version', ref('VersionItem')),
    'ServerBrief': obj({'id': STR, 'name': STR, 'links': LINKS}),
    'ServerCreated': wrap('server', obj({
        'id': STR, 'links': LINKS, 'OS-DCF:diskConfig': STR,
        'security_groups': {'type': 'array'}, 'adminPass': STR})),
    'Server': obj({
        'id': STR, 'name': STR, 'links': LINKS,
        'status': {'type': 'string', 'enum': _STATUSES},
        'tenant_id': STR, 'user_id': STR, 'metadata': ANY_OBJ,
        'hostId': STR,
        'image': {'oneOf': [{'type': 'string', 'enum': ['']},
                            obj({'id': STR, 'links': LINKS,
                                 'properties': f(ANY_OBJ, since='2.98')})]},
        'flavor': by_version(('2.1', '2.46', _FLAVOR_LINK),
                             ('2.47', None, _FLAVOR_EMBEDDED)),
        'created': STR, 'updated': STR, 'addresses': ANY_OBJ,
        'accessIPv4': STR, 'accessIPv6': STR, 'OS-DCF:diskConfig': STR,
        'progress': f(INT, optional=True), 'OS-EXT-AZ:availability_zone': STR,
        'config_drive': STR, 'key_name': NSTR,
        'OS-SRV-USG:launched_at': NSTR, 'OS-SRV-USG:terminated_at': NSTR,
        'OS-EXT-STS:task_state': NSTR, 'OS-EXT-STS:vm_state': STR,
        'OS-EXT-STS:power_state': INT,
        'os-extended-volumes:volumes_attached': {'type': 'array'},
        'security_groups': {'type': 'array'},
        'OS-EXT-SRV-ATTR:host': f(NSTR, admin=True),
        'OS-EXT-SRV-ATTR:hypervisor_hostname': f(NSTR, admin=True),
        'OS-EXT-SRV-ATTR:instance_name': f(STR, admin=True),
        'OS-EXT-SRV-ATTR:reservation_id': f(STR, since='2.3', admin=True),
        'OS-EXT-SRV-ATTR:launch_index': f(INT, since='2.3', admin=True),
        'OS-EXT-SRV-ATTR:kernel_id': f(STR, since='2.3', admin=True),
        'OS-EXT-SRV-ATTR:ramdisk_id': f(STR, since='2.3', admin=True),
        'OS-EXT-SRV-ATTR:root_device_name': f(NSTR, since='2.3',
                                              admin=True),
        'OS-EXT-SRV-ATTR:user_data': f(NSTR, since='2.3', admin=True),
        'OS-EXT-SRV-ATTR:hostname': f(STR, since='2.3', admin=True,
                                      public_since='2.90'),
        'locked': f(BOOL, since='2.9'),
        'host_status': f({'type': 'string', 'enum': [
            '', 'UP', 'DOWN', 'MAINTENANCE', 'UNKNOWN']}, since='2.16',
            admin=True),
        'description': f(NSTR, since='2.19'),
        'tags': f({'type': 'array', 'items': STR}, since='2.26'),
        'trusted_image_certificates': f({'type': ['array', 'null']},
                                        since='2.63'),
        'server_groups': f({'type': 'array'}, since='2.71'),
        'locked_reason': f(NSTR, since='2.73'),
        'pinned_availability_zone': f(NSTR, since='2.96'),
        'scheduler_hints': f(ANY_OBJ, since='2.100'),
        'fault': f(obj({'code': INT, 'message': STR, 'created': STR,
                        'details': f(STR, admin=True, optional=True)}),
                   optional=True),
    }),
    'FlavorBrief': obj({'id': STR, 'name': STR, 'links': LINKS,
                        'description': f(NSTR, since='2.55')}),
    'Flavor': obj({
        'id': STR, 'name': STR, 'ram': INT, 'disk': INT, 'vcpus': INT,
        'links': LINKS, 'OS-FLV-EXT-DATA:ephemeral': INT,
        # Both removed in 2.102 (as Nova).
        'OS-FLV-DISABLED:disabled': f(BOOL, until='2.101'),
        # '' for no swap until 2.75, 0 from 2.75 (as Nova).
        'swap': by_version(('2.1', '2.74', {'type': ['integer', 'string']}),
                           ('2.75', None, INT)),
        'rxtx_factor': f(NUM, until='2.101'),
        'os-flavor-access:is_public': BOOL,
        'description': f(NSTR, since='2.55'),
        'extra_specs': f(ANY_OBJ, since='2.61')}),
    'Service': obj({
        'id': by_version(('2.1', '2.52', INT), ('2.53', None, STR)),
        'binary': STR, 'host': STR, 'zone': STR,
        'status': {'type': 'string', 'enum': ['enabled', 'disabled']},
        'state': {'type': 'string', 'enum': ['up', 'down']},
        'updated_at': NSTR, 'disabled_reason': NSTR,
        'forced_down': f(BOOL, since='2.11')}),
    'ServiceLegacyUpdate': wrap('service', obj({
        'host': STR, 'binary': STR,
        'status': f(STR, optional=True),
        'disabled_reason': f(STR, optional=True),
        'forced_down': f(BOOL, optional=True)})),
    'HypervisorBrief': obj({
        'id': by_version(('2.1', '2.52', INT), ('2.53', None, STR)),
        'hypervisor_hostname': STR,
        'state': {'type': 'string', 'enum': ['up', 'down']},
        'status': {'type': 'string', 'enum': ['enabled', 'disabled']}}),
    'Hypervisor': obj({
        'id': by_version(('2.1', '2.52', INT), ('2.53', None, STR)),
        'hypervisor_hostname': STR,
        'state': {'type': 'string', 'enum': ['up', 'down']},
        'status': {'type': 'string', 'enum': ['enabled', 'disabled']},
        'hypervisor_type': STR, 'hypervisor_version': INT,
        'host_ip': NSTR,
        'service': obj({'host': STR,
                        'id': {'type': ['integer', 'string', 'null']},
                        'disabled_reason': NSTR}),
        'vcpus': f(INT, until='2.87'), 'memory_mb': f(INT, until='2.87'),
        'local_gb': f(INT, until='2.87'),
        'vcpus_used': f(INT, until='2.87'),
        'memory_mb_used': f(INT, until='2.87'),
        'local_gb_used': f(INT, until='2.87'),
        'free_ram_mb': f(INT, until='2.87'),
        'free_disk_gb': f(INT, until='2.87'),
        'current_workload': f(INT, until='2.87'),
        'running_vms': f(INT, until='2.87'),
        'disk_available_least': f(INT, until='2.87'),
        'cpu_info': f(by_version(('2.1', '2.27', STR),
                                 ('2.28', '2.87', ANY_OBJ)), until='2.87'),
        'uptime': f(NSTR, since='2.88')}),
    'HypervisorUptime': wrap('hypervisor', obj({
        'id': by_version(('2.1', '2.52', INT), ('2.53', None, STR)),
        'hypervisor_hostname': STR,
        'state': {'type': 'string', 'enum': ['up', 'down']},
        'status': {'type': 'string', 'enum': ['enabled', 'disabled']},
        'uptime': NSTR})),
    'InstanceAction': obj({
        'action': STR, 'instance_uuid': STR, 'message': NSTR,
        'project_id': STR, 'request_id': STR, 'start_time': STR,
        'user_id': STR, 'updated_at': f(NSTR, since='2.58')}),
    'InstanceActionEvent': obj({
        'event': STR, 'start_time': NSTR, 'finish_time': NSTR,
        'result': NSTR, 'traceback': f(NSTR, admin=True),
        'host': f(STR, since='2.62', admin=True),
        'hostId': f(STR, since='2.62'),
        'details': f(NSTR, since='2.84')}),
    'MigrationPhases': {'type': 'array', 'items': obj({
        'phase': STR, 'started_at': STR})},
    'Migration': obj({
        'id': INT, 'created_at': STR, 'updated_at': NSTR,
        'dest_compute': NSTR, 'dest_host': NSTR, 'dest_node': NSTR,
        'instance_uuid': STR,
        'new_instance_type_id': {'type': ['integer', 'null']},
        'old_instance_type_id': {'type': ['integer', 'null']},
        'source_compute': NSTR, 'source_node': NSTR, 'status': STR,
        'migration_type': f({'type': 'string', 'enum': [
            'migration', 'resize', 'live-migration', 'evacuation']},
            since='2.23'),
        'links': f(LINKS, since='2.23', optional=True),
        'uuid': f(STR, since='2.59'),
        'user_id': f(NSTR, since='2.80'),
        'project_id': f(NSTR, since='2.80'),
        # nova_moves-migration-phases (api/extensions.py).
        'phases': f(ref('MigrationPhases'), optional=True)}),
    'ServerMigration': obj({
        'id': INT, 'server_uuid': STR, 'status': STR,
        'source_compute': NSTR, 'source_node': NSTR, 'dest_compute': NSTR,
        'dest_node': NSTR, 'dest_host': NSTR,
        'memory_total_bytes': INT, 'memory_processed_bytes': INT,
        'memory_remaining_bytes': INT, 'disk_total_bytes': INT,
        'disk_processed_bytes': INT, 'disk_remaining_bytes': INT,
        'created_at': STR, 'updated_at': NSTR,
        'uuid': f(STR, since='2.59'), 'user_id': f(NSTR, since='2.80'),
        'project_id': f(NSTR, since='2.80'),
        'phases': f(ref('MigrationPhases'), optional=True)}),
    'Image': {'type': 'object', 'required': ['id', 'name', 'status'],
              'properties': {'id': STR, 'name': STR, 'status': STR}},
}
SCHEMAS['InstanceActionDetail'] = {
    'allOf': [ref('InstanceAction')],
    'type': 'object',
    'properties': dict(SCHEMAS['InstanceAction']['properties'], events=f(
        {'type': 'array', 'items': ref('InstanceActionEvent')},
        admin=True, public_since='2.51')),
    'required': SCHEMAS['InstanceAction']['required'],
    'x-required': SCHEMAS['InstanceAction']['x-required'] + ['events'],
    'additionalProperties': False}
del SCHEMAS['InstanceActionDetail']['allOf']
# os-host-drains (a nova_moves extension, no microversion).
SCHEMAS['HostDrainServer'] = obj({
    'server_uuid': STR, 'state': {'type': 'string', 'enum': [
        'pending', 'moving', 'done', 'failed']},
    'action': {'type': ['string', 'null'], 'enum': [
        'live', 'cold', 'evacuate', None]},
    'attempts': INT, 'reason': NSTR, 'migration_uuid': NSTR,
    'migration_status': NSTR, 'dest_compute': NSTR, 'queued_at': NSTR,
    'admitted_at': NSTR, 'released_at': NSTR, 'updated_at': NSTR})
SCHEMAS['HostDrain'] = obj({
    'id': STR, 'host': STR,
    'mode': {'type': 'string', 'enum': ['live', 'cold', 'auto']},
    'target_hosts': {'type': ['array', 'null'], 'items': STR},
    'force_down_if_dead': BOOL,
    'status': {'type': 'string', 'enum': [
        'running', 'cancelling', 'cancelled', 'completed']},
    'conductor': NSTR, 'created_at': STR, 'started_at': NSTR,
    'finished_at': NSTR, 'updated_at': NSTR,
    'counts': obj({'pending': INT, 'moving': INT, 'queued': INT,
                   'done': INT, 'failed': INT, 'total': INT}),
    # The plan's estimate at the start (null for a drain from before
    # estimates), with the actual duration once it ended.
    'estimate': {'type': ['object', 'null'], 'additionalProperties': False,
                 'properties': {
                     'eta_seconds': NUM, 'estimated_finish': NSTR,
                     'concurrency': INT, 'movable': INT,
                     'actual_seconds': NUM, 'error_percent': NUM},
                 'required': ['eta_seconds', 'estimated_finish',
                              'concurrency', 'movable']},
    'servers': f({'type': 'array', 'items': ref('HostDrainServer')},
                 optional=True)})
# POST /os-host-drains with "check": true (drain_plans.build).
SCHEMAS['HostDrainPlan'] = obj({
    'host': STR, 'mode': STR, 'force_down_if_dead': BOOL, 'host_up': BOOL,
    'concurrency': INT, 'live_concurrency': INT, 'eta_seconds': NUM,
    'estimated_finish': STR, 'movable': INT, 'unmovable': INT,
    'servers': {'type': 'array', 'items': ANY_OBJ}})
# GET /servers/detail: Nova shows server_groups (2.71) in GET
# /servers/{id} only.
SCHEMAS['ServerInList'] = obj({
    name: schema for name, schema in SCHEMAS['Server']['properties'].items()
    if name != 'server_groups'})
# Nova's 2.69 partial records of a cell that does not answer (api/
# cell_lists): status UNKNOWN and what the API database knows.
_UNKNOWN = {'type': 'string', 'enum': ['UNKNOWN']}
SCHEMAS['ServerPartial'] = obj({
    'id': STR, 'status': _UNKNOWN, 'links': LINKS,
    'tenant_id': f(STR, optional=True), 'created': f(STR, optional=True)})
# The show's flavor and image come from the request spec: absent for a
# server booted before the API database kept them.
SCHEMAS['ServerPartialShow'] = obj({
    'id': STR, 'status': _UNKNOWN, 'tenant_id': STR, 'user_id': STR,
    'created': STR, 'links': LINKS, 'OS-EXT-AZ:availability_zone': STR,
    'OS-EXT-STS:power_state': INT,
    'image': f(SCHEMAS['Server']['properties']['image'], optional=True),
    'flavor': f(SCHEMAS['Server']['properties']['flavor'], optional=True),
    'server_groups': f({'type': 'array'}, optional=True)})
SCHEMAS['ServicePartial'] = obj({'binary': STR, 'host': STR,
                                 'status': _UNKNOWN})
# os-availability-zone: ``hosts`` is null in the list, a map of host ->
# binary -> state in the detail.
SCHEMAS['AvailabilityZones'] = wrap('availabilityZoneInfo', {
    'type': 'array', 'items': obj({
        'zoneName': STR, 'zoneState': obj({'available': BOOL}),
        'hosts': {'type': ['object', 'null'], 'additionalProperties': {
            'type': 'object', 'additionalProperties': obj({
                'available': BOOL, 'active': BOOL, 'updated_at': NSTR})}}})})
# GET /limits: quotas.limits() names, Nova's keys, per microversion.
SCHEMAS['Limits'] = wrap('limits', obj({
    'absolute': obj(dict(
        {name: INT for name in (
            'maxTotalRAMSize', 'maxTotalInstances', 'maxTotalCores',
            'maxTotalKeypairs', 'maxServerMeta', 'maxServerGroups',
            'maxServerGroupMembers', 'totalRAMUsed', 'totalInstancesUsed',
            'totalCoresUsed', 'totalServerGroupsUsed')},
        maxImageMeta=f(INT, until='2.38'),
        maxPersonality=f(INT, until='2.56'),
        maxPersonalitySize=f(INT, until='2.56'),
        **{name: f(INT, until='2.35') for name in (
            'maxTotalFloatingIps', 'maxSecurityGroups',
            'maxSecurityGroupRules', 'totalFloatingIpsUsed',
            'totalSecurityGroupsUsed')})),
    'rate': {'type': 'array', 'maxItems': 0}}))
