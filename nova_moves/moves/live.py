"""Live migration, with abort and force-complete.

The source runs the migration from the queue to the destination's
take-over; the sweep asks it (live_migration_status) and re-sends only
a step still queued. The destination's post_live_migration_at_destination
is the point of no return: one transaction moves the server, drops the
source half and completes the migration.

Chained (compute RPC 1.6, conductor compute_db 1.6): the source makes no
conductor call on the way. The destination's pre_live_migration writes,
at its end and in one transaction, the source's start (queued ->
running, the 'preparing' phase it spent, the transfer's totals, the
source's event opened and its own recorded whole); its
post_live_migration_at_destination start takes the transfer's final
progress (running -> post-migrating) and its end closes the source's
event with its own. Unchained (an older compute or conductor) each host
writes its own statuses and events, as before.
"""
from nova_moves.moves.step import (ASK, CONDUCTOR, DEST, KEEP, RESEND,
                                   RESTART_UNDO, ROLL_BACK, S, SOURCE,
                                   guard, step)

TYPES = (S.LIVE_MIGRATION,)

# What the sweep asks after rolling a step back: the destination drops
# whatever it prepared (nothing when none was chosen yet).
_DEST_CLEANS_UP = (DEST, 'rollback_live_migration_at_destination')

STEPS = (
    # start: the source half parked on the migration (and a destination
    # whose pre-check failed dropped, with the same check); end: the
    # destination recorded, queued for the source.
    step('conductor.live_migrate_instance', CONDUCTOR,
         start=guard(S.M_ACCEPTED, KEEP, S.MIGRATING),
         end=guard(S.M_ACCEPTED, S.M_QUEUED, S.MIGRATING),
         allocations='park_source', sweep=ROLL_BACK,
         cleanup=_DEST_CLEANS_UP),
    # The source runs the migration from the queue to the destination's
    # take-over: its rollback (the one undo of every step after the
    # conductor's, aborted, failed or interrupted) accepts all of them.
    step('live_migration', SOURCE,
         start=guard(S.M_QUEUED, KEEP, S.MIGRATING),
         end=guard(S.M_QUEUED, S.M_PREPARING, S.MIGRATING),
         event='compute_live_migration', sweep=RESEND,
         restart=RESTART_UNDO, fails_from=S.LIVE_MIGRATION_IN_FLIGHT,
         cleanup=_DEST_CLEANS_UP),
    # start: the unchained guard (the source wrote 'preparing'); end: the
    # chained one, the source's start written by the destination.
    # 'older_conductor': the chained end when the conductor cannot write
    # it in one transaction (the source's 'preparing' written first).
    step('pre_live_migration', DEST,
         start=guard(S.M_PREPARING, KEEP, S.MIGRATING),
         end=guard(S.M_QUEUED, S.M_RUNNING, S.MIGRATING),
         event='compute_pre_live_migration', sweep=ASK,
         restart=RESTART_UNDO, cleanup=_DEST_CLEANS_UP,
         phases={'older_conductor': guard(S.M_PREPARING, S.M_RUNNING,
                                          S.MIGRATING)}),
    step('_transfer_guest', SOURCE,
         start=guard(S.M_PREPARING, S.M_RUNNING, S.MIGRATING),
         end=guard(S.M_RUNNING, S.M_POST_MIGRATING, S.MIGRATING),
         sweep=ASK, restart=RESTART_UNDO, cleanup=_DEST_CLEANS_UP,
         phases={'progress': guard(S.M_RUNNING, KEEP, S.MIGRATING)}),
    # Its start also ends a chained transfer (running, with the final
    # progress the source sent along); 'unchained_start': the source
    # wrote post-migrating itself.
    step('post_live_migration_at_destination', DEST,
         start=guard((S.M_RUNNING, S.M_POST_MIGRATING), S.M_POST_MIGRATING,
                     S.MIGRATING),
         end=guard(S.M_POST_MIGRATING, S.M_COMPLETED, S.MIGRATING, None),
         allocations='drop_source',
         event='compute_post_live_migration_at_destination', sweep=ASK,
         restart=RESTART_UNDO, cleanup=_DEST_CLEANS_UP,
         phases={'unchained_start': guard(S.M_POST_MIGRATING, KEEP,
                                          S.MIGRATING)}),
)

# Handlers that act on a running step rather than being one.
CONTROLS = ('live_migration_abort', 'live_migration_force_complete',
            'live_migration_status', 'rollback_live_migration_at_destination',
            'check_can_live_migrate_destination',
            'check_can_live_migrate_source')

# The guarded check of the controls that change a running step (one
# move_advance each, their event recorded whole in it): the source
# flags its running transfer only while the migration still is in one
# of these statuses; otherwise the cast is stale and nothing is written.
CONTROL_GUARDS = {
    'live_migration_abort': guard(S.LIVE_MIGRATION_ABORTABLE, KEEP,
                                  S.MIGRATING),
    'live_migration_force_complete': guard(S.M_RUNNING, KEEP, S.MIGRATING),
}

PARKED = ()

SHOWN = {S.MIGRATING: 'MIGRATING'}


def undo(migration, instance):
    """The server stays on its source; its progress goes back to 0."""
    return {'progress': 0}
