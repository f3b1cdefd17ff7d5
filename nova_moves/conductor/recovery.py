"""Finish what a dead process left behind.

oslo.messaging acknowledges a message before its handler runs, so a
conductor (or destination compute) that dies mid-flow loses the request.
Every flow writes its state before it casts, so a move whose first step
never got done can be recognised from the database alone: a task_state
set by the API, and a migration still in the status the API or the
conductor gave it, neither touched for ``[DEFAULT] stuck_move_timeout``
seconds. Such a move is rolled back: the source allocation goes back to
the server, the migration ends in 'error', the task_state is cleared.
Compare-and-swaps make it safe for several conductors to sweep at once.
"""
import datetime
import threading

from oslo_log import log as logging

from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import timeutil

CONF = conf.CONF
LOG = logging.getLogger(__name__)

# task_state -> (migration type, statuses meaning "the conductor's part
# never finished", vm_state the server returns to: None keeps it)
INTERRUPTED = {
    'resize_prep': (('migration', 'resize'), ('pre-migrating',), None),
    'migrating': (('live-migration',), ('accepted',), None),
    'rebuilding': (('evacuation',), ('accepted', 'pre-migrating'),
                   'error'),
}

RECOVERY_EVENT = 'conductor_recover_interrupted_move'


def _older_than(value, cutoff):
    if value is None:
        return True
    return db_api._parse_time(value) < cutoff


def recover_interrupted_moves(timeout=None):
    """One sweep; returns the uuids of the servers rolled back."""
    timeout = CONF.stuck_move_timeout if timeout is None else timeout
    cutoff = timeutil.utcnow() - datetime.timedelta(seconds=timeout)
    recovered = []
    for instance in db_api.instance_get_all_by_task_states(
            list(INTERRUPTED), cutoff):
        try:
            if _recover(instance, cutoff):
                recovered.append(instance['uuid'])
        except Exception:
            LOG.exception('Could not recover interrupted move of %s',
                          instance['uuid'])
    return recovered


def _recover(instance, cutoff):
    task_state = instance['task_state']
    types, stuck_statuses, vm_state = INTERRUPTED[task_state]
    migrations = [m for m in db_api.migration_get_all(
        instance_uuid=instance['uuid']) if m['migration_type'] in types]
    live = [m for m in migrations
            if m['status'] not in ('error', 'failed', 'confirmed',
                                   'reverted', 'completed', 'cancelled',
                                   'done', 'finished')]
    migration = live[0] if live else None
    if migration is not None:
        if migration['status'] not in stuck_statuses or not _older_than(
                migration['updated_at'] or migration['created_at'], cutoff):
            return False  # the flow got further, or is still moving
        try:
            db_api.migration_update(migration['id'], {'status': 'error'},
                                    expected_status=[migration['status']])
        except exception.Conflict:
            return False  # another sweeper or the flow itself won
        # Hand the source half back; this also drops any destination
        # claim the server held.
        if db_api.allocations_get(migration['uuid']):
            db_api.allocations_move(migration['uuid'], instance['uuid'])
    values = {'task_state': None}
    if vm_state:
        values['vm_state'] = vm_state
    try:
        db_api.instance_update(instance['uuid'], values,
                               expected_task_state=[task_state])
    except exception.NovaMovesException:
        return False
    message = ('Move interrupted (%s): a service died before finishing '
               'it; rolled back' % task_state)
    db_api.instance_fault_create(instance['uuid'], 500, message,
                                 host=CONF.host)
    _record_error_event(instance['uuid'], message)
    LOG.warning('Rolled back interrupted move of %s (task_state %s, '
                'migration %s)', instance['uuid'], task_state,
                migration and migration['uuid'])
    return True


def _record_error_event(instance_uuid, message):
    """Close the move's instance action (the newest one, which the API
    recorded before it cast) with an Error event, so `server event show`
    says what happened to the request the dead process took with it."""
    actions = db_api.actions_get(instance_uuid, limit=1)
    if not actions:
        return
    db_api.action_event_finish(
        instance_uuid, actions[0]['request_id'], RECOVERY_EVENT, 'Error',
        traceback=message, details=message)


class RecoveryThread:
    """Sweeps every ``stuck_move_timeout / 4`` seconds."""

    def __init__(self):
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name='move-recovery')

    def start(self):
        if CONF.stuck_move_timeout > 0:
            self._thread.start()

    def _run(self):
        interval = max(1.0, CONF.stuck_move_timeout / 4.0)
        while not self._stop.wait(interval):
            try:
                recover_interrupted_moves()
            except Exception:
                LOG.exception('Interrupted-move sweep failed')

    def stop(self):
        self._stop.set()
