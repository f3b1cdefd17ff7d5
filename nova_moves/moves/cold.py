"""Resize and cold migration, with confirm and revert.

    dest   prep_resize           pre-migrating  resize_prep
    source resize_instance       -> migrating, resize_migrating
                                 -> post-migrating, resize_migrated
    dest   finish_resize         -> resize_finish -> finished, (none)
    source confirm_resize        confirming -> confirmed, source half gone
    dest   revert_resize         reverting, destination claim dropped
    source finish_revert_resize  -> reverted, source half back
"""
from nova_moves.moves.step import (CONDUCTOR, DEST, RESEND,
                                   RESTART_REDO, RESTART_UNDO, ROLL_BACK, S,
                                   SOURCE, guard, step)

TYPES = S.COLD_MIGRATION_TYPES

_PREP = guard(S.M_PRE_MIGRATING, task=S.RESIZE_PREP)
_REVERT = guard(S.M_REVERTING, task=S.RESIZE_REVERTING)

# What the sweep asks after rolling back a step that may have powered the
# old copy off: its host powers it back on (finish_revert_resize of an
# 'error' migration).
_OLD_COPY_BACK = (SOURCE, 'finish_revert_resize')

STEPS = (
    # The API's move_start set resize_prep; the conductor schedules and
    # writes the migration (db cold_move_start) before it casts.
    step('conductor.migrate_server', CONDUCTOR,
         guard(S.M_PRE_MIGRATING, task=S.RESIZE_PREP),
         allocations='claim', sweep=ROLL_BACK),
    step('prep_resize', DEST, _PREP, event='compute_prep_resize',
         sweep=RESEND),
    step('resize_instance', SOURCE,
         start=guard((S.M_PRE_MIGRATING, S.M_MIGRATING), S.M_MIGRATING,
                     (S.RESIZE_PREP, S.RESIZE_MIGRATING),
                     S.RESIZE_MIGRATING),
         end=guard(S.M_MIGRATING, S.M_POST_MIGRATING, S.RESIZE_MIGRATING,
                   S.RESIZE_MIGRATED),
         event='compute_resize_instance', sweep=RESEND,
         restart=RESTART_UNDO, undo='_undo_resize_instance',
         cleanup=_OLD_COPY_BACK),
    # Its start also ends a chained resize_instance (compute RPC 1.5):
    # from migrating, the server moving here in the same transaction.
    step('finish_resize', DEST,
         start=guard((S.M_MIGRATING, S.M_POST_MIGRATING), S.M_POST_MIGRATING,
                     (S.RESIZE_MIGRATING, S.RESIZE_MIGRATED,
                      S.RESIZE_FINISH), S.RESIZE_FINISH),
         end=guard(S.M_POST_MIGRATING, S.M_FINISHED, S.RESIZE_FINISH, None),
         event='compute_finish_resize', sweep=RESEND,
         restart=RESTART_UNDO, undo='_undo_finish_resize',
         cleanup=_OLD_COPY_BACK),
    # From compute RPC 1.8 confirm_resize, revert_resize and
    # finish_revert_resize make no start call when the cast carries what
    # they need (the hypervisor's mark of the move guards the guest), so
    # confirm is one call and the revert one in all; their start guards
    # remain for a guest without the mark. Their 'request' phase is the
    # one start of a confirm or revert, whoever asks (the API, the
    # auto-confirm, a host drain: db migration_settle_start).
    # Its end leaves the server without a task_state (a resized server
    # has none: no other action is allowed on it); 'end_left_behind': the
    # end when the old copy could not be removed (the server runs fine
    # on the destination, the migration ends in error).
    step('confirm_resize', SOURCE,
         start=guard(S.M_CONFIRMING, vm_state=S.RESIZED),
         end=guard(S.M_CONFIRMING, S.M_CONFIRMED, (None,), None,
                   vm_state=S.RESIZED),
         allocations='drop_source', event='compute_confirm_resize',
         sweep=RESEND, restart=RESTART_REDO,
         phases={'request': guard(S.M_FINISHED, S.M_CONFIRMING),
                 'end_left_behind': guard(S.M_CONFIRMING, S.M_ERROR, (None,),
                                      None, vm_state=S.RESIZED)}),
    # Chained (compute RPC 1.7), revert_resize makes only its start call:
    # its end (event, drop_dest) is written by finish_revert_resize's
    # start, whose guard is the same.
    step('revert_resize', DEST, start=_REVERT, end=_REVERT,
         allocations='drop_dest', event='compute_revert_resize',
         sweep=RESEND, restart=RESTART_REDO,
         phases={'request': guard(S.M_FINISHED, S.M_REVERTING, (None,),
                                  S.RESIZE_REVERTING, vm_state=S.RESIZED)}),
    step('finish_revert_resize', SOURCE, start=_REVERT,
         end=guard(S.M_REVERTING, S.M_REVERTED, S.RESIZE_REVERTING, None),
         allocations='return_source', event='compute_finish_revert_resize',
         sweep=RESEND, restart=RESTART_REDO, after='revert_resize'),
)

# Handlers of the kind that are not steps: the source serving the disk
# its copy left to finish_resize on the destination (compute RPC 1.9;
# its guard is the hypervisor's mark of the move, it writes nothing).
CONTROLS = ('export_disk',)

PARKED = ()

# What the API shows while a step runs (Nova's server status names).
SHOWN = {S.RESIZE_PREP: 'RESIZE', S.RESIZE_MIGRATING: 'RESIZE',
         S.RESIZE_MIGRATED: 'RESIZE', S.RESIZE_FINISH: 'RESIZE',
         S.RESIZE_REVERTING: 'REVERT_RESIZE'}


def undo(migration, instance):
    """Where move_failed puts the server: back on its source, with the
    flavor it had."""
    values = {'host': migration['source_compute'],
              'node': migration['source_node'],
              'old_flavor': None, 'new_flavor': None}
    if instance.get('old_flavor'):
        values['flavor'] = instance['old_flavor']
    return values


def confirm_facts(migration, instance):
    """What confirm_resize needs to run in one call (compute RPC 1.8),
    from the migration and server its caller read."""
    return {'dest': migration['dest_compute'],
            'vm_state': S.vm_state_after_resize(instance['power_state'])}


def revert_facts(migration, instance):
    """What the revert needs to run in one call (compute RPC 1.8)."""
    return {'source': migration['source_compute'],
            'source_node': migration['source_node'],
            'flavor': instance['old_flavor'] or instance['flavor'],
            'vm_state': S.vm_state_after_resize(instance['power_state'])}


# What the cast of each settling step carries, by step, and the columns
# of the server those read (the settle reads no more).
FACTS = {'confirm_resize': confirm_facts, 'revert_resize': revert_facts}
FACTS_COLUMNS = ('power_state', 'flavor', 'old_flavor')
