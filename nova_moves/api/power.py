"""Server actions os-start and os-stop (Nova's, 202 with no body).

The API claims the server with a compare-and-swap of task_state (None ->
powering-on / powering-off, vm_state still one the action allows), so a
server in the wrong state, or that another action claimed first, is a
409. It records the action (start / stop) and casts the server's compute,
which powers the guest on or off and sets vm_state and power_state.
Nothing moves: no migration, no allocation change. Evacuate at 2.95
leaves the server SHUTOFF on its new host; os-start powers it back on.
"""
from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves.api import validation
from nova_moves import exception
from nova_moves.moves import lifecycle as lc_table

# The body is ignored by Nova; null or an empty object.
_NO_PARAMS = {'type': ['null', 'object'], 'properties': {},
              'additionalProperties': False}


def _body(name):
    return {'type': 'object', 'properties': {name: _NO_PARAMS},
            'required': [name], 'additionalProperties': False}


# action -> (policy, vm_states it starts from, task_state, action name,
#            compute method): the policy and the action name are the
# API's, the rest the lifecycle table's row (nova_moves/moves/lifecycle.py).
def _action(name, policy, action):
    row = lc_table.row(name)
    return policy, list(row.vm_states), row.task, action, row.method


_ACTIONS = {
    'os-start': _action('os-start', 'os_compute_api:servers:start', 'start'),
    'os-stop': _action('os-stop', 'os_compute_api:servers:stop', 'stop'),
}


class PowerNotSupported(exception.Conflict):
    msg_fmt = ('%(action)s needs every compute at RPC version 1.2 '
               '([upgrade_levels] compute caps below it).')


def _power(name, server_id, value):
    policy, vm_states, task_state, action, method = _ACTIONS[name]
    instance = common.get_instance(server_id, policy)
    validation.body()
    compute = api_req.services().compute
    if not compute.can_power():
        raise PowerNotSupported(action=name)
    if not instance['host']:
        # Never scheduled (an ERROR from the build): nothing to power.
        raise exception.InstanceInvalidState(
            method=name, instance_uuid=instance['uuid'], attr='host',
            state=None)
    common.claim_task_state(instance, name, task_state, vm_states)
    try:
        common.record_action(instance, action)
        getattr(compute, method)(api_req.context(), instance['host'],
                                 instance['uuid'])
    except Exception:
        common.release_task_state(instance['uuid'], task_state)
        raise
    return common.accepted()


@validation.schema(_body('os-start'))
def start(server_id, value):
    return _power('os-start', server_id, value)


@validation.schema(_body('os-stop'))
def stop(server_id, value):
    return _power('os-stop', server_id, value)


ACTIONS = {'os-start': start, 'os-stop': stop}
