"""Cross-cell resize and cold migration (Nova Ussuri's snapshot-based
flow, doc/cells.md "Cross-cell resize"), with confirm and revert.

Every step is run by a conductor that has the API database (the source
cell's for the way there, the server's cell's for confirm and revert):
it calls the compute named by ``host`` (on that compute's cell's
transport) for the hypervisor's part, and writes the step's guarded
transition itself, in the cell the server is mapped to (the other
cell's copy of the migration follows). Computes talk only to their own
cell's conductor and take no part in the database work here.

    conductor migrate_server      pre-migrating resize_prep: schedule in
                                  another cell, copy the server there
                                  hidden, the migration in both cells
    dest   prep_..._at_dest       the claim checked on the destination
    source prep_..._at_source     -> migrating, resize_migrating; guest
                                  off, snapshot -> post-migrating,
                                  resize_migrated
    dest   finish_..._at_dest     -> resize_finish; spawned from the
                                  snapshot -> finished, (none); the
                                  mapping flips to the target cell
    source confirm_..._at_source  confirming -> confirmed; the source
                                  guest, rows and allocations go
    dest   revert_..._at_dest     reverting; the destination guest, rows
                                  and claim go
    source finish_revert_..._at_source -> reverted; the source guest on,
                                  the mapping flips back

The migration keeps Nova's migration_type ('resize' or 'migration') and
has cross_cell_move set; TYPES is empty so that BY_TYPE still gives the
cold table for those types (kind_of_migration picks this one).
"""
from nova_moves.moves.cold import undo as _cold_undo
from nova_moves.moves.step import (CONDUCTOR, DEST, REDRIVE, ROLL_BACK, S,
                                   SOURCE, guard, step)

TYPES = ()

_PREP = guard(S.M_PRE_MIGRATING, task=S.RESIZE_PREP)
_REVERT = guard(S.M_REVERTING, task=S.RESIZE_REVERTING)

STEPS = (
    # The API's move_start set resize_prep and the same-cell task found
    # no host in its cell (db cold_move_start wrote the migration and
    # parked the source allocation on it); its end records the target.
    step('conductor.migrate_server', CONDUCTOR, _PREP, sweep=ROLL_BACK),
    step('prep_snapshot_based_resize_at_dest', DEST, _PREP,
         event='compute_prep_snapshot_based_resize_at_dest',
         sweep=ROLL_BACK),
    step('prep_snapshot_based_resize_at_source', SOURCE,
         start=guard(S.M_PRE_MIGRATING, S.M_MIGRATING, S.RESIZE_PREP,
                     S.RESIZE_MIGRATING),
         end=guard(S.M_MIGRATING, S.M_POST_MIGRATING, S.RESIZE_MIGRATING,
                   S.RESIZE_MIGRATED),
         event='compute_prep_snapshot_based_resize_at_source',
         sweep=ROLL_BACK),
    step('finish_snapshot_based_resize_at_dest', DEST,
         start=guard(S.M_POST_MIGRATING, task=S.RESIZE_MIGRATED,
                     to_task=S.RESIZE_FINISH),
         end=guard(S.M_POST_MIGRATING, S.M_FINISHED, S.RESIZE_FINISH, None),
         event='compute_finish_snapshot_based_resize_at_dest',
         sweep=ROLL_BACK),
    # The 'request' phases are the API's settle_start, as the cold
    # table's confirm_resize and revert_resize (the same statuses).
    step('confirm_snapshot_based_resize_at_source', SOURCE,
         start=guard(S.M_CONFIRMING, vm_state=S.RESIZED),
         end=guard(S.M_CONFIRMING, S.M_CONFIRMED, (None,), None,
                   vm_state=S.RESIZED),
         event='compute_confirm_snapshot_based_resize_at_source',
         sweep=REDRIVE,
         phases={'request': guard(S.M_FINISHED, S.M_CONFIRMING)}),
    step('revert_snapshot_based_resize_at_dest', DEST, start=_REVERT,
         end=_REVERT, event='compute_revert_snapshot_based_resize_at_dest',
         sweep=REDRIVE,
         phases={'request': guard(S.M_FINISHED, S.M_REVERTING, (None,),
                                  S.RESIZE_REVERTING, vm_state=S.RESIZED)}),
    step('finish_revert_snapshot_based_resize_at_source', SOURCE,
         start=_REVERT,
         end=guard(S.M_REVERTING, S.M_REVERTED, S.RESIZE_REVERTING, None),
         event='compute_finish_revert_snapshot_based_resize_at_source',
         after='revert_snapshot_based_resize_at_dest'),
)

CONTROLS = ()
PARKED = ()

# The allocation change of each step, by cell: placement is sharded with
# the cells (doc/cells.md), so each half is written in its own cell's
# database ('source': where the server was, 'target': where it went).
# The claim on the destination is the target cell scheduler's
# (conductor row); the source half stays parked on the migration until
# confirm drops it or revert/failure hands it back.
ALLOCATIONS = {
    'conductor.migrate_server': ('target', 'claim'),
    'confirm_snapshot_based_resize_at_source': ('source', 'drop_source'),
    'revert_snapshot_based_resize_at_dest': ('target', 'drop_dest'),
    'finish_revert_snapshot_based_resize_at_source': ('source',
                                                      'return_source'),
}

# The steps before the mapping flips: a failure there is undone in the
# source cell (move_failed, as a cold move) after the target cell's
# copy, claim and guest are removed.
BEFORE_FLIP = ('conductor.migrate_server',
               'prep_snapshot_based_resize_at_dest',
               'prep_snapshot_based_resize_at_source',
               'finish_snapshot_based_resize_at_dest')

SHOWN = {S.RESIZE_PREP: 'RESIZE', S.RESIZE_MIGRATING: 'RESIZE',
         S.RESIZE_MIGRATED: 'RESIZE', S.RESIZE_FINISH: 'RESIZE',
         S.RESIZE_REVERTING: 'REVERT_RESIZE'}


# Where move_failed puts the server (in the source cell): back on its
# source with the flavor it had, as a cold move (cold.undo).
undo = _cold_undo
