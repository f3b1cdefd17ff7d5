"""os-resetState (admin, 202): the operator's recovery tool after a move
or an action that never finished.

What it does, in this order:
1. A migration of the server still under way (any status but the
   terminal ones and the two parked ones, 'finished' and 'done') is
   ended by the one undo every failed move takes (db move_failed): the
   migration becomes 'error', its source half of the allocation goes
   back to the server and any destination claim is dropped, and the
   server record goes back where the move found it (a resize or cold
   migration: the source host and the old flavor), with a fault
   saying it was reset. A compute step still running for it then meets
   a migration that moved on and drops its message (the guarded steps).
2. A resize waiting for confirmation (migration 'finished', server
   VERIFY_RESIZE) is refused with a 409: the server runs on the
   destination while the source still holds its half, and only
   confirmResize or revertResize settle that consistently. An
   evacuation parked 'done' is left alone: the server already lives on
   its new host and the dead source's return settles the rest.
3. vm_state becomes the one asked ('active' or 'error') and task_state
   is cleared, whatever they were (this is the override: no
   compare-and-swap on purpose, as Nova's).
No instance action is recorded (Nova records none).
"""
from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves.api import validation
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import states

ACTION = 'os-resetState'
POLICY = 'os_compute_api:os-admin-actions:reset_state'

SCHEMA = {
    'type': 'object', 'required': [ACTION], 'additionalProperties': False,
    'properties': {ACTION: {
        'type': 'object', 'required': ['state'],
        'additionalProperties': False,
        'properties': {'state': {'type': 'string',
                                 'enum': list(states.RESET_VM_STATES)}}}}}

# Under way: what move_failed may end. Parked and terminal ones are not.
_PARKED = (states.M_FINISHED, states.M_DONE)


class ResizeAwaitsConfirmation(exception.Conflict):
    msg_fmt = ('Cannot reset the state of instance %(instance_uuid)s: its '
               'resize (migration %(migration)s) waits for confirmResize or '
               'revertResize.')


def _open_migrations(instance_uuid):
    return [m for m in db_api.migration_get_all(instance_uuid=instance_uuid)
            if m['status'] not in states.MIGRATION_TERMINAL_STATUSES]


@validation.schema(SCHEMA)
def reset_state(server_id, value):
    body = validation.body()[ACTION]
    instance = common.get_instance(server_id, POLICY)
    state = body['state']
    for migration in _open_migrations(instance['uuid']):
        if migration['status'] == states.M_FINISHED:
            raise ResizeAwaitsConfirmation(instance_uuid=instance['uuid'],
                                           migration=migration['uuid'])
        if migration['status'] in _PARKED:
            continue
        ctxt = api_req.context()
        try:
            db_api.move_failed(
                migration['uuid'],
                fault={'code': 500, 'message': 'Reset by os-resetState '
                       '(%s) while the move was %s' % (
                           ctxt.user_id, migration['status'])})
        except exception.MoveConflict:
            pass  # settled meanwhile by its own flow: nothing to end
    db_api.instance_update(instance['uuid'], {'vm_state': state,
                                              'task_state': None})
    return common.accepted()


ACTIONS = {ACTION: reset_state}
POLICIES = {ACTION: POLICY}
