"""The stuck-move sweep's part for the lifecycle actions (no migration
record): a server whose lifecycle task_state (nova_moves/moves/
lifecycle.py) has not changed for ``stuck_move_timeout``.

- Its host still runs the action (move_step_status with the server's
  uuid, a short call): only slow, left alone.
- Its host answers but does not run it: the cast was lost (a broker
  that lost its queue) or its handler died with the process that has
  since restarted and recovered everything else: the row's message is
  sent again. The handler is guarded, so a copy that was only late
  changes nothing.
- Its host does not answer and its service is down: nothing can reach
  the guest. The task_state is given back (vm_state as recorded, an
  Error event and a fault saying why), so the server can be evacuated
  or acted on again; a restarted host finds no claim and leaves it.
- An unshelve of an offloaded server no host took (its conductor died
  before placing it): undone, back to SHELVED_OFFLOADED with its claim
  dropped. A boot (spawning) is not sent again (its request is gone);
  only when its host is down is it ERROR with a fault (then it can be
  evacuated), as a restarted host makes it (Nova's).
- A rebuilding server with an evacuation under way is the evacuation's
  (recovery.py); a same-host rebuild is never failed as one.
"""
from oslo_log import log as logging

from nova_moves import conf
from nova_moves.conductor import steps
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import moves
from nova_moves.moves import lifecycle as lc_table
from nova_moves import states

CONF = conf.CONF
LOG = logging.getLogger(__name__)

COMPUTE = 'nova-moves-compute'


def _resend(compute, ctxt, row, instance):
    kwargs = {}
    if row.method == 'reboot_instance':
        kwargs['reboot_type'] = row.name.split(':')[1]
    elif row.name == 'rebuild':
        kwargs['image_ref'] = instance['image_ref']
    getattr(compute, row.method)(ctxt, instance['host'], instance['uuid'],
                                 **kwargs)


def evacuating(instance_uuid):
    """An evacuation of the server under way (its migration before
    'done'): a rebuilding server is then the evacuation's."""
    return any(m['migration_type'] == states.EVACUATION and
               m['status'] in moves.EVACUATING
               for m in db_api.migration_get_all(instance_uuid=instance_uuid))


def same_host(task_state):
    """Whether a server in ``task_state`` with no move under way is in a
    lifecycle action of its own host (a same-host rebuild)."""
    return task_state in lc_table.TASK_STATES


def _host_down(host):
    try:
        service = db_api.service_get_by_host_and_binary(host, COMPUTE)
    except exception.NotFound:
        return True
    return not db_api.service_is_up(service)


def sweep(ctxt, compute, cutoff, unreachable):
    """One pass; the uuids of the servers acted on."""
    acted = []
    for instance in db_api.instance_get_all_by_task_states(
            list(lc_table.TASK_STATES), cutoff):
        try:
            if _one(ctxt, compute, instance, unreachable):
                acted.append(instance['uuid'])
        except Exception:
            LOG.exception('Could not recover %s of %s',
                          instance['task_state'], instance['uuid'])
    return acted


def _one(ctxt, compute, instance, unreachable):
    row, _what = lc_table.recovery_of(instance['task_state'])
    uuid, host = instance['uuid'], instance['host']
    if row.name == 'rebuild' and evacuating(uuid):
        return False
    offloaded = instance['vm_state'] == states.SHELVED_OFFLOADED
    if host is None:
        if row.name == 'unshelve' and offloaded:
            return _give_back(instance, 'its conductor died before a host '
                              'took it', undo=True)
        return False
    running = None
    if host not in unreachable:
        running = compute.move_step_status(
            ctxt, host, uuid, timeout=CONF.move_step_status_timeout)
        if running is None:
            unreachable.add(host)
    if running:
        return False  # only slow
    if running is False and row.recovery == lc_table.UNDO:
        # A boot: its request is gone, nothing to send again, and its
        # cast may only be late (Nova's instance_build_timeout is off by
        # default): left to its host, whose restart ends it.
        return False
    if running is False:
        LOG.warning('%s of %s stalled on %s; sending it again', row.name,
                    uuid, host)
        _resend(compute, ctxt, row, instance)
        return True
    if not _host_down(host):
        return False  # up but not answering now: asked again next pass
    return _give_back(instance, 'its host %s is down' % host,
                      undo=(row.name == 'unshelve' and offloaded) or
                      row.recovery == lc_table.UNDO)


def _give_back(instance, why, undo=False):
    row, _what = lc_table.recovery_of(instance['task_state'])
    message = ('%s of %s did not finish (%s); task_state %s given back'
               % (row.name, instance['uuid'], why, instance['task_state']))
    values = None
    if undo:
        undone = (lc_table.UNSHELVE_UNDO if row.name == 'unshelve'
                  else lc_table.failed_values(row.name))
        values = {k: v for k, v in undone.items() if k != 'task_state'}
    try:
        db_api.move_failed(
            instance_uuid=instance['uuid'],
            task_states=[instance['task_state']],
            fault={'code': 500, 'message': message, 'host': CONF.host},
            event=dict(steps.error_event(message),
                       name='compute_' + row.method),
            instance_values=values)
    except exception.MoveConflict:
        return False  # it moved on meanwhile
    if undo and row.name == 'unshelve':
        db_api.allocations_delete(instance['uuid'])
    LOG.warning(message)
    return True
