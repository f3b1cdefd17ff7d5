"""Which step a stalled move is at, and how the sweep gets it going again.

Each (move kind, migration status, task_state) names one step of the
move's table (nova_moves/moves) and the host whose handler runs it. The
sweep first claims the stalled step (db move_claim: one conductor acts).
That host is asked first (move_step_status,
live_migration_status for a live migration's source; a short call): a
step it still runs is only slow and is left alone. Otherwise the step's
message is re-sent once (the migration's ``step_retries`` counts it,
in a transaction that checks nothing touched the migration since the
claim); a step that stalls again is rolled back with move_failed.
Handlers are guarded and re-entrant, so a re-sent step that was only
slow, not lost, changes nothing.
"""
from oslo_log import log as logging

from nova_moves import conf
from nova_moves.conductor.tasks import cross_cell as cross_cell_task
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import moves
from nova_moves.moves import cold
from nova_moves import states

CONF = conf.CONF
LOG = logging.getLogger(__name__)

EVENT = 'conductor_recover_interrupted_move'


# How the sweep re-sends each RESEND step of the tables (nova_moves/moves).
_RESEND = {
    'prep_resize': lambda api, ctxt, host, m, i: api.prep_resize(
        ctxt, host, m['instance_uuid'], m['uuid'],
        i['new_flavor'] or i['flavor'], {}, []),
    'resize_instance': lambda api, ctxt, host, m, i: api.resize_instance(
        ctxt, host, m['instance_uuid'], m['uuid']),
    'finish_resize': lambda api, ctxt, host, m, i: api.finish_resize(
        ctxt, host, m['instance_uuid'], m['uuid']),
    'confirm_resize': lambda api, ctxt, host, m, i: api.confirm_resize(
        ctxt, host, m['instance_uuid'], m['uuid'],
        confirm=cold.confirm_facts(m, i)),
    'revert_resize': lambda api, ctxt, host, m, i: api.revert_resize(
        ctxt, host, m['instance_uuid'], m['uuid'],
        revert=cold.revert_facts(m, i)),
    'finish_revert_resize': lambda api, ctxt, host, m, i:
        api.finish_revert_resize(ctxt, host, m['instance_uuid'], m['uuid']),
    'rebuild_instance': lambda api, ctxt, host, m, i: api.rebuild_instance(
        ctxt, host, m['instance_uuid'], m['uuid'], None, recreate=True),
    'live_migration': lambda api, ctxt, host, m, i: api.live_migration(
        ctxt, host, m['instance_uuid'], m['dest_compute'], m['uuid'], {}),
}


def _row(migration, instance):
    """The row of its table the move stalled at (None: no row
    applies)."""
    server = migration['instance_uuid']
    source, dest = migration['source_compute'], migration['dest_compute']

    def done(name):
        if name == 'conductor':  # it chose the destination
            return bool(migration['dest_node'])
        # The revert's destination half: its claim there is gone.
        return source != dest and not _holds_on(server, dest)

    return moves.sweep_step(migration['migration_type'],
                            migration['status'], instance['task_state'],
                            done)


def _host(migration, role):
    return migration['source_compute'] if role == moves.SOURCE \
        else migration['dest_compute']


def _step(compute, ctxt, migration, instance, row):
    """(host, send) for the step the move stalled at (its table's
    ``row``): the host whose handler runs it and a function re-sending
    its message; None when there is nothing to re-send (the step
    belonged to a conductor that died, or its table says ask or roll
    back)."""
    if row is None or row.sweep != moves.RESEND:
        return None
    host = _host(migration, row.host)
    return host, lambda: _RESEND[row.name](compute, ctxt, host, migration,
                                           instance)


def _holds_on(consumer, host):
    usages = db_api.provider_usages()
    roots = {p['uuid']: p['root'] for p in usages.values()}
    return any(roots.get(rp) == host for rp in
               db_api.allocations_get(consumer))


def _still_running(compute, ctxt, migration, step, unreachable):
    """Ask the host holding the step (a short call) whether it still runs
    it. True: leave the move alone; False: it does not; None: no answer
    (dead, or too old to be asked). A host that did not answer is not
    asked again in this sweep (``unreachable``)."""
    live = migration['migration_type'] == states.LIVE_MIGRATION
    if live and migration['status'] in states.LIVE_MIGRATION_IN_FLIGHT:
        # A live migration past 'accepted' is its source's, from the
        # queue to the destination's take-over.
        host = migration['source_compute']
        ask = compute.live_migration_status
    elif step is not None and not live:
        host = step[0]
        ask = compute.move_step_status
    else:
        return False
    if host in unreachable:
        return None
    answer = ask(ctxt, host, migration['uuid'],
                 timeout=CONF.move_step_status_timeout)
    if answer is None:
        unreachable.add(host)
    return answer


def redrive_or_fail(ctxt, migration, compute, unreachable=None,
                    cell_clients=None):
    """One stalled migration: claim it (move_claim: of several conductors
    exactly one goes on, and none when its step moved meanwhile), then
    leave it when the host holding its step still runs it, else re-send
    its step once, else roll it back; the re-send and the rollback write
    only while nothing touched the migration since the claim. True when
    something was done."""
    unreachable = set() if unreachable is None else unreachable
    if migration.get('cross_cell_move'):
        # Its steps are a conductor's calls, not casts to re-send: the
        # cross-cell table's sweep (conductor/tasks/cross_cell.py).
        return cross_cell_task.sweep_stalled(ctxt, migration,
                                             clients=cell_clients)
    try:
        instance = db_api.instance_get(migration['instance_uuid'])
    except exception.InstanceNotFound:
        instance = None
    if instance is None:
        return False  # deleted: the delete settles its migration
    claimed = db_api.move_claim(migration['uuid'], migration['status'],
                                migration['updated_at'])
    if claimed is None:
        return False  # another conductor has it, or its step moved on
    row = _row(migration, instance)
    step = _step(compute, ctxt, migration, instance, row)
    running = _still_running(compute, ctxt, migration, step, unreachable)
    if running:
        # Only slow: the claim touched the migration, so it is not asked
        # again before its next timeout. Its late end finds the move as
        # it left it.
        LOG.info('Move step %s of migration %s is still running; waiting',
                 migration['status'], migration['uuid'])
        return False
    # A live migration's source that does not answer is gone: re-sending
    # it its step is pointless. A cold move's step is re-sent even to a
    # host that did not answer: it runs it when it is back.
    live = migration['migration_type'] == states.LIVE_MIGRATION
    if not (migration.get('step_retries') or 0) and step is not None and \
            (running is not None or not live):
        try:
            db_api.move_advance(
                migration['uuid'], status=[migration['status']],
                task_state=[instance['task_state']],
                values={'step_retries': 1}, claimed=claimed)
        except exception.MoveConflict:
            return False  # it moved on meanwhile
        step[1]()
        LOG.warning('Re-sent the %s step of migration %s of %s',
                    migration['status'], migration['uuid'],
                    migration['instance_uuid'])
        return True
    return _fail(ctxt, migration, row, compute, claimed)


def _fail(ctxt, migration, row, compute, claimed):
    message = ('Move step %s of migration %s did not finish in time (a '
               'service died or its message was lost); rolled back'
               % (migration['status'], migration['uuid']))
    try:
        db_api.move_failed(
            migration['uuid'], expected_status=[migration['status']],
            fault={'code': 500, 'message': message}, claimed=claimed,
            event=error_event(message))
    except exception.MoveConflict:
        return False  # settled or advanced meanwhile: nothing written
    LOG.warning(message)
    # What the step's row says its host cleans up once it is undone.
    if row is None or row.cleanup is None:
        return True
    role, method = row.cleanup
    host = _host(migration, role)
    if host is None:
        return True  # no such host chosen yet: nothing there to clean
    try:
        getattr(compute, method)(ctxt, host, migration['instance_uuid'],
                                 migration['uuid'])
    except Exception:
        LOG.exception('Could not ask the hosts of %s to clean up',
                      migration['uuid'])
    return True


def error_event(message):
    """The Error event move_failed closes in its own transaction, on the
    move's action (the server's newest, which the API recorded before it
    cast), so `server event show` says what happened to the request."""
    return {'name': EVENT, 'traceback': message, 'details': message,
            'action': 'newest'}
