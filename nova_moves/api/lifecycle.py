"""Server actions pause, unpause, suspend, resume and reboot (Nova's,
each 202 with no body).

Each claims the server with one compare-and-swap (db move_start:
task_state None -> the action's, vm_state still one the action allows,
and the instance action, in one transaction), so a server in the wrong
state, or one another request claimed first, is a 409 with nothing
written. A hard reboot may take over a soft reboot, pause, unpause,
suspend or resume that never finished (Nova's task_states.ALLOW_REBOOT):
its compare-and-swap expects any of those. Then the server's compute is
cast; it drives the fake hypervisor and sets vm_state and power_state.
Nothing moves: no migration, no allocation change.

State rules (Nova's):
  pause    ACTIVE                             -> PAUSED
  unpause  PAUSED                             -> ACTIVE
  suspend  ACTIVE                             -> SUSPENDED
  resume   SUSPENDED                          -> ACTIVE
  reboot   SOFT: ACTIVE                       -> ACTIVE
           HARD: ACTIVE, STOPPED, PAUSED, SUSPENDED, ERROR -> ACTIVE
"""
from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves.api import guards
from nova_moves.api import validation
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import states

# Nova ignores these bodies; null or an empty object here.
_NO_PARAMS = {'type': ['null', 'object'], 'properties': {},
              'additionalProperties': False}


def _body(name, inner):
    return {'type': 'object', 'properties': {name: inner},
            'required': [name], 'additionalProperties': False}


_REBOOT = {'type': 'object', 'additionalProperties': False,
           'required': ['type'],
           'properties': {'type': {'type': 'string', 'enum': [
               'HARD', 'Hard', 'hard', 'SOFT', 'Soft', 'soft']}}}


# action -> (policy, vm_states it starts from, task_state it sets,
#            compute method)
RULES = {
    'pause': ('os_compute_api:os-pause-server:pause', (states.ACTIVE,),
              states.PAUSING, 'pause_instance'),
    'unpause': ('os_compute_api:os-pause-server:unpause', (states.PAUSED,),
                states.UNPAUSING, 'unpause_instance'),
    'suspend': ('os_compute_api:os-suspend-server:suspend',
                (states.ACTIVE,), states.SUSPENDING, 'suspend_instance'),
    'resume': ('os_compute_api:os-suspend-server:resume',
               (states.SUSPENDED,), states.RESUMING, 'resume_instance'),
    'reboot:SOFT': ('os_compute_api:servers:reboot',
                    states.ALLOW_SOFT_REBOOT, states.REBOOTING,
                    'reboot_instance'),
    'reboot:HARD': ('os_compute_api:servers:reboot',
                    states.ALLOW_HARD_REBOOT, states.REBOOTING_HARD,
                    'reboot_instance'),
}


# The guards this module's actions meet (api/guards.py), by the names its
# actions use.
LifecycleNotSupported = guards.LifecycleNotSupported
_require_host = guards.require_host


def _claim_hard_reboot(instance):
    """task_state (None or one a hard reboot takes over) -> rebooting_hard
    by compare-and-swap, then the action (the claim is what may race; a
    failed action write gives the claim back)."""
    try:
        db_api.instance_update(
            instance['uuid'], {'task_state': states.REBOOTING_HARD},
            expected_task_state=list(states.ALLOW_REBOOT_TASK_STATES),
            expected_vm_state=list(states.ALLOW_HARD_REBOOT))
    except exception.UnexpectedTaskState as exc:
        raise exception.InstanceInvalidState(
            method='reboot', instance_uuid=instance['uuid'],
            attr='task_state', state=exc.kwargs.get('actual'))
    try:
        common.record_action(instance, 'reboot')
    except Exception:
        common.release_task_state(instance['uuid'], states.REBOOTING_HARD)
        raise


def _act(name, rule_key, server_id, value, action, **rpc_kwargs):
    policy, vm_states, task_state, method = RULES[rule_key]
    body = validation.body()
    instance = common.get_instance(server_id, policy)
    compute = api_req.services().compute
    if not compute.can_lifecycle():
        raise LifecycleNotSupported(action=name)
    _require_host(name, instance)
    if task_state == states.REBOOTING_HARD:
        _claim_hard_reboot(instance)
    else:
        common.start_move(instance, name, task_state, list(vm_states),
                          action)
    try:
        getattr(compute, method)(api_req.context(), instance['host'],
                                 instance['uuid'], **rpc_kwargs)
    except Exception:
        common.release_task_state(instance['uuid'], task_state)
        raise
    return body


@validation.schema(_body('pause', _NO_PARAMS))
def pause(server_id, value):
    _act('pause', 'pause', server_id, value, 'pause')
    return common.accepted()


@validation.schema(_body('unpause', _NO_PARAMS))
def unpause(server_id, value):
    _act('unpause', 'unpause', server_id, value, 'unpause')
    return common.accepted()


@validation.schema(_body('suspend', _NO_PARAMS))
def suspend(server_id, value):
    _act('suspend', 'suspend', server_id, value, 'suspend')
    return common.accepted()


@validation.schema(_body('resume', _NO_PARAMS))
def resume(server_id, value):
    _act('resume', 'resume', server_id, value, 'resume')
    return common.accepted()


@validation.schema(_body('reboot', _REBOOT))
def reboot(server_id, value):
    validation.body()
    reboot_type = value['type'].upper()
    _act('reboot', 'reboot:' + reboot_type, server_id, value, 'reboot',
         reboot_type=reboot_type)
    return common.accepted()


ACTIONS = {'pause': pause, 'unpause': unpause, 'suspend': suspend,
           'resume': resume, 'reboot': reboot}

# The policy each action checks, for the lock check (api/lock.py), which
# comes after the action's policy like Nova's.
POLICIES = {name: RULES[name][0] for name in ACTIONS if name in RULES}
POLICIES['reboot'] = 'os_compute_api:servers:reboot'
