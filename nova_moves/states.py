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
SUSPENDED = 'suspended'
SHELVED = 'shelved'
SHELVED_OFFLOADED = 'shelved_offloaded'
RESCUED = 'rescued'

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
PAUSING = 'pausing'
UNPAUSING = 'unpausing'
SUSPENDING = 'suspending'
RESUMING = 'resuming'
REBOOTING = 'rebooting'
REBOOT_PENDING = 'reboot_pending'
REBOOT_STARTED = 'reboot_started'
REBOOTING_HARD = 'rebooting_hard'
REBOOT_PENDING_HARD = 'reboot_pending_hard'
REBOOT_STARTED_HARD = 'reboot_started_hard'
SHELVING = 'shelving'
SHELVING_OFFLOADING = 'shelving_offloading'
UNSHELVING = 'unshelving'
UPDATING_PASSWORD = 'updating_password'
RESCUING = 'rescuing'
UNRESCUING = 'unrescuing'

# --- power_state (Nova's nova/compute/power_state.py values)
POWER_NOSTATE = 0
POWER_RUNNING = 1
POWER_PAUSED = 3
POWER_SHUTDOWN = 4
POWER_CRASHED = 6
POWER_SUSPENDED = 7

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

# --- lifecycle actions (Nova's vm_states.ALLOW_* / task_states.ALLOW_*)
ALLOW_SOFT_REBOOT = (ACTIVE,)
ALLOW_HARD_REBOOT = (ACTIVE, STOPPED, PAUSED, SUSPENDED, ERROR)
# A hard reboot may take over these task_states (a stuck soft reboot, a
# pause or suspend that never finished); anything else is a 409.
ALLOW_REBOOT_TASK_STATES = (None, REBOOTING, REBOOT_PENDING, REBOOT_STARTED,
                            RESUMING, REBOOTING_HARD, UNPAUSING, PAUSING,
                            SUSPENDING)
SOFT_REBOOT_TASK_STATES = (REBOOTING, REBOOT_PENDING, REBOOT_STARTED)
HARD_REBOOT_TASK_STATES = (REBOOTING_HARD, REBOOT_PENDING_HARD,
                           REBOOT_STARTED_HARD)
ALLOW_REBUILD = (ACTIVE, STOPPED, ERROR)
# vm_states os-resetState may set (Nova's body enum).
RESET_VM_STATES = (ACTIVE, ERROR)
# shelve / shelveOffload / unshelve (Nova's check_instance_state lists).
ALLOW_SHELVE = (ACTIVE, STOPPED, PAUSED, SUSPENDED)
ALLOW_SHELVE_OFFLOAD = (SHELVED,)
ALLOW_UNSHELVE = (SHELVED, SHELVED_OFFLOADED)
# rescue (Nova's check_instance_state; unrescue: RESCUED only).
ALLOW_RESCUE = (ACTIVE, STOPPED, ERROR)
# Where each move may start from (Nova's check_instance_state lists).
ALLOW_RESIZE = (ACTIVE, STOPPED)
ALLOW_LIVE_MIGRATE = (ACTIVE, PAUSED)
ALLOW_EVACUATE = (ACTIVE, STOPPED, ERROR)


def vm_state_after_resize(power_state):
    """A resized server remembers whether it was stopped through its
    power state (kept off through the move when it was)."""
    return STOPPED if power_state == POWER_SHUTDOWN else ACTIVE
