"""The lifecycle table's claim and cast (moves/lifecycle.py), shared by
the lifecycle actions (api/lifecycle.py) and rescue/unrescue
(api/rescue.py)."""
from nova_moves.api import common
from nova_moves.api import request as api_req
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves.moves import lifecycle as lc_table


def _claim_hard_reboot(instance):
    """task_state (None or one a hard reboot takes over) -> rebooting_hard
    by compare-and-swap, then the action (the claim is what may race; a
    failed action write gives the claim back)."""
    hard = lc_table.row('reboot:HARD')
    try:
        db_api.instance_update(
            instance['uuid'], {'task_state': hard.task},
            expected_task_state=list(hard.takes_over),
            expected_vm_state=list(hard.vm_states))
    except exception.UnexpectedTaskState as exc:
        raise exception.InstanceInvalidState(
            method='reboot', instance_uuid=instance['uuid'],
            attr='task_state', state=exc.kwargs.get('actual'))
    try:
        common.record_action(instance, 'reboot')
    except Exception:
        common.release_task_state(instance['uuid'], hard.task)
        raise


def claim_and_cast(rule_key, name, action, instance, compute, **rpc_kwargs):
    """The lifecycle table's claim of ``rule_key`` (one compare-and-swap
    with the instance action), then its cast to the server's compute;
    a cast that fails gives the claim back."""
    row = lc_table.row(rule_key)
    if row.takes_over != (None,):
        _claim_hard_reboot(instance)
    else:
        common.start_move(instance, name, row.task, list(row.vm_states),
                          action)
    try:
        getattr(compute, row.method)(api_req.context(), instance['host'],
                                     instance['uuid'], **rpc_kwargs)
    except Exception:
        common.release_task_state(instance['uuid'], row.task)
        raise
