"""Finish what a dead process or a lost message left behind.

oslo.messaging acknowledges a message before its handler runs, so a
process that dies mid-step loses the step, and a broker that loses its
queues loses the casts in them. Every flow writes its state before it
casts, so a move that stopped can be recognised from the database alone:
a migration in a non-terminal status not touched for its step's timeout
(``[DEFAULT] move_step_timeouts``, else ``stuck_move_timeout``).

- A step whose message can be re-sent is re-driven once: the handlers
  are guarded and re-entrant, so a duplicate delivery changes nothing.
- A step that stalls again, or that belongs to a conductor that died
  (nothing to re-send), is rolled back with move_failed and an Error
  event.
- A live migration past ``queued`` is asked of its source first (a short
  call): one still running is left alone.

Compare-and-swaps make it safe for several conductors to sweep at once.
"""
import datetime
import threading
import time

from oslo_log import log as logging

from nova_moves import conf
from nova_moves import context as nm_context
from nova_moves.conductor import lifecycle_sweep
from nova_moves.conductor import steps
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import timeutil
from nova_moves import states

CONF = conf.CONF
LOG = logging.getLogger(__name__)

# task_state -> (migration type, statuses meaning "the conductor's part
# never finished", vm_state the server returns to: None keeps it)
INTERRUPTED = {
    states.RESIZE_PREP: ((states.MIGRATION, states.RESIZE),
                         (states.M_PRE_MIGRATING,), None),
    states.MIGRATING: ((states.LIVE_MIGRATION,), (states.M_ACCEPTED,), None),
    states.REBUILDING: ((states.EVACUATION,),
                        (states.M_ACCEPTED, states.M_PRE_MIGRATING),
                        states.ERROR),
}

RECOVERY_EVENT = steps.EVENT


def _older_than(value, cutoff):
    if value is None:
        return True
    return db_api._parse_time(value) < cutoff


def _timeout(status, default):
    value = CONF.move_step_timeouts.get(status)
    return float(value) if value else default


def recover_interrupted_moves(timeout=None, compute_rpcapi=None,
                              ctxt=None, cell_clients=None):
    """One sweep; returns the uuids of the servers rolled back or whose
    step was re-sent."""
    timeout = CONF.stuck_move_timeout if timeout is None else timeout
    now = timeutil.utcnow()
    cutoff = now - datetime.timedelta(seconds=timeout)
    acted = []
    # Moves whose first step (the API's or the conductor's) never got a
    # migration row far enough: found by the server's task_state.
    for instance in db_api.instance_get_all_by_task_states(
            list(INTERRUPTED), cutoff):
        try:
            if _recover(instance, cutoff, compute_rpcapi is not None):
                acted.append(instance['uuid'])
        except Exception:
            LOG.exception('Could not recover interrupted move of %s',
                          instance['uuid'])
    if compute_rpcapi is None:
        return acted
    ctxt = ctxt or nm_context.get_admin_context()
    unreachable = set()  # hosts that did not answer in this sweep
    # The lifecycle actions (no migration record), from their table.
    acted += lifecycle_sweep.sweep(ctxt, compute_rpcapi, cutoff,
                                   unreachable)
    # Moves waiting at the concurrency gate are not stuck, only queued.
    waiting = db_api.move_queue_waiting()
    for migration in db_api.migrations_unsettled():
        if migration['uuid'] in waiting:
            continue
        stamp = migration['updated_at'] or migration['created_at']
        step_cutoff = now - datetime.timedelta(
            seconds=_timeout(migration['status'], timeout))
        if not _older_than(stamp, step_cutoff):
            continue
        try:
            if steps.redrive_or_fail(ctxt, migration, compute_rpcapi,
                                     unreachable, cell_clients):
                acted.append(migration['instance_uuid'])
        except Exception:
            LOG.exception('Could not re-drive migration %s of %s',
                          migration['uuid'], migration['instance_uuid'])
    return acted


def _recover(instance, cutoff, redrive=False):
    task_state = instance['task_state']
    types, stuck_statuses, vm_state = INTERRUPTED[task_state]
    migrations = [m for m in db_api.migration_get_all(
        instance_uuid=instance['uuid']) if m['migration_type'] in types]
    live = [m for m in migrations
            if m['status'] not in states.MIGRATION_SETTLED_STATUSES]
    migration = live[0] if live else None
    if migration is None and lifecycle_sweep.same_host(task_state):
        # No evacuation: a same-host rebuild, the lifecycle table's
        # (lifecycle_sweep.py), never failed as an interrupted evacuation.
        return False
    message = ('Move interrupted (%s): a service died before finishing '
               'it; rolled back' % task_state)
    fault = {'code': 500, 'message': message, 'host': CONF.host}
    event = steps.error_event(message)
    try:
        if migration is None:
            # Only while the server still has this task_state: a move
            # that got further (or another sweeper) wins, nothing written.
            db_api.move_failed(
                instance_uuid=instance['uuid'], task_states=[task_state],
                fault=fault, event=event,
                instance_values={'vm_state': vm_state} if vm_state else None)
        else:
            if migration['status'] not in stuck_statuses or not _older_than(
                    migration['updated_at'] or migration['created_at'],
                    cutoff):
                return False  # the flow got further, or is still moving
            if redrive and migration['dest_node']:
                return False  # its step was cast: steps.py re-drives it
            claimed = db_api.move_claim(migration['uuid'],
                                        migration['status'],
                                        migration['updated_at'])
            if claimed is None:
                return False  # another sweeper, or the flow moved on
            db_api.move_failed(migration['uuid'],
                               expected_status=[migration['status']],
                               fault=fault, event=event, claimed=claimed)
    except exception.MoveConflict:
        return False  # another sweeper or the flow itself won
    LOG.warning('Rolled back interrupted move of %s (task_state %s, '
                'migration %s)', instance['uuid'], task_state,
                migration and migration['uuid'])
    return True


class RecoveryThread:
    """Sweeps every ``stuck_move_timeout / 4`` seconds (or a quarter of
    the shortest step timeout); runs ``fast_tasks`` (the move queue's
    admission pass, the host drains) every ``[conductor]
    queue_poll_interval`` in between."""

    def __init__(self, compute_rpcapi=None, fast_tasks=(),
                 cell_clients=None):
        self.compute_rpcapi = compute_rpcapi
        # The conductor's clients of the other cells (cross-cell sweep).
        self.cell_clients = cell_clients
        self.fast_tasks = list(fast_tasks)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name='move-recovery')

    def start(self):
        if CONF.stuck_move_timeout > 0 or self.fast_tasks:
            self._thread.start()

    def _run(self):
        shortest = min([CONF.stuck_move_timeout] + [
            float(v) for v in CONF.move_step_timeouts.values() if v])
        interval = max(1.0, shortest / 4.0)
        tick = (CONF.conductor.queue_poll_interval if self.fast_tasks
                else interval)
        next_sweep = time.monotonic() + interval
        while not self._stop.wait(tick):
            for task in self.fast_tasks:
                try:
                    task()
                except Exception:
                    LOG.exception('Periodic %s failed', task)
            if CONF.stuck_move_timeout <= 0 or \
                    time.monotonic() < next_sweep:
                continue
            next_sweep = time.monotonic() + interval
            try:
                recover_interrupted_moves(
                    compute_rpcapi=self.compute_rpcapi,
                    cell_clients=self.cell_clients)
            except Exception:
                LOG.exception('Interrupted-move sweep failed')

    def stop(self):
        self._stop.set()
