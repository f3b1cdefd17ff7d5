"""POST /servers/{id}/action: one handler per action name. Each action
module exports ACTIONS = {name: handler(server_id, value)}.

A locked server (api/lock.py) refuses every action but lock, unlock and
os-resetState to a caller who is not admin, with a 409; the action's
own policy is asked first (POLICIES), so a caller it refuses gets its
403 as in Nova."""
from nova_moves.api import request as api_req
from nova_moves.api import validation
from nova_moves.api import common
from nova_moves.api import console_output
from nova_moves.api import evacuate
from nova_moves.api import guards
from nova_moves.api import lifecycle
from nova_moves.api import live_migrate
from nova_moves.api import lock
from nova_moves.api import migrate
from nova_moves.api import power
from nova_moves.api import rebuild
from nova_moves.api import rescue
from nova_moves.api import reset_state
from nova_moves.api import servers
from nova_moves.api import shelve
from nova_moves.db import api as db_api
from nova_moves import exception

ACTIONS = {}
for _module in (migrate, live_migrate, evacuate, power, lifecycle, lock,
                rebuild, reset_state, shelve, servers, console_output,
                rescue):
    ACTIONS.update(_module.ACTIONS)

# The actions a lock does not stop (Nova's are not decorated with
# check_instance_lock; os-getConsoleOutput only reads).
NOT_LOCKED_OUT = ('lock', 'unlock', reset_state.ACTION,
                  console_output.ACTION)
# The policy each action checks before its lock check.
POLICIES = {
    'resize': 'os_compute_api:servers:resize',
    'confirmResize': 'os_compute_api:servers:confirm_resize',
    'revertResize': 'os_compute_api:servers:revert_resize',
    'migrate': 'os_compute_api:os-migrate-server:migrate',
    'os-migrateLive': 'os_compute_api:os-migrate-server:migrate_live',
    'evacuate': 'os_compute_api:os-evacuate',
    'os-start': 'os_compute_api:servers:start',
    'os-stop': 'os_compute_api:servers:stop',
}
POLICIES.update(lifecycle.POLICIES)
POLICIES.update(rebuild.POLICIES)
POLICIES.update(shelve.POLICIES)
POLICIES.update(servers.POLICIES)
POLICIES.update(rescue.POLICIES)


def _check_lock(server_id, name):
    """409 for a non-admin acting on a locked server it may act on;
    anything else (unknown server, another project's, a refused policy)
    is left to the handler's own 404 / 403."""
    if name in NOT_LOCKED_OUT or api_req.context().is_admin:
        return
    try:
        # Its owner and lock are all this needs (not the whole row).
        instance = db_api.instance_get_brief(server_id)
    except exception.InstanceNotFound:
        return
    if not instance.get('locked_by') or \
            instance['project_id'] != api_req.context().project_id:
        return
    rule = POLICIES.get(name)
    if rule and not api_req.can(rule, {'project_id': instance['project_id']}):
        return
    guards.check_not_locked(instance)


@validation.unvalidated('each action declares its own schema (ACTIONS); '
                        'it is validated when dispatched')
def action(server_id):
    body = common.json_body()
    if not isinstance(body, dict) or len(body) != 1:
        raise exception.ValidationError(
            detail='The action body must be an object with exactly one '
                   'action name as its key.')
    name, value = next(iter(body.items()))
    handler = ACTIONS.get(name)
    if handler is None:
        raise exception.ValidationError(
            detail='There is no such action: %s' % name)
    _check_lock(server_id, name)
    # The action's @validation.schema declarations apply from here.
    return api_req.dispatch(handler, server_id, value)
