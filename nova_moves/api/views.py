"""Response bodies, shaped like Nova's per microversion."""
import re

import flask

from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves.api import servicegroup_cache
from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import faultinfo
from nova_moves import image_store
from nova_moves import moves
from nova_moves import states
from nova_moves import timeutil

POWER_STATES = {0: 0, 1: 1, 3: 3, 4: 4, 6: 6, 7: 7}
PROGRESS_STATUSES = ('ACTIVE', 'BUILD', 'REBUILD', 'RESIZE', 'VERIFY_RESIZE',
                     'MIGRATING')


# Nova's statuses of the lifecycle actions (api/lifecycle.py).
_LIFECYCLE_STATUS = {states.PAUSED: 'PAUSED', states.SUSPENDED: 'SUSPENDED',
                     states.SHELVED: 'SHELVED',
                     states.SHELVED_OFFLOADED: 'SHELVED_OFFLOADED',
                     states.RESCUED: 'RESCUE'}
_REBOOT_STATUS = dict(
    [(t, 'REBOOT') for t in states.SOFT_REBOOT_TASK_STATES] +
    [(t, 'HARD_REBOOT') for t in states.HARD_REBOOT_TASK_STATES])


def server_status(instance):
    vm, task = instance['vm_state'], instance['task_state']
    if vm == states.DELETED:
        return 'DELETED'
    if vm == states.ERROR:
        return 'REBUILD' if task == states.REBUILDING else 'ERROR'
    if vm == states.BUILDING:
        return 'BUILD'
    shown = moves.shown_status(vm, task)  # a move's step, from its table
    if shown:
        return shown
    if task == states.RESIZE_CONFIRMING or vm == states.RESIZED:
        return 'VERIFY_RESIZE' if vm == states.RESIZED else 'ACTIVE'
    if vm in _LIFECYCLE_STATUS:
        return _LIFECYCLE_STATUS[vm]
    if vm == states.ACTIVE and task == states.RESCUING:
        return 'RESCUE'  # Nova's: an active server being rescued
    if vm == states.ACTIVE and task in _REBOOT_STATUS:
        return _REBOOT_STATUS[task]
    if task == states.DELETING:
        return 'ACTIVE' if vm == states.ACTIVE else 'SHUTOFF'
    if vm == states.STOPPED:
        return 'SHUTOFF'
    return 'ACTIVE'


def flavor_in_server(flavor, version):
    if version >= '2.47':
        return {'vcpus': flavor['vcpus'], 'ram': flavor['memory_mb'],
                'disk': flavor['root_gb'],
                'ephemeral': flavor.get('ephemeral_gb', 0),
                'swap': flavor.get('swap', 0),
                'original_name': flavor['name'], 'extra_specs': {}}
    return {'id': flavor['flavorid'],
            'links': [common.links('flavors', flavor['flavorid'])[1]]}


def addresses(instance):
    """{network label: [{"version", "addr"}]}: what the server shows and
    GET /servers/{id}/ips serves. No network service stands behind
    nova_moves' servers, so there are none."""
    return {}


def server_brief(instance):
    return {'id': instance['uuid'], 'name': instance['display_name'],
            'links': common.links('servers', instance['uuid'])}


# What Nova's PUT /servers/{id} leaves out of the server it answers with.
_NOT_IN_UPDATE = ('OS-EXT-AZ:availability_zone', 'config_drive', 'key_name',
                  'host_status', 'security_groups',
                  'os-extended-volumes:volumes_attached')
_NOT_IN_UPDATE_PREFIXES = ('OS-EXT-SRV-ATTR:', 'OS-SRV-USG:', 'OS-EXT-STS:')


# The security groups this cloud has: Nova's default group, which every
# server boots in (there is no Neutron to make others in).
SECURITY_GROUPS = ('default',)


def security_groups(instance):
    """The names of the groups ``instance`` is in (NULL: the default)."""
    groups = instance.get('security_groups')
    return list(SECURITY_GROUPS if groups is None else groups)


def server_detail(instance, fault=None, show=False, metadata=None,
                  update=False, tags=None):
    """``show``: GET /servers/{id}, which alone carries server_groups
    (2.71; Nova's /servers/detail does not). ``metadata``, ``tags``: the
    server's (read here when not given; a list reads them for the whole
    page at once). ``update``: the reduced view of PUT /servers/{id}."""
    body = _server_detail(instance, fault, show or update, metadata, tags)
    if update:
        for key in list(body):
            if key in _NOT_IN_UPDATE or key.startswith(
                    _NOT_IN_UPDATE_PREFIXES):
                del body[key]
    return body


def _server_detail(instance, fault, show, metadata, tags):
    version = api_req.version()
    ctxt = api_req.context()
    status = server_status(instance)
    body = server_brief(instance)
    body.update({
        'status': status,
        'tenant_id': instance['project_id'],
        'user_id': instance['user_id'],
        'metadata': (db_api.instance_metadata_get(instance['uuid'])
                     if metadata is None else metadata),
        'hostId': common_host_id(instance),
        'image': image_in_server(instance['image_ref'], version),
        'flavor': flavor_in_server(instance['flavor'], version),
        'created': timeutil.api_time_z(instance['created_at']),
        'updated': timeutil.api_time_z(instance['updated_at']
                                       or instance['created_at']),
        'addresses': addresses(instance),
        'accessIPv4': instance.get('access_ip_v4') or '',
        'accessIPv6': instance.get('access_ip_v6') or '',
        'OS-DCF:diskConfig': 'AUTO' if instance.get('auto_disk_config')
        else 'MANUAL',
        'OS-EXT-AZ:availability_zone': availability_zone(instance),
        'config_drive': '',
        'key_name': instance.get('key_name'),
        'OS-SRV-USG:launched_at': timeutil.api_time(instance['launched_at']),
        'OS-SRV-USG:terminated_at': timeutil.api_time(
            instance['terminated_at']),
        'OS-EXT-STS:task_state': instance['task_state'],
        'OS-EXT-STS:vm_state': instance['vm_state'],
        'OS-EXT-STS:power_state': instance['power_state'],
        'os-extended-volumes:volumes_attached': [],
    })
    groups = security_groups(instance)
    if groups:
        # Nova leaves the key out for a server in no group.
        body['security_groups'] = [{'name': name} for name in groups]
    if status in PROGRESS_STATUSES:
        # Like Nova: no progress key at all in the other statuses.
        body['progress'] = instance['progress'] or 0
    is_admin_view = api_req.can('os_compute_api:os-extended-server-attributes',
                                {'project_id': instance['project_id']})
    if is_admin_view:
        body.update({
            'OS-EXT-SRV-ATTR:host': instance['host'],
            'OS-EXT-SRV-ATTR:hypervisor_hostname': instance['node'],
            'OS-EXT-SRV-ATTR:instance_name': 'instance-%08x' % instance['id'],
        })
        if version >= '2.3':
            # Nova's extra extended attributes; nothing to tell here.
            body.update({'OS-EXT-SRV-ATTR:reservation_id':
                         instance.get('reservation_id')
                         or 'r-%08x' % instance['id'],
                         'OS-EXT-SRV-ATTR:launch_index':
                         instance.get('launch_index') or 0,
                         'OS-EXT-SRV-ATTR:kernel_id': '',
                         'OS-EXT-SRV-ATTR:ramdisk_id': '',
                         'OS-EXT-SRV-ATTR:root_device_name': None,
                         'OS-EXT-SRV-ATTR:user_data': None})
    if (is_admin_view and version >= '2.3') or version >= '2.90':
        body['OS-EXT-SRV-ATTR:hostname'] = _hostname(instance)
    if version >= '2.9':
        body['locked'] = bool(instance.get('locked_by'))
    if version >= '2.16' and is_admin_view:
        # Nova: admin-only by default (servers:show:host_status).
        body['host_status'] = host_status(instance)
    if version >= '2.19':
        body['description'] = instance.get('description')
    if version >= '2.26':
        body['tags'] = (db_api.instance_tags_get(instance['uuid'])
                        if tags is None else tags)
    if version >= '2.73':
        body['locked_reason'] = instance.get('locked_reason')
    if version >= '2.63':
        body['trusted_image_certificates'] = None
    if show and version >= '2.71':
        group = db_api.server_group_of_instance(instance['uuid'])
        body['server_groups'] = [group['uuid']] if group else []
    if version >= '2.96':
        # Nova's request spec zone: the one asked for at boot.
        body['pinned_availability_zone'] = instance.get('requested_az')
    if version >= '2.100':
        body['scheduler_hints'] = instance.get('scheduler_hints') or {}
    if fault and status in ('ERROR', 'DELETED'):
        message = fault['message']
        if not ctxt.is_admin:
            # Rows written before faults were masked at write time.
            message = faultinfo.owner_text(message, (
                fault.get('host'), instance.get('host'),
                instance.get('node')))
        body['fault'] = {'code': fault['code'], 'message': message,
                         'created': timeutil.api_time_z(fault['created_at'])}
        if ctxt.is_admin and fault.get('details'):
            body['fault']['details'] = fault['details']
    return body


# Nova's 2.98 shows the image's standard properties (ImageMetaProps:
# hardware, OS and image-handling ones), not its custom ones.
_IMAGE_PROPERTY_PREFIXES = ('hw_', 'os_', 'img_')


def image_in_server(image_ref, version):
    if not image_ref:
        return ''
    image = {'id': image_ref,
             'links': [common.links('images', image_ref)[1]]}
    if version >= '2.98':
        image['properties'] = _image_properties(image_ref)
    return image


def _image_properties(image_ref):
    """The image store's record of ``image_ref`` read once a request;
    {} for an image it does not hold (the fake driver's)."""
    cache = flask.g.setdefault('image_properties', {})
    if image_ref not in cache:
        try:
            record = image_store.ImageStore().get(image_ref)
        except exception.NovaMovesException:
            record = {}
        cache[image_ref] = {
            key: value for key, value in
            (record.get('properties') or {}).items()
            if key.startswith(_IMAGE_PROPERTY_PREFIXES)
            and value is not None}
    return dict(cache[image_ref])


def _hostname(instance):
    name = re.sub(r'[^a-z0-9-]+', '-',
                  (instance['display_name'] or '').lower()).strip('-')
    return name[:63] or 'server-%s' % instance['uuid']


def prefetch_compute_services(hosts):
    """The compute services of a page's hosts in one read (the list
    views look each server's host up: its zone, its host_status)."""
    cache = flask.g.setdefault('compute_services', {})
    wanted = sorted({host for host in hosts if host and host not in cache})
    if not wanted:
        return
    found = {service['host']: service for service in db_api.service_get_all(
        binary='nova-moves-compute', hosts=wanted)}
    for host in wanted:
        cache[host] = found.get(host)


def _compute_service(host):
    """The compute service of ``host``, looked up once per request."""
    cache = flask.g.setdefault('compute_services', {})
    if host not in cache:
        try:
            cache[host] = db_api.service_get_by_host_and_binary(
                host, 'nova-moves-compute')
        except exception.NotFound:
            cache[host] = None
    return cache[host]


def availability_zone(instance):
    """Like Nova: the requested zone, else the zone of the server's host
    once it has one, else ''."""
    if instance['availability_zone']:
        return instance['availability_zone']
    if not instance['host']:
        return ''
    service = _compute_service(instance['host'])
    return (service and service['availability_zone']) or \
        conf.CONF.compute.availability_zone


def host_status(instance):
    """UP, DOWN, MAINTENANCE (service disabled) or UNKNOWN; '' when the
    server has no host."""
    if not instance['host']:
        return ''
    service = _compute_service(instance['host'])
    if service is None:
        return 'UNKNOWN'
    if service['forced_down'] or not servicegroup_cache.is_up(service):
        return 'DOWN'
    return 'MAINTENANCE' if service['disabled'] else 'UP'


def common_host_id(instance):
    return api_req.host_id(instance['project_id'], instance['host'])


def flavor(row):
    version = api_req.version()
    body = {'id': row['flavorid'], 'name': row['name'],
            'ram': row['memory_mb'], 'disk': row['root_gb'],
            'vcpus': row['vcpus'],
            'links': common.links('flavors', row['flavorid']),
            'OS-FLV-EXT-DATA:ephemeral': row['ephemeral_gb'],
            # Nova: '' for no swap until 2.75, then 0.
            'swap': row['swap'] or ('' if version < '2.75' else 0),
            'os-flavor-access:is_public': row['is_public']}
    if version < '2.102':
        # Nova's 2.102 drops both (no QoS or disabled flavors there).
        body['OS-FLV-DISABLED:disabled'] = row['disabled']
        body['rxtx_factor'] = row['rxtx_factor']
    if version >= '2.55':
        body['description'] = row['description']
    if version >= '2.61' and api_req.can(
            'os_compute_api:os-flavor-extra-specs:index'):
        # Nova's: shown to those who may list them (2.61).
        body['extra_specs'] = db_api.flavor_extra_specs_get_many(
            [row['id']]).get(row['id'], {})
    return body


# A migration's host fields, null for a caller without the ...:host rule.
HOST_FIELDS = ('source_compute', 'source_node', 'dest_compute', 'dest_host',
               'dest_node')


def hide_hosts(body):
    """Nova keeps the host keys (null) for a caller without the
    ``...:host`` rule."""
    body.update(dict.fromkeys(HOST_FIELDS))
    return body
