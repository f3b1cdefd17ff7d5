"""Server actions pause, unpause, suspend, resume and reboot (Nova's,
each 202 with no body); changePassword, restore, and
injectNetworkInfo and add/removeSecurityGroup, the networking actions,
at the end.

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
from nova_moves.api import lifecycle_claim
from nova_moves.api import validation
from nova_moves.api import views
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves.moves import lifecycle as lc_table

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
#            compute method): the policy is the API's, the rest its row
# of the lifecycle table (nova_moves/moves/lifecycle.py).
_POLICY = {
    'pause': 'os_compute_api:os-pause-server:pause',
    'unpause': 'os_compute_api:os-pause-server:unpause',
    'suspend': 'os_compute_api:os-suspend-server:suspend',
    'resume': 'os_compute_api:os-suspend-server:resume',
    'reboot:SOFT': 'os_compute_api:servers:reboot',
    'reboot:HARD': 'os_compute_api:servers:reboot',
}
RULES = {name: (policy, lc_table.row(name).vm_states,
                lc_table.row(name).task, lc_table.row(name).method)
         for name, policy in _POLICY.items()}


# The guards this module's actions meet (api/guards.py), by the names its
# actions use.
LifecycleNotSupported = guards.LifecycleNotSupported
_require_host = guards.require_host


def _act(name, rule_key, server_id, value, action, **rpc_kwargs):
    policy = RULES[rule_key][0]
    body = validation.body()
    instance = common.get_instance(server_id, policy)
    compute = api_req.services().compute
    if not compute.can_lifecycle():
        raise LifecycleNotSupported(action=name)
    _require_host(name, instance)
    lifecycle_claim.claim_and_cast(rule_key, name, action, instance,
                                   compute, **rpc_kwargs)
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


INJECT_NETWORK_INFO_POLICY = \
    'os_compute_api:os-admin-actions:inject_network_info'


@validation.schema(_body('injectNetworkInfo', _NO_PARAMS))
def inject_network_info(server_id, value):
    """Nova's admin action: re-write the guest's network configuration
    from Neutron's ports. A server here has no ports and its fake guest
    nothing to configure, so after the checks Nova makes (the body, the
    policy, a server on a host) there is nothing to do: no RPC, no
    instance action (Nova records none for it either), 202."""
    validation.body()
    instance = common.get_instance(server_id, INJECT_NETWORK_INFO_POLICY)
    _require_host('injectNetworkInfo', instance)
    return common.accepted()


# changePassword: Nova claims the server (ACTIVE, task_state
# updating_password, instance action changePassword), then its compute
# sets the password through the guest agent and clears the task_state.
# A fake guest has no agent and no OS to hold a password: the claim and
# the action record are Nova's, the compute's part is nothing, so the
# claim is given back at once. The password is never stored or logged.
UPDATING_PASSWORD = lc_table.CHANGE_PASSWORD.task  # Nova's task_state
CHANGE_PASSWORD_POLICY = 'os_compute_api:os-admin-password'


@validation.schema(_body('changePassword', {
    'type': 'object', 'additionalProperties': False,
    'required': ['adminPass'],
    'properties': {'adminPass': {'type': 'string', 'maxLength': 255}}}))
def change_password(server_id, value):
    validation.body()
    instance = common.get_instance(server_id, CHANGE_PASSWORD_POLICY)
    _require_host('changePassword', instance)
    common.start_move(instance, 'changePassword', UPDATING_PASSWORD,
                      list(lc_table.CHANGE_PASSWORD.vm_states),
                      'changePassword')
    common.release_task_state(instance['uuid'], UPDATING_PASSWORD)
    return common.accepted()


# restore (Nova's os-deferred-delete): with [DEFAULT]
# reclaim_instance_interval = 0, Nova's default and the only behaviour
# here, a delete is never deferred and no server is ever SOFT_DELETED:
# restore is Nova's 409 for any server (404 for an unknown one).
# forceDelete is the delete (api/servers.py).
RESTORE_POLICY = 'os_compute_api:os-deferred-delete:restore'


@validation.schema(_body('restore', _NO_PARAMS))
def restore(server_id, value):
    validation.body()
    instance = common.get_instance(server_id, RESTORE_POLICY)
    common.check_state(instance, 'restore', ['soft-delete'])
    raise AssertionError('unreachable: no server is ever soft-deleted')


# addSecurityGroup / removeSecurityGroup: Nova adds the group to (or
# removes it from) every Neutron port of the server. There is no Neutron
# here and the one group this cloud has is 'default', the group every
# server boots in: the server's list of groups (instances.security_groups,
# shown in its view; no key when empty, as Nova) is what changes.
SECURITY_GROUP_POLICIES = {
    'addSecurityGroup': 'os_compute_api:os-security-groups:add',
    'removeSecurityGroup': 'os_compute_api:os-security-groups:remove'}
_GROUP_NAME = {'type': 'object', 'additionalProperties': False,
               'required': ['name'], 'properties': {'name': {
                   'type': 'string', 'minLength': 1, 'maxLength': 255}}}


class SecurityGroupNotFound(exception.NotFound):
    msg_fmt = 'Security group %(name)s not found for project %(project)s.'


class SecurityGroupNotAssociated(exception.NotFound):
    msg_fmt = ('Security group %(name)s not associated with the instance '
               '%(instance_uuid)s.')


def _security_group(action, server_id, value):
    validation.body()
    instance = common.get_instance(server_id,
                                   SECURITY_GROUP_POLICIES[action])
    name = value['name']
    if name not in views.SECURITY_GROUPS:
        raise SecurityGroupNotFound(name=name,
                                    project=instance['project_id'])
    return instance, name, views.security_groups(instance)


@validation.schema(_body('addSecurityGroup', _GROUP_NAME))
def add_security_group(server_id, value):
    instance, name, groups = _security_group('addSecurityGroup', server_id,
                                             value)
    if name not in groups:  # already in it: nothing to do, as Neutron
        db_api.instance_update(instance['uuid'],
                               {'security_groups': groups + [name]})
    return common.accepted()


@validation.schema(_body('removeSecurityGroup', _GROUP_NAME))
def remove_security_group(server_id, value):
    instance, name, groups = _security_group('removeSecurityGroup',
                                             server_id, value)
    if name not in groups:
        raise SecurityGroupNotAssociated(name=name,
                                         instance_uuid=instance['uuid'])
    db_api.instance_update(instance['uuid'], {'security_groups': [
        group for group in groups if group != name]})
    return common.accepted()


ACTIONS = {'pause': pause, 'unpause': unpause, 'suspend': suspend,
           'resume': resume, 'reboot': reboot,
           'injectNetworkInfo': inject_network_info,
           'changePassword': change_password,
           'restore': restore,
           'addSecurityGroup': add_security_group,
           'removeSecurityGroup': remove_security_group}

# The policy each action checks, for the lock check (api/lock.py), which
# comes after the action's policy like Nova's.
POLICIES = {name: RULES[name][0] for name in ACTIONS if name in RULES}
POLICIES['reboot'] = 'os_compute_api:servers:reboot'
POLICIES['injectNetworkInfo'] = INJECT_NETWORK_INFO_POLICY
POLICIES.update(SECURITY_GROUP_POLICIES)
POLICIES['changePassword'] = CHANGE_PASSWORD_POLICY
POLICIES['restore'] = RESTORE_POLICY
