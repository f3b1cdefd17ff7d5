"""Every vm_state, task_state and migration status, and the sets built
from them, in one place: the API, the conductor, the computes and the
recovery sweep must agree on what "still moving" means."""

# --- vm_state (Nova's nova/compute/vm_states.py names)
ACTIVE = 'active'
BUILDING = 'building'
STOPPED = 'stopped'
PAUSED = 'paused'
RESIZED = 'resized'
ERROR = 'error'
DELETED = 'deleted'

# --- task_state (Nova's nova/compute/task_states.py names)
SCHEDULING = 'scheduling'
SPAWNING = 'spawning'
DELETING = 'deleting'
RESIZE_PREP = 'resize_prep'
RESIZE_MIGRATING = 'resize_migrating'
RESIZE_MIGRATED = 'resize_migrated'
RESIZE_FINISH = 'resize_finish'
RESIZE_REVERTING = 'resize_reverting'
RESIZE_CONFIRMING = 'resize_confirming'
MIGRATING = 'migrating'
REBUILDING = 'rebuilding'
REBUILD_BLOCK_DEVICE_MAPPING = 'rebuild_block_device_mapping'
REBUILD_SPAWNING = 'rebuild_spawning'
POWERING_ON = 'powering-on'
POWERING_OFF = 'powering-off'

# --- migration status
M_ACCEPTED = 'accepted'
M_QUEUED = 'queued'
M_PREPARING = 'preparing'
M_RUNNING = 'running'
M_PRE_MIGRATING = 'pre-migrating'
M_MIGRATING = 'migrating'
M_POST_MIGRATING = 'post-migrating'
M_FINISHED = 'finished'
M_CONFIRMING = 'confirming'
M_CONFIRMED = 'confirmed'
M_REVERTING = 'reverting'
M_REVERTED = 'reverted'
M_DONE = 'done'
M_COMPLETED = 'completed'
M_CANCELLED = 'cancelled'
M_ERROR = 'error'
M_FAILED = 'failed'

# --- migration types
RESIZE = 'resize'
MIGRATION = 'migration'
LIVE_MIGRATION = 'live-migration'
EVACUATION = 'evacuation'

# --- sets

# The two types a resize / cold migration writes.
COLD_MIGRATION_TYPES = (RESIZE, MIGRATION)

# A migration in one of these holds nothing any more; any other status
# (including the parked 'finished' resize and 'done' evacuation) may still
# hold the source half.
MIGRATION_TERMINAL_STATUSES = (M_CONFIRMED, M_REVERTED, M_ERROR, M_FAILED,
                               M_COMPLETED, M_CANCELLED)

# A migration in one of these is no longer moving the server: the terminal
# ones plus the parked states that wait for the user (finished) or for the
# dead source to return (done).
MIGRATION_SETTLED_STATUSES = MIGRATION_TERMINAL_STATUSES + (M_DONE,
                                                            M_FINISHED)

# Live migration statuses during which the migration can still be aborted
# (os-migrations DELETE, 2.24/2.65).
LIVE_MIGRATION_ABORTABLE = (M_QUEUED, M_PREPARING, M_RUNNING)

# A live migration in one of these still has a step to run: the abortable
# ones plus post-migrating (the copy is done, the destination is taking
# the server over; the point of no return is its one transaction that
# moves the server, drops the source half and completes the migration).
LIVE_MIGRATION_IN_FLIGHT = LIVE_MIGRATION_ABORTABLE + (M_POST_MIGRATING,)

# task_states of a resize / cold migration in flight.
RESIZE_TASK_STATES = (RESIZE_PREP, RESIZE_MIGRATING, RESIZE_MIGRATED,
                      RESIZE_FINISH)
