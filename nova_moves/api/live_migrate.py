"""os-migrateLive and the server migrations resource (in-progress live
migrations: list, show, force_complete, abort).

Below 2.34 the API *calls* the conductor, so a failed pre-check (no valid
host, a destination that fails its checks) is a 400 and the server is left
as it was. From 2.34 the API *casts* and answers 202 at once; the checks
run in the background and show in the instance action's events."""
import flask

from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves.api import extensions
from nova_moves.api import validation
from nova_moves.api import views
from nova_moves.db import api as db_api
from nova_moves.db import phases
from nova_moves import exception
from nova_moves import moves
from nova_moves.moves import live
from nova_moves import states
from nova_moves import timeutil

ACTION = 'os-migrateLive'
# What move_start sets: the live table's conductor row's task_state.
TASK_STATE = moves.request_task_state(live)
ALLOWED_VM_STATES = list(states.ALLOW_LIVE_MIGRATE)


class UnableToMigrateToSelf(exception.Invalid):
    msg_fmt = ('Unable to migrate instance (%(instance_id)s) to current '
               'host (%(host)s).')


class InvalidMigrationState(exception.Invalid):
    msg_fmt = ('Migration %(migration_id)s state of instance '
               '%(instance_uuid)s is %(state)s. Cannot %(method)s while the '
               'migration is in this state.')


class MigrationNotFoundForInstance(exception.NotFound):
    msg_fmt = ('In-progress live migration %(migration_id)s is not found '
               'for server %(instance_id)s.')


# -- body schemas -------------------------------------------------------------

def _body(properties, required):
    # nova_moves extension at every version: a dry run (blueprint "Check
    # the destination host when migrating").
    properties = dict(properties, check=validation.BOOLEAN)
    return {'type': 'object', 'additionalProperties': False,
            'required': [ACTION],
            'properties': {ACTION: {
                'type': 'object', 'additionalProperties': False,
                'required': required, 'properties': properties}}}


_BLOCK_AUTO = {'oneOf': [validation.BOOLEAN,
                         {'type': 'string', 'enum': ['auto']}]}
_V21 = _body({'block_migration': validation.BOOLEAN,
              'disk_over_commit': validation.BOOLEAN,
              'host': validation.NULLABLE_HOSTNAME},
             ['block_migration', 'disk_over_commit', 'host'])
_V225 = _body({'block_migration': _BLOCK_AUTO,
               'host': validation.NULLABLE_HOSTNAME},
              ['block_migration', 'host'])
_V230 = _body({'block_migration': _BLOCK_AUTO,
               'host': validation.NULLABLE_HOSTNAME,
               'force': validation.BOOLEAN},
              ['block_migration', 'host'])
_V268 = _V225

_FORCE_COMPLETE = {'type': 'object', 'additionalProperties': False,
                   'required': ['force_complete'],
                   'properties': {'force_complete': {'type': 'null'}}}

# -- os-migrateLive -----------------------------------------------------------

def _check_host(instance, host):
    """A requested host must be a known compute, and not the current one
    (Nova answers both with a 400 for a live migration)."""
    try:
        db_api.compute_node_get_by_host(host)
    except exception.ComputeHostNotFound as exc:
        raise exception.Invalid(exc.message, reason=exc.message)
    if host == instance['host']:
        raise UnableToMigrateToSelf(instance_id=instance['uuid'], host=host)


@validation.schema(_V21, max_version='2.24')
@validation.schema(_V225, '2.25', '2.29')
@validation.schema(_V230, '2.30', '2.67')
@validation.schema(_V268, '2.68')
def live_migrate(server_id, value):
    version = api_req.version()
    body = validation.body()[ACTION]
    instance = common.get_instance(server_id)
    api_req.authorize('os_compute_api:os-migrate-server:migrate_live',
                      {'project_id': instance['project_id']})
    host = body['host']
    if host:
        api_req.authorize('os_compute_api:os-migrate-server:migrate_live:host',
                          {'project_id': instance['project_id']})
    block_migration = body['block_migration']
    if block_migration != 'auto':
        block_migration = validation.to_bool(block_migration)
    # disk_over_commit (< 2.25) is accepted and ignored: the fake
    # hypervisor has no disk over-commit to check.
    force = validation.to_bool(body.get('force', False))
    if force and not host:
        raise exception.ValidationError(
            detail="Can't force to a non-provided destination")
    check = validation.to_bool(body.get('check', False))
    if check:
        common.require_host_for('check', host)
    if host:
        _check_host(instance, host)
    if check:
        return common.dry_run_verdict(instance, host, ACTION,
                                      ALLOWED_VM_STATES)

    ctxt = api_req.context()
    # The migration row exists before any RPC: oslo.messaging acks a
    # message before its handler runs, so nothing may depend on a write
    # that happens after the cast. One transaction with the task_state
    # compare-and-swap and the action.
    migration = common.start_move(
        instance, ACTION, TASK_STATE, ALLOWED_VM_STATES, 'live-migration',
        migration={'migration_type': states.LIVE_MIGRATION,
                   'status': states.M_ACCEPTED,
                   'source_compute': instance['host'],
                   'source_node': instance['node'], 'dest_compute': host,
                   'old_flavor_id': str(instance['flavor']['id']),
                   'new_flavor_id': str(instance['flavor']['id'])})
    conductor = api_req.services().conductor
    if version >= '2.34':
        try:
            with api_req.services().keeper.sending(
                    instance['uuid'], TASK_STATE, migration):
                conductor.live_migrate_instance(
                    ctxt, instance['uuid'], migration['uuid'], host=host,
                    force=force, block_migration=block_migration)
        except Exception:
            _undo_before_conductor(instance['uuid'], migration)
            raise
        return common.accepted()
    # Blocking path: the conductor runs every check before answering and
    # undoes its own work when one fails; its error is our answer.
    # NoValidHost, MigrationPreCheckError and the like come back as the
    # conductor raised them, each with its 400.
    conductor.migrate_server(
        ctxt, instance['uuid'], live=True, host=host, force=force,
        block_migration=block_migration, migration_uuid=migration['uuid'],
        do_cast=False)
    return common.accepted()


def _undo_before_conductor(instance_uuid, migration):
    """The request never reached the conductor: nothing was claimed yet."""
    common.abandon_move(instance_uuid, TASK_STATE, migration)


ACTIONS = {ACTION: live_migrate}


# -- server migrations (in-progress live migrations) --------------------------

def _require(version, minimum):
    if not version >= minimum:
        raise exception.NotFound()


def _bytes(value):
    return value if value is not None else 0


def migration_view(migration, version):
    body = {'id': migration['id'],
            'server_uuid': migration['instance_uuid'],
            'status': migration['status'],
            'source_compute': migration['source_compute'],
            'source_node': migration['source_node'],
            'dest_compute': migration['dest_compute'],
            'dest_node': migration['dest_node'],
            'dest_host': migration['dest_host'],
            'memory_total_bytes': _bytes(migration['memory_total']),
            'memory_processed_bytes': _bytes(migration['memory_processed']),
            'memory_remaining_bytes': _bytes(migration['memory_remaining']),
            'disk_total_bytes': _bytes(migration['disk_total']),
            'disk_processed_bytes': _bytes(migration['disk_processed']),
            'disk_remaining_bytes': _bytes(migration['disk_remaining']),
            'created_at': timeutil.api_time(migration['created_at']),
            'updated_at': timeutil.api_time(migration['updated_at'])}
    if version >= '2.59':
        body['uuid'] = migration['uuid']
    if version >= '2.80':
        body['user_id'] = migration['user_id']
        body['project_id'] = migration['project_id']
    if extensions.requested(extensions.PHASES):
        body['phases'] = phases.view(migration.get('phases'))
    return body


def _live_migration_of(instance, migration_id):
    """The live migration ``migration_id`` of this server, any status."""
    try:
        migration = db_api.migration_get(migration_id)
    except exception.MigrationNotFound:
        migration = None
    if (migration is None or migration['instance_uuid'] != instance['uuid']
            or migration['migration_type'] != states.LIVE_MIGRATION):
        raise MigrationNotFoundForInstance(migration_id=migration_id,
                                           instance_id=instance['uuid'])
    return migration


def index(server_id):
    version = api_req.version()
    _require(version, '2.23')
    instance = common.get_instance(
        server_id, 'os_compute_api:servers:migrations:index')
    migrations = db_api.migration_get_all(
        instance_uuid=instance['uuid'], migration_type=states.LIVE_MIGRATION,
        status=list(states.LIVE_MIGRATION_IN_FLIGHT))
    body = [migration_view(m, version) for m in migrations]
    # A project manager sees their migrations, not the hosts (Nova 32.0.0).
    if not api_req.can('os_compute_api:servers:migrations:index:host',
                       {'project_id': instance['project_id']}):
        body = [views.hide_hosts(m) for m in body]
    return flask.jsonify({'migrations': body})


def show(server_id, migration_id):
    version = api_req.version()
    _require(version, '2.23')
    instance = common.get_instance(
        server_id, 'os_compute_api:servers:migrations:show')
    migration = _live_migration_of(instance, migration_id)
    if migration['status'] not in states.LIVE_MIGRATION_IN_FLIGHT:
        raise MigrationNotFoundForInstance(migration_id=migration_id,
                                           instance_id=instance['uuid'])
    return flask.jsonify({'migration': migration_view(migration, version)})


@validation.schema(_FORCE_COMPLETE, min_version='2.22')
def action(server_id, migration_id):
    version = api_req.version()
    _require(version, '2.22')
    validation.body()
    instance = common.get_instance(
        server_id, 'os_compute_api:servers:migrations:force_complete')
    migration = _live_migration_of(instance, migration_id)
    if migration['status'] != states.M_RUNNING:
        raise InvalidMigrationState(
            migration_id=migration_id, instance_uuid=instance['uuid'],
            state=migration['status'], method='force complete')
    common.record_action(instance, 'live_migration_force_complete')
    api_req.services().compute.live_migration_force_complete(
        api_req.context(), migration['source_compute'], instance['uuid'],
        migration['id'])
    return common.accepted()


def delete(server_id, migration_id):
    version = api_req.version()
    _require(version, '2.24')
    instance = common.get_instance(
        server_id, 'os_compute_api:servers:migrations:delete')
    migration = _live_migration_of(instance, migration_id)
    allowed = (states.M_RUNNING,) if version < '2.65' else \
        states.LIVE_MIGRATION_ABORTABLE
    if migration['status'] not in allowed:
        raise InvalidMigrationState(
            migration_id=migration_id, instance_uuid=instance['uuid'],
            state=migration['status'], method='abort live migration')
    common.record_action(instance, 'live_migration_cancel')
    if _cancel_waiting(migration):
        return common.accepted()
    api_req.services().compute.live_migration_abort(
        api_req.context(), migration['source_compute'], instance['uuid'],
        migration['id'])
    return common.accepted()


def _cancel_waiting(migration):
    """A migration waiting at the conductors' concurrency gate has no
    source that runs it yet: cancel it here. False when it got its slot
    meanwhile (then the source aborts it)."""
    if migration['uuid'] not in db_api.move_queue_waiting():
        return False
    try:
        # Still queued: its source's row has not started.
        db_api.move_failed(migration['uuid'], expected_status=moves.guard_of(
                               live, 'live_migration', 'start')['status'],
                           status=states.M_CANCELLED)
    except exception.MoveConflict:
        return False
    return True
