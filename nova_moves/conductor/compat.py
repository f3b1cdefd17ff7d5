"""move_advance and move_failed for a conductor capped at 1.0
([upgrade_levels] conductor = 1.0, while old conductors still run).

A 1.0 conductor has no guarded step, so the same checks are made with
the 1.0 calls it has: every write still carries its compare-and-swap
(migration status, task_state), so a stale step is still refused, but a
step is several transactions, as before 1.1. Remove the cap once every
conductor runs 1.1."""
from nova_moves import exception
from nova_moves import states
from nova_moves import moves


def _as_list(value):
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _conflict(migration, reason):
    return exception.MoveConflict(migration=migration['uuid'],
                                  instance_uuid=migration['instance_uuid'],
                                  reason=reason)


def _event(api, ctxt, instance_uuid, event):
    if not event:
        return
    try:
        if event.get('result'):
            api.action_event_finish(ctxt, instance_uuid, ctxt.request_id,
                                    event['name'], event['result'],
                                    traceback=event.get('traceback'))
        else:
            api.action_event_start(ctxt, instance_uuid, ctxt.request_id,
                                   event['name'], host=event.get('host'))
    except exception.ActionNotFound:
        pass


def _allocations(api, ctxt, migration, op):
    kind = (op or {}).get('op')
    uuid, server = migration['uuid'], migration['instance_uuid']
    if kind == 'park_source':
        api.allocations_move(ctxt, server, uuid)
    elif kind == 'drop_source':
        api.allocations_delete(ctxt, uuid)
    elif kind == 'return_source':
        if api.allocations_get(ctxt, uuid):
            api.allocations_move(ctxt, uuid, server)
    elif kind == 'drop_dest':
        api.allocations_delete(ctxt, server, root_host=op.get('host'))
    elif kind == 'claim':
        api.allocations_replace(ctxt, server, op['allocations'])


def _check(instance, migration, expected):
    tasks = expected.get('expected_task_state')
    if tasks is not None and instance['task_state'] not in tasks:
        raise _conflict(migration, 'task_state %s' % instance['task_state'])
    vm_states = expected.get('expected_vm_state')
    if vm_states and instance['vm_state'] not in vm_states:
        raise _conflict(migration, 'vm_state %s' % instance['vm_state'])


def move_advance(api, ctxt, migration_id, status=None, task_state=None,
                 values=None, instance_values=None, expected_vm_state=None,
                 allocations=None, event=None, expected_values=None,
                 fault=None):
    migration = api.migration_get(ctxt, migration_id)
    if status is not None and migration['status'] not in _as_list(
            status[0]):
        raise _conflict(migration, 'migration is %s' % migration['status'])
    for column, value in (expected_values or {}).items():
        if migration.get(column) != value:
            raise _conflict(migration, '%s is %s' % (column,
                                                     migration.get(column)))
    server = migration['instance_uuid']
    expected = {}
    if task_state is not None:
        expected['expected_task_state'] = _as_list(task_state[0])
    if expected_vm_state:
        expected['expected_vm_state'] = _as_list(expected_vm_state)
    inst_values = dict(instance_values or {})
    if task_state is not None and len(task_state) > 1:
        inst_values['task_state'] = task_state[1]
    try:
        # The server's row goes last: once a client sees the server in
        # its new state (VERIFY_RESIZE), the migration says so too (a
        # confirm finds it 'finished'). Both writes keep their CAS.
        if expected:
            _check(api.instance_get(ctxt, server), migration, expected)
        mig_values = dict(values or {})
        if status is not None and len(status) > 1 and status[1]:
            mig_values['status'] = status[1]
        if mig_values:
            migration = api.migration_update(
                ctxt, migration['uuid'], mig_values,
                expected_status=_as_list(status[0]) if status else None)
        if inst_values:
            api.instance_update(ctxt, server, inst_values, **expected)
    except exception.Conflict as exc:
        raise _conflict(migration, str(exc))
    _allocations(api, ctxt, migration, allocations)
    if fault:
        api.instance_fault_create(ctxt, server, fault.get('code') or 500,
                                  fault.get('message') or 'move failed',
                                  details=fault.get('details'),
                                  host=fault.get('host'))
    _event(api, ctxt, server, event)
    return {'migration': migration, 'instance': api.instance_get(ctxt, server)}


def move_failed(api, ctxt, migration_id=None, expected_status=None,
                status=states.M_ERROR, instance_values=None, fault=None,
                event=None, allocations='return_source', instance_uuid=None,
                task_states=None, expected_values=None):
    migration = None
    if migration_id is not None:
        migration = api.migration_get(ctxt, migration_id)
        for column, value in (expected_values or {}).items():
            if migration.get(column) != value:
                raise _conflict(migration, '%s is %s' % (
                    column, migration.get(column)))
        try:
            migration = api.migration_update(
                ctxt, migration['uuid'], {'status': status},
                expected_status=_as_list(expected_status) if expected_status
                else list(moves.UNSETTLED))
        except exception.Conflict as exc:
            raise _conflict(migration, str(exc))
        if allocations == 'return_source':
            _allocations(api, ctxt, migration, {'op': 'return_source'})
        instance_uuid = migration['instance_uuid']
        task_states = moves.MOVE_TASK_STATES.get(
            migration['migration_type'], ())
    instance = api.instance_get(ctxt, instance_uuid)
    ours = instance['task_state'] in (task_states or ())
    if migration is None and not ours:
        # Settled is final: the move got further or was undone already.
        raise _conflict({'uuid': '(none)', 'instance_uuid': instance_uuid},
                        'task_state %s' % instance['task_state'])
    if fault:
        api.instance_fault_create(ctxt, instance_uuid,
                                  fault.get('code') or 500,
                                  fault.get('message') or 'move failed',
                                  details=fault.get('details'),
                                  host=fault.get('host'))
    if ours:
        values = (moves.failed_instance_values(migration, instance)
                  if migration is not None else {})
        values.update(instance_values or {})
        values['task_state'] = None
        try:
            api.instance_update(ctxt, instance_uuid, values,
                                expected_task_state=[instance['task_state']])
        except exception.Conflict:
            pass
    if event:
        _event(api, ctxt, instance_uuid, dict(event, result='Error'))
    return {'migration': migration,
            'instance': api.instance_get(ctxt, instance_uuid)}
