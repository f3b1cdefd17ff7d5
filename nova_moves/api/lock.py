"""Server actions lock and unlock, and the lock check every other action
(moves included) and DELETE meet.

Like Nova: a locked server refuses every action of a caller who is not
admin with a 409 (after the action's own policy check, so a caller the
policy refuses still gets its 403); admins act on it regardless.
``locked_by`` records who locked it: 'owner' (a caller of the server's
project) or 'admin'. An owner may not unlock a server an admin locked
unless os_compute_api:os-lock-server:unlock:unlock_override allows it
(admin only by default). ``locked_reason`` arrives at 2.73; show reports
``locked`` from 2.9 and ``locked_reason`` from 2.73.

The check reads the server: a lock set between the check and the
action's own compare-and-swap does not stop that action (Nova's check
reads too); lock and unlock themselves write without a task_state, so
they never race a move's state.
"""
from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves.api import validation
from nova_moves.db import api as db_api

LOCK_RULE = 'os_compute_api:os-lock-server:lock'
UNLOCK_RULE = 'os_compute_api:os-lock-server:unlock'
UNLOCK_OVERRIDE_RULE = 'os_compute_api:os-lock-server:unlock:unlock_override'

_NULL_OR_EMPTY = {'type': ['null', 'object'], 'properties': {},
                  'additionalProperties': False}
_LOCK_273 = {'type': ['null', 'object'], 'additionalProperties': False,
             'properties': {'locked_reason': {
                 'type': 'string', 'minLength': 1, 'maxLength': 255}}}


def _body(name, inner):
    return {'type': 'object', 'required': [name],
            'additionalProperties': False, 'properties': {name: inner}}


def _caller_is(instance):
    """'owner' for a caller of the server's project, else 'admin'."""
    return ('owner' if api_req.context().project_id ==
            instance['project_id'] else 'admin')


@validation.schema(_body('lock', _NULL_OR_EMPTY), max_version='2.72')
@validation.schema(_body('lock', _LOCK_273), min_version='2.73')
def lock(server_id, value):
    body = validation.body()['lock']
    instance = common.get_instance(server_id, LOCK_RULE)
    locked_by = _caller_is(instance)
    # Nova: an owner locking a locked server changes nothing; an admin
    # takes the lock over (locked_by becomes 'admin').
    if instance.get('locked_by') and locked_by == 'owner':
        return common.accepted()
    common.record_action(instance, 'lock')
    db_api.instance_update(instance['uuid'], {
        'locked_by': locked_by,
        'locked_reason': (body or {}).get('locked_reason')})
    return common.accepted()


@validation.schema(_body('unlock', _NULL_OR_EMPTY))
def unlock(server_id, value):
    validation.body()
    instance = common.get_instance(server_id, UNLOCK_RULE)
    locked_by = instance.get('locked_by')
    if locked_by and locked_by != _caller_is(instance):
        api_req.authorize(UNLOCK_OVERRIDE_RULE,
                          {'project_id': instance['project_id']})
    common.record_action(instance, 'unlock')
    db_api.instance_update(instance['uuid'], {'locked_by': None,
                                              'locked_reason': None})
    return common.accepted()


ACTIONS = {'lock': lock, 'unlock': unlock}
