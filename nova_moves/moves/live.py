"""Live migration, with abort and force-complete.

The source runs the migration from the queue to the destination's
take-over; the sweep asks it (live_migration_status) and re-sends only
a step still queued. The destination's post_live_migration_at_destination
is the point of no return: one transaction moves the server, drops the
source half and completes the migration.
"""
from nova_moves.moves.step import (ASK, CONDUCTOR, DEST, KEEP, RESEND,
                                   RESTART_UNDO, ROLL_BACK, S, SOURCE,
                                   guard, step)

TYPES = (S.LIVE_MIGRATION,)

STEPS = (
    step('conductor.live_migrate_instance', CONDUCTOR,
         guard(S.M_ACCEPTED, S.M_QUEUED, S.MIGRATING),
         allocations='park_source', sweep=ROLL_BACK),
    step('live_migration', SOURCE,
         start=guard(S.M_QUEUED, KEEP, S.MIGRATING),
         end=guard(S.M_QUEUED, S.M_PREPARING, S.MIGRATING),
         sweep=RESEND, restart=RESTART_UNDO),
    step('pre_live_migration', DEST,
         guard(S.M_PREPARING, KEEP, S.MIGRATING),
         event='compute_pre_live_migration', sweep=ASK,
         restart=RESTART_UNDO),
    step('_lm_transfer', SOURCE,
         start=guard(S.M_PREPARING, S.M_RUNNING, S.MIGRATING),
         end=guard(S.M_RUNNING, S.M_POST_MIGRATING, S.MIGRATING),
         sweep=ASK, restart=RESTART_UNDO),
    step('post_live_migration_at_destination', DEST,
         start=guard(S.M_POST_MIGRATING, KEEP, S.MIGRATING),
         end=guard(S.M_POST_MIGRATING, S.M_COMPLETED, S.MIGRATING, None),
         allocations='drop_source',
         event='compute_post_live_migration_at_destination', sweep=ASK,
         restart=RESTART_UNDO),
)

# Handlers that act on a running step rather than being one.
CONTROLS = ('live_migration_abort', 'live_migration_force_complete',
            'live_migration_status', 'rollback_live_migration_at_destination',
            'check_can_live_migrate_destination',
            'check_can_live_migrate_source')

PARKED = ()

SHOWN = {S.MIGRATING: 'MIGRATING'}


def undo(migration, instance):
    """The server stays on its source; its progress goes back to 0."""
    return {'progress': 0}
