"""Server actions resize, confirmResize, revertResize and migrate.

resize and migrate are always asynchronous (Nova's "Make API always RPC
cast to conductor for resize/migrate"): the API checks
policy, body and state, wins the task_state compare-and-swap (None ->
resize_prep), records the action, casts the conductor's migrate_server
and answers 202. Scheduling happens later; its failures show in the
instance actions, never as a 400 here.

From 2.56 migrate takes a target ``host`` (checked by the scheduler's
filters), plus two fields that go beyond Nova: ``force`` (spec "Enable
cold migration with target host": skip the scheduler and claim on that
host directly) and ``check`` (blueprint "Check the destination host when
migrating": only ask the scheduler whether the host would do; 200 with
the verdict, nothing changes).
"""
from nova_moves.api import request as api_req
from nova_moves.api import cell_routing
from nova_moves.api import common
from nova_moves.api import quota_rules
from nova_moves.api import validation
from nova_moves.db import api as db_api
from nova_moves.db import mappings
from nova_moves import exception
from nova_moves import moves
from nova_moves.moves import cold
from nova_moves import states

RESIZE_SCHEMA = {
    'type': 'object',
    'properties': {
        'resize': {
            'type': 'object',
            'properties': {
                'flavorRef': validation.FLAVOR_REF,
                'OS-DCF:diskConfig': {'type': 'string',
                                      'enum': ['AUTO', 'MANUAL']},
            },
            'required': ['flavorRef'],
            'additionalProperties': False,
        },
    },
    'required': ['resize'],
    'additionalProperties': False,
}

# confirmResize and revertResize carry no parameters.
_NO_PARAMS = {'type': ['null', 'object'], 'properties': {},
              'additionalProperties': False}
CONFIRM_SCHEMA = {'type': 'object',
                  'properties': {'confirmResize': _NO_PARAMS},
                  'required': ['confirmResize'],
                  'additionalProperties': False}
REVERT_SCHEMA = {'type': 'object', 'properties': {'revertResize': _NO_PARAMS},
                 'required': ['revertResize'], 'additionalProperties': False}

MIGRATE_SCHEMA = {'type': 'object', 'properties': {'migrate': _NO_PARAMS},
                  'required': ['migrate'], 'additionalProperties': False}
MIGRATE_SCHEMA_V256 = {
    'type': 'object',
    'properties': {
        'migrate': {
            'type': ['null', 'object'],
            'properties': {
                'host': validation.NULLABLE_HOSTNAME,
                # "Enable cold migration with target host": bypass the
                # scheduler (needs host); null, like
                # false or leaving it out, means check the destination.
                'force': validation.NULLABLE_BOOLEAN,
                # "Check the destination host when migrating": dry run,
                # only ask the scheduler (needs host).
                'check': validation.BOOLEAN,
            },
            'additionalProperties': False,
        },
    },
    'required': ['migrate'],
    'additionalProperties': False,
}

# Where a resize or cold migration may start from.
MOVABLE_VM_STATES = list(states.ALLOW_RESIZE)


# What move_start sets: the cold table's conductor row's task_state.
TASK_STATE = moves.request_task_state(cold)
CROSS_CELL_RULE = 'compute:servers:resize:cross_cell'


def _cross_cell(instance):
    """Nova's _allow_cross_cell_resize: the policy (default: nobody)
    lets the move leave its cell when the cell has no host
    (doc/cells.md "Cross-cell resize"); only with cells to go to."""
    return cell_routing.enabled() and api_req.can(CROSS_CELL_RULE, {
        'project_id': instance['project_id'],
        'user_id': instance.get('user_id')})


def _validated(name):
    return validation.body()[name]


def _start_move(instance, method, action, **rpc_kwargs):
    """CAS task_state and record the action (one transaction), then cast
    the conductor. A failure before the cast leaves the server as it
    was; losing the CAS is a 409 and records nothing."""
    ctxt = api_req.context()
    common.start_move(instance, method, TASK_STATE, MOVABLE_VM_STATES, action)
    try:
        with api_req.services().keeper.sending(instance['uuid'],
                                               states.RESIZE_PREP):
            api_req.services().conductor.migrate_server(
                ctxt, instance['uuid'], live=False, do_cast=True,
                **rpc_kwargs)
    except Exception:
        common.abandon_move(instance['uuid'], TASK_STATE)
        raise
    return common.accepted()


@validation.schema(RESIZE_SCHEMA)
def resize(server_id, value):
    instance = common.get_instance(server_id, 'os_compute_api:servers:resize')
    body = _validated('resize')
    flavor = common.flavor_ref(body['flavorRef'])
    if flavor['flavorid'] == instance['flavor']['flavorid']:
        raise exception.ValidationError(
            detail='When resizing, instances must change flavor!')
    if flavor.get('disabled'):
        raise exception.Invalid(reason='Flavor %s is disabled.'
                                % flavor['flavorid'])
    common.check_state(instance, 'resize', MOVABLE_VM_STATES)
    # Nova checks only the growth: a resize down needs no quota.
    quota_rules.check(instance['project_id'],
                      quota_rules.flavor_deltas(flavor, instance['flavor']))
    response = _start_move(instance, 'resize', 'resize', flavor=flavor,
                           cross_cell=_cross_cell(instance))
    if 'OS-DCF:diskConfig' in body:
        # Nova keeps the resize's disk config on the server (shown after).
        db_api.instance_update(instance['uuid'], {
            'auto_disk_config': body['OS-DCF:diskConfig'] == 'AUTO'})
    return response


@validation.schema(MIGRATE_SCHEMA, max_version='2.55')
@validation.schema(MIGRATE_SCHEMA_V256, min_version='2.56')
def migrate(server_id, value):
    instance = common.get_instance(
        server_id, 'os_compute_api:os-migrate-server:migrate', brief=True)
    body = _validated('migrate') or {}
    host = body.get('host')
    force = validation.to_bool(body.get('force') or False)
    check = validation.to_bool(body.get('check', False))
    if force:
        common.require_host_for('force', host)
    if check:
        common.require_host_for('check', host)
    if check and force:
        raise exception.ValidationError(
            detail='check and force cannot both be true: check asks the '
                   'scheduler, force bypasses it.')
    if host:
        api_req.authorize('os_compute_api:os-migrate-server:migrate:host',
                          {'project_id': instance['project_id']})
        cross_cell = _cross_cell(instance)
        try:
            db_api.compute_node_get_by_host(host)
        except exception.ComputeHostNotFound as exc:
            # A host of another cell: only for a move that may leave its
            # cell (Nova looks it up in every cell then).
            if not (cross_cell and mappings.host_mapping_get(host)):
                raise exception.Invalid(reason=exc.message)
        if host == instance['host']:
            raise exception.Invalid(
                reason='The target host can not be the same one as the '
                       'current host %s of the server.' % host)
    if check:
        # The request spec needs the whole server (flavor, image, ...).
        return common.dry_run_verdict(db_api.instance_get(instance['uuid']),
                                       host, 'migrate', MOVABLE_VM_STATES)
    common.check_state(instance, 'migrate', MOVABLE_VM_STATES)
    return _start_move(instance, 'migrate', 'migrate', flavor=None,
                       host=host, force=force,
                       cross_cell=_cross_cell(instance) if not host
                       else cross_cell)


@validation.schema(CONFIRM_SCHEMA)
def confirm_resize(server_id, value):
    instance = common.get_instance(
        server_id, 'os_compute_api:servers:confirm_resize', brief=True)
    _validated('confirmResize')
    common.check_state(instance, 'confirmResize', [states.RESIZED])
    # The compare-and-swap that makes a second confirm (or a revert) lose,
    # with the action in the same transaction (the cold table's
    # confirm_resize 'request').
    migration, facts = db_api.settle_start(
        'confirm_resize', instance_uuid=instance['uuid'],
        action=common.action_of(instance, 'confirmResize'))
    try:
        if migration.get('cross_cell_move'):
            # The source is in another cell: this cell's conductor
            # reaches it (conductor/tasks/cross_cell_settle.py).
            api_req.services().conductor.confirm_snapshot_based_resize(
                api_req.context(), instance['uuid'], migration['uuid'])
        else:
            api_req.services().compute.confirm_resize(
                api_req.context(), migration['source_compute'],
                instance['uuid'], migration['uuid'], confirm=facts)
    except Exception:
        db_api.settle_abandon('confirm_resize', migration)
        raise
    return common.no_content()


@validation.schema(REVERT_SCHEMA)
def revert_resize(server_id, value):
    instance = common.get_instance(
        server_id, 'os_compute_api:servers:revert_resize', brief=True)
    _validated('revertResize')
    common.check_state(instance, 'revertResize', [states.RESIZED])
    # One transaction, as confirm's: the migration finished -> reverting,
    # the server's task_state None -> resize_reverting, the action.
    migration, facts = db_api.settle_start(
        'revert_resize', instance_uuid=instance['uuid'],
        action=common.action_of(instance, 'revertResize'))
    try:
        if migration.get('cross_cell_move'):
            api_req.services().conductor.revert_snapshot_based_resize(
                api_req.context(), instance['uuid'], migration['uuid'])
        else:
            api_req.services().compute.revert_resize(
                api_req.context(), migration['dest_compute'],
                instance['uuid'], migration['uuid'], revert=facts)
    except Exception:
        db_api.settle_abandon('revert_resize', migration)
        raise
    return common.accepted()


ACTIONS = {
    'resize': resize,
    'confirmResize': confirm_resize,
    'revertResize': revert_resize,
    'migrate': migrate,
}
