"""Evacuation: rebuild on another host while the source is down; the
migration waits in 'done' with the source half until the source comes
back and cleans up (then 'completed')."""
from nova_moves.moves.step import (CONDUCTOR, DEST, KEEP, RESEND,
                                   RESTART_REDO, ROLL_BACK, S, SOURCE,
                                   guard, step)

TYPES = (S.EVACUATION,)

STEPS = (
    # start: the source half parked on the migration; end: the
    # destination recorded before the cast.
    step('conductor.rebuild_instance', CONDUCTOR,
         start=guard(S.M_ACCEPTED, S.M_PRE_MIGRATING, S.REBUILDING),
         end=guard(S.M_PRE_MIGRATING, KEEP, S.REBUILDING),
         allocations='claim', sweep=ROLL_BACK),
    step('rebuild_instance', DEST,
         start=guard(S.M_PRE_MIGRATING, KEEP,
                     (S.REBUILDING, S.REBUILD_SPAWNING), S.REBUILD_SPAWNING),
         end=guard(S.M_PRE_MIGRATING, S.M_DONE, S.REBUILD_SPAWNING, None),
         sweep=RESEND),
    # The source, back: its copy goes, then the source half.
    step('_clean_evacuated', SOURCE,
         guard((S.M_DONE, S.M_ACCEPTED, S.M_PRE_MIGRATING), S.M_COMPLETED),
         allocations='drop_source', restart=RESTART_REDO),
)

# Not a step: the heartbeat's hook (a host silent too long cleans up what
# was evacuated from it before it reports itself up again).
CONTROLS = ('before_reporting_up',)

# Waiting for the dead source to return: no step of the move runs, and
# the undo does not apply any more.
PARKED = (S.M_DONE,)

SHOWN = {S.REBUILDING: 'REBUILD', S.REBUILD_SPAWNING: 'REBUILD',
         S.REBUILD_BLOCK_DEVICE_MAPPING: 'REBUILD'}


def undo(migration, instance):
    """The server stays on its dead source, in ERROR."""
    return {'vm_state': S.ERROR}
