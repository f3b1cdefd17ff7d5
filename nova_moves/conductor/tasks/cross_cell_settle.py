"""Confirm and revert of a cross-cell resize (nova_moves/moves/
cross_cell.py), run by the conductor of the cell the server is mapped
to (the target cell's) once the API's settle_start set the migration
confirming or reverting there (the 'request' phase of the step's row:
the same guard as a cold move's, so the same db settle_start serves).

The source cell is the one the migration's source host is mapped to
(its host mapping, as Nova finds it). A failure before the source cell
changed gives the request back (settle_abandon): the server stays in
VERIFY_RESIZE with a fault, and the confirm or revert can be asked
again; every step is re-entrant.
"""
from oslo_log import log as logging

from nova_moves import cells
from nova_moves.conductor import cell_clients
from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves.db import cross_cell as cc_db
from nova_moves.db import mappings
from nova_moves import faultinfo
from nova_moves import moves
from nova_moves.moves import cross_cell
from nova_moves import states

CONF = conf.CONF
LOG = logging.getLogger(__name__)
CONFIRM = 'confirm_snapshot_based_resize_at_source'
REVERT = 'revert_snapshot_based_resize_at_dest'
FINISH_REVERT = 'finish_revert_snapshot_based_resize_at_source'


def _guard(name, phase='end'):
    return moves.guard_of(cross_cell, name, phase)


def _source_cell(migration):
    return cell_clients.cell(mappings.host_mapping_get(
        migration['source_compute'])['cell_uuid'])


def _give_back(ctxt, db, step, migration, exc):
    """The request undone: the migration finished again, the server's
    task_state released, a fault saying why."""
    LOG.exception('%s of cross-cell migration %s failed', step,
                  migration['uuid'])
    db_api.settle_abandon(step, migration)
    fault = faultinfo.from_exc(exc, CONF.host)
    db.instance_fault_create(ctxt, migration['instance_uuid'],
                             fault.get('code') or 500,
                             fault.get('message'), fault.get('details'),
                             CONF.host)


def _source_failed(ctxt, db, migration, source, exc):
    """The source guest could not run again after the destination's
    went: the server is the source cell's again, in ERROR with a fault
    (Nova's too), its allocation back from the migration, no task_state
    left; the operator starts it (or resets it) there."""
    LOG.exception('Revert of cross-cell migration %s failed at its '
                  'source', migration['uuid'])
    with cells.target(source):
        db.move_failed(ctxt, migration['uuid'],
                       expected_status=_guard(FINISH_REVERT, 'start')[
                           'status'],
                       instance_values={'vm_state': states.ERROR,
                                        'hidden': False},
                       fault=faultinfo.from_exc(exc, CONF.host))
    cc_db.mapping_set_cell(migration['instance_uuid'], source.uuid)
    cc_db.server_purge(migration['instance_uuid'])


def confirm(ctxt, db, clients, migration_uuid):
    migration = db.migration_get(ctxt, migration_uuid)
    uuid = migration['instance_uuid']
    try:
        db.move_advance(ctxt, migration_uuid, **_guard(CONFIRM, 'start'))
        source = _source_cell(migration)
        clients.compute(source).confirm_snapshot_based_resize_at_source(
            ctxt, migration['source_compute'], uuid, migration_uuid)
    except Exception as exc:
        return _give_back(ctxt, db, 'confirm_resize', migration, exc)
    # The source cell's half: its allocation (parked on the migration)
    # and the server's rows there (Nova's hard delete of the source
    # instance), then the step's end here.
    with cells.target(source):
        # The table's ('source', 'drop_source'): the migration's half.
        db_api.allocations_delete(migration_uuid)
        cc_db.server_purge(uuid)
    instance = db.instance_get(ctxt, uuid)
    db.move_advance(ctxt, migration_uuid, **_guard(CONFIRM),
                    instance_values={
                        'vm_state': states.vm_state_after_resize(
                            instance['power_state']),
                        'old_flavor': None, 'new_flavor': None})
    LOG.info('Cross-cell migration %s of %s confirmed', migration_uuid, uuid)


def revert(ctxt, db, clients, migration_uuid):
    migration = db.migration_get(ctxt, migration_uuid)
    uuid = migration['instance_uuid']
    here = cell_clients.own_cell()
    try:
        db.move_advance(ctxt, migration_uuid, **_guard(REVERT, 'start'))
        source = _source_cell(migration)
        clients.compute(here).revert_snapshot_based_resize_at_dest(
            ctxt, migration['dest_compute'], uuid, migration_uuid)
    except Exception as exc:
        return _give_back(ctxt, db, 'revert_resize', migration, exc)
    # The destination's claim goes with the step's end (this cell).
    db.move_advance(ctxt, migration_uuid, **_guard(REVERT),
                    allocations={'op': cross_cell.ALLOCATIONS[REVERT][1]})
    instance = db.instance_get(ctxt, uuid)
    stopped = instance['power_state'] == states.POWER_SHUTDOWN
    old_flavor = instance['old_flavor'] or instance['flavor']
    with cells.target(source):
        # The source copy takes the step: what the revert's request
        # wrote in this cell (its guard is the same).
        request = moves.step_named(cross_cell, REVERT).phases['request']
        cc_db.migration_set(migration_uuid, {'status': request.to_status})
        cc_db.server_set(uuid, {'task_state': request.to_task})
    try:
        power = clients.compute(source) \
            .finish_revert_snapshot_based_resize_at_source(
                ctxt, migration['source_compute'], uuid, migration_uuid,
                old_flavor, stopped)
    except Exception as exc:
        return _source_failed(ctxt, db, migration, source, exc)
    with cells.target(source):
        db.move_advance(
            ctxt, migration_uuid, **_guard(FINISH_REVERT),
            allocations={'op': cross_cell.ALLOCATIONS[FINISH_REVERT][1]},
            instance_values={'hidden': False, 'power_state': power,
                             'vm_state': states.vm_state_after_resize(power),
                             'flavor': old_flavor, 'old_flavor': None,
                             'new_flavor': None})
    cc_db.mapping_set_cell(uuid, source.uuid)
    # This cell's copy and migration go (Nova deletes the target cell's
    # instance at revert).
    cc_db.server_purge(uuid)
    LOG.info('Cross-cell migration %s of %s reverted', migration_uuid, uuid)
