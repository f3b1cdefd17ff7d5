"""Servers: create, list, detail, show, update and delete."""
import ipaddress
import json
import secrets
import uuid

import flask

from nova_moves.api import boot_cells
from nova_moves.api import request as api_req
from nova_moves.api import cell_lists
from nova_moves.api import cell_mapping
from nova_moves.api import cell_routing
from nova_moves.api import common
from nova_moves.api import cross_cell_delete
from nova_moves.api import input_guard
from nova_moves.api import group_cells
from nova_moves.api import guards
from nova_moves.api import microversion
from nova_moves.api import quota_rules
from nova_moves.api import server_rules
from nova_moves.api import validation
from nova_moves.api import views
from nova_moves import cells
from nova_moves.db import api as db_api
from nova_moves.db import request_specs
from nova_moves import exception
from nova_moves import image_store
from nova_moves.scheduler import hints as host_hints
from nova_moves import states

# Nova accepts many more boot fields; those a client commonly sends are
# accepted and ignored here, since the fake hypervisor has no network,
# image or volume service.
_IGNORED = ('security_groups', 'user_data',
            'config_drive', 'block_device_mapping_v2', 'adminPass', 'tags',
            'hostname', 'trusted_image_certificates',
            'personality', 'hypervisor_hostname',
            'host')
# Kept and shown back, as Nova: the access IPs (checked by hand: the
# validator has no format checker), the disk config and, from 2.19, the
# description (accepted and dropped below, as before).
_DISK_CONFIG = {'type': 'string', 'enum': ['AUTO', 'MANUAL']}
_DESCRIPTION = {'type': ['string', 'null'], 'maxLength': 255,
                'pattern': r'^[^\x00-\x1f\x7f]*$'}
_NAME = {'type': 'string', 'minLength': 1, 'maxLength': 255}
# Nova's parameter_types.name: looked up among the caller's key pairs.
_KEY_NAME = {'type': 'string', 'minLength': 1, 'maxLength': 255,
             'pattern': r'^(?!\s)[^\x00-\x1f\x7f]*(?<!\s)$'}
_KEPT = {'metadata': server_rules.METADATA,
         'accessIPv4': {'type': 'string'}, 'accessIPv6': {'type': 'string'},
         'OS-DCF:diskConfig': _DISK_CONFIG, 'description': _DESCRIPTION}

# Nova's positive_integer; the count is bounded by the quota (and the
# column range) in _counts.
_COUNT = {'type': ['integer', 'string'], 'pattern': '^[0-9]{1,10}$',
          'minimum': 1, 'maximum': 2 ** 31 - 1}
# Nova's [DEFAULT] multi_instance_display_name_template.
_MULTI_NAME = '%(name)s-%(count)d'

CREATE_SCHEMA = {
    'type': 'object', 'additionalProperties': False, 'required': ['server'],
    'properties': {
        'server': {
            'type': 'object', 'additionalProperties': False,
            'required': ['name', 'flavorRef'],
            'properties': dict(
                {'name': _NAME,
                 'flavorRef': validation.FLAVOR_REF,
                 'imageRef': {'type': ['string', 'null']},
                 'availability_zone': {'type': 'string', 'minLength': 1,
                                       'maxLength': 255},
                 'networks': {'type': ['string', 'array']},
                 'min_count': _COUNT, 'max_count': _COUNT,
                 'return_reservation_id': validation.BOOLEAN,
                 'key_name': _KEY_NAME},
                **_KEPT, **{name: {} for name in _IGNORED})},
        'os:scheduler_hints': server_rules.HINTS,
        'OS-SCH-HNT:scheduler_hints': server_rules.HINTS,
    }}

_STATUS_FILTER = {
    'ACTIVE': (states.ACTIVE, None), 'ERROR': (states.ERROR, None),
    'VERIFY_RESIZE': (states.RESIZED, None),
    'SHUTOFF': (states.STOPPED, None), 'BUILD': (states.BUILDING, None)}


# The hints are kept as JSON in a TEXT column: MySQL's holds 65535
# bytes (more was a 400 there only), so the same bound everywhere.
HINTS_BYTES = 65535


def scheduler_hints(request):
    """The boot's hints as given, kept for 2.100's server views."""
    hints = dict(request.get('os:scheduler_hints')
                 or request.get('OS-SCH-HNT:scheduler_hints') or {})
    if len(json.dumps(hints)) > HINTS_BYTES:
        raise exception.ValidationError(
            detail='Invalid input for field \'os:scheduler_hints\': it is '
                   'longer than %d bytes as JSON.' % HINTS_BYTES)
    return hints


def _parse_az(value):
    """'zone', 'zone:host' or ':host'. Naming a host is admin-only."""
    if not value:
        return None, None
    zone, _, host = value.partition(':')
    if host:
        api_req.authorize('os_compute_api:servers:create:forced_host')
    return zone or None, host or None


def _counts(body):
    """(min_count, max_count) as Nova: 1 unless given; max_count
    defaults to min_count and may not be below it (400)."""
    min_count = int(body.get('min_count', 1))
    max_count = int(body.get('max_count', min_count))
    if not 1 <= min_count <= 2 ** 31 - 1 or not 1 <= max_count <= 2 ** 31 - 1:
        raise exception.ValidationError(
            detail='min_count and max_count must be positive integers.')
    if min_count > max_count:
        raise exception.ValidationError(
            detail='min_count must be <= max_count')
    return min_count, max_count


@validation.schema(CREATE_SCHEMA)
def create():
    """One server, or with min_count/max_count as many as the quota
    allows between them (Nova's multiple create: each named
    ``<name>-<n>`` and booted as one server would be; 403 when fewer
    than min_count fit)."""
    ctxt = api_req.context()
    api_req.authorize('os_compute_api:servers:create')
    request = validation.body()
    body = request['server']
    min_count, max_count = _counts(body)
    group = server_rules.group_hint(ctxt, request)
    flavor = common.flavor_ref(body['flavorRef'])
    kept = kept_values(body, api_req.version())
    if 'key_name' in body:
        kept['key_name'], kept['key_data'] = server_rules.key_pair(
            body['key_name'])
    kept['scheduler_hints'] = scheduler_hints(request)
    server_rules.check_metadata_count(ctxt.project_id, body.get('metadata'))
    _check_security_groups(body.get('security_groups'))
    zone, host = _parse_az(body.get('availability_zone'))
    deltas = dict(quota_rules.flavor_deltas(flavor), instances=1)
    count = quota_rules.allowed_count(ctxt.project_id, deltas, min_count,
                                      max_count)
    # Its cell: the API's own in a one-cell deployment (None), else
    # chosen by room (api/cell_routing.py); its row, action and build
    # cast go there.
    cell, cell_id = boot_cells.cell_for_boot(flavor, host, group, zone)
    with cells.target(cell):
        if host:
            try:
                db_api.compute_node_get_by_host(host)
            except exception.ComputeHostNotFound as exc:
                raise exception.Invalid(reason=exc.message)
        return _create_in_cell(ctxt, body, kept, flavor, zone, host, group,
                               deltas, count, cell, cell_id)


def _create_in_cell(ctxt, body, kept, flavor, zone, host, group, deltas,
                    count, cell, cell_id):
    made = []
    reservation = 'r-' + secrets.token_hex(4)
    in_cell0 = cell_routing.is_cell0(cell)
    if in_cell0:
        # Nova's build that never got a host: the row in cell0, in ERROR.
        kept = dict(kept, vm_state=states.ERROR, task_state=None)
    try:
        for index in range(count):
            name = body['name'] if count == 1 else _MULTI_NAME % {
                'name': body['name'], 'count': index + 1}
            made.append(_create_one(ctxt, body, deltas, group, dict(
                kept, display_name=name, flavor=flavor, requested_az=zone,
                availability_zone=zone, reservation_id=reservation,
                launch_index=index), cell_id))
        for instance in made:
            common.record_action(instance, 'create')
            if in_cell0:
                boot_cells.no_valid_host(instance['uuid'])
    except Exception:
        # Nothing half-made: none of the servers existed for the user (a
        # server whose action could not be written, the database out of
        # connections, would wait in BUILD for a build never sent).
        for instance in made:
            db_api.instance_destroy(instance['uuid'])
            group_cells.leave(instance['uuid'])
            cell_mapping.unmap(instance['uuid'])
        raise
    for instance in made if not in_cell0 else ():
        # The row holds the flavor, zone, owner and hints given.
        spec = host_hints.request_spec(instance, (), host)
        api_req.services().conductor.build_instances(
            ctxt, [instance['uuid']], spec)
    if validation.to_bool(body.get('return_reservation_id', False)):
        return common.accepted({'reservation_id': reservation})
    instance = made[0]
    return common.accepted({'server': {
        'id': instance['uuid'],
        'links': common.links('servers', instance['uuid']),
        'OS-DCF:diskConfig': 'AUTO' if instance['auto_disk_config']
        else 'MANUAL',
        'security_groups': [{'name': 'default'}],
        # Nova answers with the password given, else a generated one.
        'adminPass': body.get('adminPass') or secrets.token_urlsafe(9)}})


def _create_one(ctxt, body, deltas, group, values, cell_id=None):
    """One server's row (under the quota lock), its group and metadata;
    a failure after the row leaves no row. Its instance mapping first,
    as Nova's API writes it before the cell's row: a mapping that cannot
    be written (the database out of connections) leaves no row behind
    that no build would ever come for."""
    instance_uuid = str(uuid.uuid4())
    # What the 2.69 show needs while the cell is down (Nova's RequestSpec).
    spec = request_specs.build(values['flavor'], body.get('imageRef'),
                               values['requested_az'], ctxt.project_id,
                               ctxt.user_id)
    cell_mapping.map_new(instance_uuid, ctxt.project_id, ctxt.user_id,
                         cell_id, spec)
    try:
        instance = quota_rules.create_instance(
            ctxt.project_id, deltas, dict({
                'uuid': instance_uuid, 'user_id': ctxt.user_id,
                'project_id': ctxt.project_id,
                'image_ref': body.get('imageRef'),
                'vm_state': states.BUILDING,
                'task_state': states.SCHEDULING}, **values))
    except Exception:
        cell_mapping.unmap(instance_uuid)
        raise
    try:
        if group is not None:
            group_cells.join(ctxt, group, instance['uuid'])
        if body.get('metadata'):
            db_api.instance_metadata_update(instance['uuid'],
                                            body['metadata'])
    except Exception:
        db_api.instance_destroy(instance['uuid'])
        group_cells.leave(instance['uuid'])
        cell_mapping.unmap(instance['uuid'])
        raise
    return instance


def _check_security_groups(requested):
    """Nova refuses a boot naming a security group Neutron does not have
    (400); the only one here is 'default' (views.SECURITY_GROUPS)."""
    for group in requested if isinstance(requested, list) else []:
        name = group.get('name') if isinstance(group, dict) else None
        if name not in views.SECURITY_GROUPS:
            raise exception.ValidationError(
                detail='Security group %s not found.'
                       % input_guard.excerpt(str(name)))


FORCE_DELETE_POLICY = 'os_compute_api:os-deferred-delete:force'


@validation.schema({'type': 'object', 'required': ['forceDelete'],
                    'additionalProperties': False,
                    'properties': {'forceDelete': {
                        'type': ['null', 'object'], 'properties': {},
                        'additionalProperties': False}}})
def force_delete(server_id, value):
    """Nova's forceDelete (os-deferred-delete): the delete, in any
    state, of a server not yet reclaimed; nothing is ever deferred here
    ([DEFAULT] reclaim_instance_interval = 0), so it is the delete,
    answered 202."""
    validation.body()
    common.get_instance(server_id, FORCE_DELETE_POLICY)
    delete(server_id)
    return common.accepted()


def kept_values(body, version):
    """The instance columns of the fields a boot or an update keeps."""
    values = {}
    for field, column, family in (('accessIPv4', 'access_ip_v4', 4),
                                  ('accessIPv6', 'access_ip_v6', 6)):
        if field in body:
            values[column] = _ip(field, body[field], family)
    if 'OS-DCF:diskConfig' in body:
        values['auto_disk_config'] = body['OS-DCF:diskConfig'] == 'AUTO'
    if 'description' in body and version >= '2.19':
        values['description'] = body['description']
    return values


def _ip(field, value, family):
    """Nova's accessIPv4/6 formats: a valid address of that family (its
    canonical text is stored)."""
    try:
        address = ipaddress.ip_address(value)
        # A scoped IPv6 address (fe80::1%eth0) is not one Nova takes.
        if address.version == family and '%' not in str(address):
            return str(address)
    except ValueError:
        pass
    raise exception.ValidationError(
        detail="Invalid input for field '%s'. Value: %s. It is not a valid "
               "IPv%d address." % (field, input_guard.excerpt(value), family))


def show(server_id):
    """A server in a cell that does not answer: Nova's 2.69 record."""
    return cell_lists.show_or_partial(server_id, _show, server_id)


def _show(server_id):
    instance = common.get_instance(server_id)
    fault = (db_api.instance_fault_get_latest(server_id)
             if instance['vm_state'] == states.ERROR else None)
    return flask.jsonify({'server': views.server_detail(instance, fault,
                                                        show=True)})


def _update_schema(version):
    props = {'name': _NAME, 'accessIPv4': {'type': 'string'},
             'accessIPv6': {'type': 'string'},
             'OS-DCF:diskConfig': _DISK_CONFIG}
    if version >= '2.19':
        props['description'] = _DESCRIPTION
    if version >= '2.104':
        props['pinned_availability_zone'] = {
            'type': ['string', 'null'], 'minLength': 1, 'maxLength': 255}
    return {'type': 'object', 'required': ['server'],
            'additionalProperties': False,
            'properties': {'server': {'type': 'object',
                                      'additionalProperties': False,
                                      'properties': props}}}


@validation.schema(_update_schema(microversion.APIVersion('2.1')),
                   max_version='2.18')
@validation.schema(_update_schema(microversion.APIVersion('2.19')),
                   min_version='2.19', max_version='2.103')
@validation.schema(_update_schema(microversion.APIVersion('2.104')),
                   min_version='2.104')
def update(server_id):
    """PUT /servers/{id}: name, access IPs, disk config, description
    (2.19), pinned_availability_zone (2.104); 200 with the server, as
    Nova."""
    version = api_req.version()
    instance = common.get_instance(server_id,
                                   'os_compute_api:servers:update')
    body = validation.body()['server']
    values = kept_values(body, version)
    if 'name' in body:
        values['display_name'] = body['name']
    if 'pinned_availability_zone' in body:
        values.update(server_rules.pinned_zone(
            instance, body['pinned_availability_zone'],
            views.availability_zone(instance)))
    if values:
        instance = db_api.instance_update(instance['uuid'], values)
    if 'requested_az' in values:
        # Nova's 2.104 pin changes the request spec's zone too.
        request_specs.keep(instance['uuid'],
                           availability_zone=values['requested_az'])
    return flask.jsonify({'server': views.server_detail(instance,
                                                        update=True)})


def delete(server_id):
    ctxt = api_req.context()
    policy = 'os_compute_api:servers:delete'
    instance = common.get_instance(server_id, policy)
    guards.check_not_locked(instance)  # a locked server: admin only
    if instance['vm_state'] == states.RESIZED and \
            instance['task_state'] is None:
        instance = cross_cell_delete.confirm_first(instance) or instance
    # A server in the middle of a move is not deleted under its feet; a
    # boot is (as Nova does): its conductor or compute sees 'deleting'
    # and stops. The state read may be stale by the time of the swap (a
    # boot goes scheduling -> spawning): read again and retry.
    for _attempt in range(5):
        if instance['task_state'] not in _DELETABLE_TASK_STATES and \
                instance['vm_state'] != states.ERROR:
            raise exception.InstanceInvalidState(
                method='delete', instance_uuid=server_id, attr='task_state',
                state=instance['task_state'])
        try:
            instance = db_api.instance_update(
                server_id, {'task_state': states.DELETING},
                expected_task_state=[instance['task_state']])
            break
        except exception.UnexpectedTaskState:
            instance = common.get_instance(server_id, policy)
    else:
        raise exception.InstanceInvalidState(
            method='delete', instance_uuid=server_id, attr='task_state',
            state=instance['task_state'])
    common.record_action(instance, 'delete')
    for migration in db_api.migration_get_all(instance_uuid=server_id):
        db_api.allocations_delete(migration['uuid'])
        if migration['status'] not in _TERMINAL_MIGRATION:
            db_api.migration_update(migration['id'],
                                    {'status': states.M_ERROR})
    # retire: a boot's scheduler claim still on its way is refused.
    db_api.allocations_delete(server_id, retire=True)
    if instance['host']:
        api_req.services().compute.terminate_instance(ctxt, instance['host'],
                                                      server_id)
    elif instance['vm_state'] == states.SHELVED_OFFLOADED:
        # Its disk, snapshotted into the image store by the QEMU driver's
        # shelve, goes with it (Nova deletes the shelved image too).
        image_store.ImageStore().discard(
            image_store.shelve_snapshot_id(server_id))
    cell_mapping.queue_for_delete(server_id)
    db_api.instance_destroy(server_id)
    # Outside the home cell it leaves its group's mirror (api/group_cells).
    group_cells.leave(server_id)
    return common.no_content()


# A boot may be deleted at any point (Nova's delete while building).
_DELETABLE_TASK_STATES = (None, states.SCHEDULING, states.SPAWNING)
# Holding nothing, or (an evacuation 'done') settled but for the source.
_TERMINAL_MIGRATION = states.MIGRATION_TERMINAL_STATUSES + (states.M_DONE,)


# Server actions served here (api/server_actions.py gathers them).
ACTIONS = {'forceDelete': force_delete}
POLICIES = {'forceDelete': FORCE_DELETE_POLICY}
