"""Which step a stalled move is at, and how the sweep gets it going again.

Each (move kind, migration status, task_state) names one step and the
host whose handler runs it. The step's message is re-sent once (the
migration's ``step_retries`` counts it, in the same transaction that
checks the migration is still there); a step that stalls again is rolled
back with move_failed. Handlers are guarded and re-entrant, so a re-sent
step that was only slow, not lost, changes nothing.
"""
from oslo_log import log as logging

from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import states

LOG = logging.getLogger(__name__)

EVENT = 'conductor_recover_interrupted_move'


def _resend(compute, ctxt, migration, instance):
    """Re-send the step's message; False when there is none to send (the
    step belonged to a conductor that died, or cannot be repeated)."""
    uuid, server = migration['uuid'], migration['instance_uuid']
    status, task = migration['status'], instance['task_state']
    kind = migration['migration_type']
    if kind in states.COLD_MIGRATION_TYPES and not migration['dest_node']:
        return False  # the conductor never chose a destination
    if kind in states.COLD_MIGRATION_TYPES:
        if status == states.M_PRE_MIGRATING and task == states.RESIZE_PREP:
            compute.prep_resize(ctxt, migration['dest_compute'], server,
                                uuid, instance['new_flavor'] or
                                instance['flavor'], {}, [])
        elif status in (states.M_PRE_MIGRATING, states.M_MIGRATING) and \
                task in (states.RESIZE_PREP, states.RESIZE_MIGRATING):
            compute.resize_instance(ctxt, migration['source_compute'],
                                    server, uuid)
        elif status == states.M_POST_MIGRATING and task in (
                states.RESIZE_MIGRATED, states.RESIZE_FINISH):
            compute.finish_resize(ctxt, migration['dest_compute'], server,
                                  uuid)
        elif status == states.M_CONFIRMING:
            compute.confirm_resize(ctxt, migration['source_compute'],
                                   server, uuid)
        elif status == states.M_REVERTING:
            same_host = migration['source_compute'] == \
                migration['dest_compute']
            dest_done = not same_host and not _holds_on(
                server, migration['dest_compute'])
            if dest_done:
                compute.finish_revert_resize(
                    ctxt, migration['source_compute'], server, uuid)
            else:
                compute.revert_resize(ctxt, migration['dest_compute'],
                                      server, uuid)
        else:
            return False
        return True
    if kind == states.EVACUATION:
        if status == states.M_PRE_MIGRATING and migration['dest_node'] and \
                task in (states.REBUILDING, states.REBUILD_SPAWNING):
            compute.rebuild_instance(ctxt, migration['dest_compute'], server,
                                     uuid, None, recreate=True)
            return True
        return False
    if kind == states.LIVE_MIGRATION and status == states.M_QUEUED:
        compute.live_migration(ctxt, migration['source_compute'], server,
                               migration['dest_compute'], uuid, {})
        return True
    return False


def _holds_on(consumer, host):
    usages = db_api.provider_usages()
    roots = {p['uuid']: p['root'] for p in usages.values()}
    return any(roots.get(rp) == host for rp in
               db_api.allocations_get(consumer))


def _live_still_running(compute, ctxt, migration):
    """A live migration past 'accepted' is the source's: ask it (a short
    call). True: leave it; False: not running there; None: no answer."""
    if migration['migration_type'] != states.LIVE_MIGRATION or \
            migration['status'] not in states.LIVE_MIGRATION_IN_FLIGHT:
        return False
    return compute.live_migration_status(
        ctxt, migration['source_compute'], migration['uuid'])


def redrive_or_fail(ctxt, migration, compute):
    """One stalled migration: re-send its step once, else roll it back.
    True when something was done."""
    try:
        instance = db_api.instance_get(migration['instance_uuid'])
    except exception.InstanceNotFound:
        instance = None
    if instance is None:
        return False  # deleted: the delete settles its migration
    running = _live_still_running(compute, ctxt, migration)
    if running:
        # Still copying: touch the migration so it is not asked again
        # before its next timeout.
        db_api.move_advance(migration['uuid'], status=[migration['status']])
        return False
    if not (migration.get('step_retries') or 0) and running is not None:
        try:
            db_api.move_advance(
                migration['uuid'], status=[migration['status']],
                task_state=[instance['task_state']],
                values={'step_retries': 1})
        except exception.MoveConflict:
            return False  # it moved on meanwhile
        if _resend(compute, ctxt, migration, instance):
            LOG.warning('Re-sent the %s step of migration %s of %s',
                        migration['status'], migration['uuid'],
                        migration['instance_uuid'])
            return True
    return _fail(ctxt, migration, instance, compute)


def _fail(ctxt, migration, instance, compute):
    message = ('Move step %s of migration %s did not finish in time (a '
               'service died or its message was lost); rolled back'
               % (migration['status'], migration['uuid']))
    try:
        db_api.move_failed(
            migration['uuid'], expected_status=[migration['status']],
            fault={'code': 500, 'message': message})
    except exception.MoveConflict:
        return False
    error_event(migration['instance_uuid'], message)
    LOG.warning(message)
    host = migration['source_compute']
    try:
        if migration['migration_type'] in states.COLD_MIGRATION_TYPES and \
                migration['status'] in (states.M_MIGRATING,
                                        states.M_POST_MIGRATING):
            # The old copy may be powered off: its host powers it back on
            # (finish_revert_resize of an 'error' migration).
            compute.finish_revert_resize(ctxt, host,
                                         migration['instance_uuid'],
                                         migration['uuid'])
        elif migration['migration_type'] == states.LIVE_MIGRATION and \
                migration['dest_compute']:
            compute.rollback_live_migration_at_destination(
                ctxt, migration['dest_compute'], migration['instance_uuid'],
                migration['uuid'])
    except Exception:
        LOG.exception('Could not ask the hosts of %s to clean up',
                      migration['uuid'])
    return True


def error_event(instance_uuid, message):
    """Close the move's instance action (the newest one, which the API
    recorded before it cast) with an Error event, so `server event show`
    says what happened to the request."""
    actions = db_api.actions_get(instance_uuid, limit=1)
    if actions:
        db_api.action_event_finish(
            instance_uuid, actions[0]['request_id'], EVENT, 'Error',
            traceback=message, details=message)
