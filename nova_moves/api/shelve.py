"""Server actions shelve, shelveOffload and unshelve (202, no body).

shelve (ACTIVE, SHUTOFF, PAUSED, SUSPENDED; task_state shelving): the
server's compute powers the guest off -> SHELVED, and with [compute]
shelved_offload_time = 0 (the default, as Nova) offloads it at once.
shelveOffload (admin by default; SHELVED; task_state
shelving_offloading): the compute removes the guest, drops the
allocation on its host and the server gives its host up ->
SHELVED_OFFLOADED.

unshelve (SHELVED or SHELVED_OFFLOADED; task_state unshelving):
- SHELVED: the server is still on its host with its allocation; its
  compute powers the guest on -> ACTIVE. ``availability_zone`` / ``host``
  are a 409 here, as Nova (only an offloaded server is placed).
- SHELVED_OFFLOADED: a move. The conductor's UnshelveTask asks the
  scheduler (select_destinations: the filters, an allocation claim),
  honouring ``availability_zone`` (2.77; the zone becomes the server's
  requested zone, null at 2.91 unpins it) and ``host`` (2.91, admin by
  default: os_compute_api:os-shelve:unshelve_to_host; an unknown host is
  a 400; with ``check: true`` only the verdict {valid, reasons} on that
  host, 200, nothing written, like the other moves), then casts the
  chosen compute, which spawns the guest ->
  ACTIVE. No valid host, or a failed spawn: the claim is dropped and the
  server is SHELVED_OFFLOADED again, with a fault.
Each starts with one compare-and-swap of task_state with the action
record (db move_start): the wrong state, or a request that got there
first, is a 409 with nothing written.
"""
from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves.api import guards
from nova_moves.api import validation
from nova_moves.db import api as db_api
from nova_moves.db import request_specs
from nova_moves import exception
from nova_moves.moves import lifecycle as lc_table
from nova_moves import states

POLICIES = {
    'shelve': 'os_compute_api:os-shelve:shelve',
    'shelveOffload': 'os_compute_api:os-shelve:shelve_offload',
    'unshelve': 'os_compute_api:os-shelve:unshelve',
}
TO_HOST_POLICY = 'os_compute_api:os-shelve:unshelve_to_host'

_NULL = {'type': ['null', 'object'], 'properties': {},
         'additionalProperties': False}


def _body(name, inner):
    return {'type': 'object', 'properties': {name: inner},
            'required': [name], 'additionalProperties': False}


_UNSHELVE_277 = {'type': ['null', 'object'], 'additionalProperties': False,
                 'required': ['availability_zone'],
                 'properties': {'availability_zone': {
                     'type': 'string', 'minLength': 1, 'maxLength': 255}}}
_UNSHELVE_291 = {'type': ['null', 'object'], 'additionalProperties': False,
                 'minProperties': 1,
                 'properties': {
                     'availability_zone': {'type': ['string', 'null'],
                                           'minLength': 1,
                                           'maxLength': 255},
                     'host': validation.HOSTNAME,
                     # nova_moves extension, as on the other moves: a
                     # dry run of the placement on ``host`` (blueprint
                     # "Check the destination host when migrating").
                     'check': validation.BOOLEAN}}



class UnshelveNotOffloaded(exception.Conflict):
    msg_fmt = ('The availability_zone or host of an unshelve can only be '
               'given for a server in SHELVED_OFFLOADED; %(instance_uuid)s '
               'is %(vm_state)s.')


def _validate(name):
    return validation.body()[name]


def _start(name, instance):
    """The claim of ``name``'s row of the lifecycle table."""
    compute = api_req.services().compute
    if not compute.can_lifecycle():
        raise guards.LifecycleNotSupported(action=name)
    row = lc_table.row(name)
    common.start_move(instance, name, row.task, list(row.vm_states), name)
    return compute


@validation.schema(_body('shelve', _NULL))
def shelve(server_id, value):
    _validate('shelve')
    instance = common.get_instance(server_id, POLICIES['shelve'])
    guards.require_host('shelve', instance)
    compute = _start('shelve', instance)
    try:
        compute.shelve_instance(api_req.context(), instance['host'],
                                instance['uuid'])
    except Exception:
        common.release_task_state(instance['uuid'],
                                  lc_table.row('shelve').task)
        raise
    return common.accepted()


@validation.schema(_body('shelveOffload', _NULL))
def shelve_offload(server_id, value):
    _validate('shelveOffload')
    instance = common.get_instance(server_id, POLICIES['shelveOffload'])
    guards.require_host('shelveOffload', instance)
    compute = _start('shelveOffload', instance)
    try:
        compute.shelve_offload_instance(api_req.context(), instance['host'],
                                        instance['uuid'])
    except Exception:
        common.release_task_state(instance['uuid'],
                                  lc_table.row('shelveOffload').task)
        raise
    return common.accepted()


def _check_host(body, instance):
    """A requested host: its policy (403), then known (400)."""
    host = body.get('host')
    if host is not None:
        api_req.authorize(TO_HOST_POLICY,
                          {'project_id': instance['project_id']})
        try:
            db_api.compute_node_get_by_host(host)
        except exception.ComputeHostNotFound as exc:
            raise exception.Invalid(exc.message, reason=exc.message)
    return host


def _placement(body, instance):
    """(requested zone or None to keep, unpin?, host) of an unshelve body,
    with its 403/400/409 before anything is written."""
    body = body or {}
    host = _check_host(body, instance)
    if body and instance['vm_state'] != states.SHELVED_OFFLOADED:
        raise UnshelveNotOffloaded(instance_uuid=instance['uuid'],
                                   vm_state=instance['vm_state'])
    return body.get('availability_zone'), 'availability_zone' in body, host


class UnshelveNotSupported(exception.Conflict):
    msg_fmt = ('unshelve of an offloaded server needs every conductor at '
               'RPC version 1.2 ([upgrade_levels] conductor caps below '
               'it).')


@validation.schema(_body('unshelve', {'type': 'null'}), max_version='2.76')
@validation.schema(_body('unshelve', _UNSHELVE_277), '2.77', '2.90')
@validation.schema(_body('unshelve', _UNSHELVE_291), '2.91')
def unshelve(server_id, value):
    body = _validate('unshelve')
    instance = common.get_instance(server_id, POLICIES['unshelve'])
    if validation.to_bool((body or {}).get('check', False)):
        common.require_host_for('check', body.get('host'))
        _check_host(body, instance)
        # The server's state is one of the verdict's reasons, not a 409.
        return common.dry_run_verdict(instance, body['host'], 'unshelve',
                                      [states.SHELVED_OFFLOADED])
    zone, zone_given, host = _placement(body, instance)
    conductor = api_req.services().conductor
    if instance['vm_state'] == states.SHELVED_OFFLOADED and \
            not conductor.can_unshelve():
        raise UnshelveNotSupported()
    compute = _start('unshelve', instance)
    unshelving = lc_table.row('unshelve').task
    ctxt = api_req.context()
    zone_before = None
    try:
        # Read again under the claim: vm_state cannot change now, and a
        # shelveOffload may have finished between the first read and it.
        instance = db_api.instance_get(instance['uuid'])
        if instance['vm_state'] == states.SHELVED:
            if body:
                raise UnshelveNotOffloaded(instance_uuid=instance['uuid'],
                                           vm_state=instance['vm_state'])
            compute.unshelve_instance(ctxt, instance['host'],
                                      instance['uuid'])
        else:
            if zone_given:
                zone_before = {key: instance.get(key) for key in (
                    'requested_az', 'availability_zone')}
                db_api.instance_update(
                    instance['uuid'], {'requested_az': zone,
                                       'availability_zone': zone},
                    expected_task_state=[unshelving])
                # Nova's unshelve into a zone updates the request spec.
                request_specs.keep(instance['uuid'], availability_zone=zone)
            conductor.unshelve_instance(ctxt, instance['uuid'], host=host)
    except Exception:
        if zone_before is not None:
            # The cast failed (the broker away): the zone it asked for
            # goes with the claim, the server as it was.
            db_api.instance_update(instance['uuid'], zone_before,
                                   expected_task_state=[unshelving])
            request_specs.keep(instance['uuid'],
                               availability_zone=zone_before['requested_az'])
        common.release_task_state(instance['uuid'], unshelving)
        raise
    return common.accepted()


ACTIONS = {'shelve': shelve, 'shelveOffload': shelve_offload,
           'unshelve': unshelve}
