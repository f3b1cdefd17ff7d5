"""A server's life on its own host, as data: one row per lifecycle action
(no migration record; the server's task_state is the whole claim).

The API claims a row's ``task`` (compare-and-swap: task_state in
``takes_over``, vm_state in ``vm_states``) and casts ``method`` to the
server's host. The handler checks the claim before it touches the guest
(``accepts``: the task, or ``started`` once it wrote that), drives the
hypervisor (``operation``: from ``power_from`` to ``power_after``) and
ends with one compare-and-swap to ``end_values``. A hypervisor failure
writes ``failed_values`` (Nova's reverts_task_state, or ERROR for a
rebuild whose guest may be gone).

``recovery`` says what is done with a server found in one of the row's
task_states after its host restarted, or by the stuck-move sweep:
REDO the action on its host (its handler is re-entrant), SETTLE (the
task_state goes; vm_state follows the guest's real power, Nova's
"clearing task state" at start-up), or UNDO (``on_failure``: a boot
found stuck is ERROR, as Nova's). Policy names stay in the
API (api/lifecycle.py, power.py, shelve.py, rebuild.py).

Pure: imports only nova_moves.states.
"""
import collections

from nova_moves import states as S

REDO, SETTLE, UNDO = 'redo', 'settle', 'undo'

# vm_state / power_state "as the guest is" (a rebuild keeps a stopped
# server stopped; a settle reads the guest).
FROM_GUEST = '<from guest>'
# A hypervisor failure: the task_state goes, vm_state stays (Nova's
# reverts_task_state); ERROR: the guest may be gone (a failed rebuild).
GIVE_BACK = 'give_back'

Action = collections.namedtuple(
    'Action', 'name vm_states task takes_over method started power_from '
              'operation power_after vm_state power_state on_failure '
              'recovery')


def action(name, vm_states, task, method, operation, power_after, vm_state,
           power_state, power_from=None, started=None, takes_over=(None,),
           on_failure=GIVE_BACK, recovery=REDO):
    return Action(name, tuple(vm_states), task, tuple(takes_over), method,
                  started, power_from, operation, power_after, vm_state,
                  power_state, on_failure, recovery)


ACTIONS = (
    action('pause', (S.ACTIVE,), S.PAUSING, 'pause_instance', 'pause',
           'paused', S.PAUSED, S.POWER_PAUSED, power_from=('running',),
           recovery=SETTLE),
    action('unpause', (S.PAUSED,), S.UNPAUSING, 'unpause_instance',
           'unpause', 'running', S.ACTIVE, S.POWER_RUNNING,
           power_from=('paused',), recovery=SETTLE),
    action('suspend', (S.ACTIVE,), S.SUSPENDING, 'suspend_instance',
           'suspend', 'suspended', S.SUSPENDED, S.POWER_SUSPENDED,
           power_from=('running',), recovery=SETTLE),
    action('resume', (S.SUSPENDED,), S.RESUMING, 'resume_instance',
           'resume', 'running', S.ACTIVE, S.POWER_RUNNING,
           power_from=('suspended',), recovery=SETTLE),
    # A reboot found stuck is redone hard (Nova's _init_instance: a
    # reboot it cannot tell finished is retried as a hard one).
    action('reboot:SOFT', S.ALLOW_SOFT_REBOOT, S.REBOOTING,
           'reboot_instance', 'reboot', 'running', S.ACTIVE,
           S.POWER_RUNNING, power_from=('running',),
           started=S.REBOOT_STARTED),
    action('reboot:HARD', S.ALLOW_HARD_REBOOT, S.REBOOTING_HARD,
           'reboot_instance', 'reboot_hard', 'running', S.ACTIVE,
           S.POWER_RUNNING, started=S.REBOOT_STARTED_HARD,
           takes_over=S.ALLOW_REBOOT_TASK_STATES),
    action('os-start', (S.STOPPED,), S.POWERING_ON, 'start_instance',
           'power_on', 'running', S.ACTIVE, S.POWER_RUNNING),
    action('os-stop', (S.ACTIVE, S.ERROR), S.POWERING_OFF, 'stop_instance',
           'power_off', 'shutdown', S.STOPPED, S.POWER_SHUTDOWN),
    # Its end goes on to shelveOffload's task when [compute]
    # shelved_offload_time is 0 (OFFLOAD_AFTER).
    action('shelve', S.ALLOW_SHELVE, S.SHELVING, 'shelve_instance',
           'shelve', 'shutdown', S.SHELVED, S.POWER_SHUTDOWN),
    action('shelveOffload', S.ALLOW_SHELVE_OFFLOAD, S.SHELVING_OFFLOADING,
           'shelve_offload_instance', 'shelve_offload', None,
           S.SHELVED_OFFLOADED, S.POWER_SHUTDOWN),
    # From SHELVED the guest is powered on; from SHELVED_OFFLOADED the
    # conductor places it first (conductor/tasks/unshelve.py) and an
    # unshelve no host took is undone (UNSHELVE_UNDO).
    action('unshelve', S.ALLOW_UNSHELVE, S.UNSHELVING, 'unshelve_instance',
           'unshelve', 'running', S.ACTIVE, S.POWER_RUNNING),
    # A boot on its host (the conductor's BuildTask placed it, set
    # spawning and cast it). Found stuck it is ERROR (Nova's
    # _init_instance): the request it was built from is gone, there is
    # nothing to send again.
    action('create', (S.BUILDING,), S.SPAWNING, 'build_and_run_instance',
           'spawn', 'running', S.ACTIVE, S.POWER_RUNNING,
           takes_over=(S.SCHEDULING,), on_failure=S.ERROR, recovery=UNDO),
    action('rebuild', S.ALLOW_REBUILD, S.REBUILDING,
           'rebuild_instance_same_host', 'rebuild_spawn', FROM_GUEST,
           FROM_GUEST, FROM_GUEST, started=S.REBUILD_SPAWNING,
           on_failure=S.ERROR),
    # The guest boots a rescue image with its own disk attached second;
    # unrescue boots its own disk again. A failure is ERROR (Nova's: the
    # guest may be half in either). Both are redone after a restart of
    # the host: the driver's rescue is re-entrant and keeps the rescue
    # image it was given (none recorded: the server's own image).
    action('rescue', S.ALLOW_RESCUE, S.RESCUING, 'rescue_instance',
           'rescue', 'running', S.RESCUED, S.POWER_RUNNING,
           on_failure=S.ERROR),
    action('unrescue', (S.RESCUED,), S.UNRESCUING, 'unrescue_instance',
           'unrescue', 'running', S.ACTIVE, S.POWER_RUNNING,
           on_failure=S.ERROR),
)

BY_NAME = {a.name: a for a in ACTIONS}
OFFLOAD_AFTER = {'shelve': 'shelveOffload'}

# A guest that stopped on its own (compute/guest_watch.py): no task, the
# vm_states it may be found in, and what the server becomes.
GUEST_STOPPED = action('guest_stopped', (S.ACTIVE, S.PAUSED), None, None,
                       None, 'shutdown', S.STOPPED, S.POWER_SHUTDOWN,
                       recovery=None)

# changePassword: the API claims it and gives the claim back at once (a
# fake guest has no agent to set a password through): no compute part,
# nothing to recover.
CHANGE_PASSWORD = action('changePassword', (S.ACTIVE,), S.UPDATING_PASSWORD,
                         None, None, None, S.ACTIVE, None, recovery=None)

# Every task_state a lifecycle action sets -> its row.
BY_TASK = {}
for _a in ACTIONS:
    for _t in (_a.task, _a.started):
        if _t is not None:
            BY_TASK.setdefault(_t, _a)
TASK_STATES = tuple(sorted(BY_TASK))

# The conductor's part of an unshelve (conductor/tasks/unshelve.py): it
# places a server in these vm_states, under the row's task_state.
UNSHELVE_PLACES = (S.SHELVED_OFFLOADED,)
# A boot whose spawn failed with alternates left: back to the conductor.
BUILD_RESCHEDULE = {'task_state': S.SCHEDULING, 'host': None, 'node': None}
# What an unshelve of an offloaded server that no host took goes back to.
UNSHELVE_UNDO = {'vm_state': S.SHELVED_OFFLOADED, 'task_state': None,
                 'host': None, 'node': None}

# Nova's vm_state of a guest found in each power state (a settle).
VM_STATE_OF_POWER = {'running': S.ACTIVE, 'paused': S.PAUSED,
                     'suspended': S.SUSPENDED, 'shutdown': S.STOPPED}
POWER_STATE_OF = {'running': S.POWER_RUNNING, 'paused': S.POWER_PAUSED,
                  'suspended': S.POWER_SUSPENDED,
                  'shutdown': S.POWER_SHUTDOWN, None: S.POWER_NOSTATE}
_POWER_OF_STATE = {v: k for k, v in POWER_STATE_OF.items() if k}


# A self-fenced guest brought back (compute/fence.py): the server is
# claimed as the unpause or start of its guest would claim it (by
# fence_action), from a vm_state whose guest runs (a resized server
# waiting for its confirmation runs as an active one does), so no
# evacuation or action is accepted meanwhile; the end clears the claim
# and keeps the vm_state.
UNFENCE_VM_STATES = (S.ACTIVE, S.RESIZED)
UNFENCE_CLAIM = {'pause': BY_NAME['unpause'].task,
                 'stop': BY_NAME['os-start'].task}


def row(name):
    return BY_NAME[name]


def reboot_row(reboot_type):
    return BY_NAME['reboot:' + reboot_type]


def accepts(name):
    """The task_states a handler of ``name`` finds its claim in: the
    API's, and (a redo) the one its own start wrote."""
    a = BY_NAME[name]
    return [t for t in (a.task, a.started) if t is not None]


def start_values(name):
    """The handler's first write (its claim taken over from the API's),
    or None when the row has none."""
    a = BY_NAME[name]
    return None if a.started is None else {'task_state': a.started}


def end_values(name, guest_power=None, offload=False):
    """The handler's last write; FROM_GUEST fields from ``guest_power``
    (the guest's power now: 'running', 'shutdown', ...)."""
    a = BY_NAME[name] if isinstance(name, str) else name
    values = {'task_state': None}
    if offload and a.name in OFFLOAD_AFTER:
        values['task_state'] = BY_NAME[OFFLOAD_AFTER[a.name]].task
    values['vm_state'] = (VM_STATE_OF_POWER.get(guest_power, a.vm_states[0])
                          if a.vm_state == FROM_GUEST else a.vm_state)
    values['power_state'] = (POWER_STATE_OF.get(guest_power)
                             if a.power_state == FROM_GUEST
                             else a.power_state)
    if a.name == 'shelveOffload':  # the host is given up with the guest
        values.update(host=None, node=None)
    return values


def failed_values(name, power_state=None):
    """What a hypervisor failure writes (after its fault)."""
    a = BY_NAME[name]
    if a.on_failure == GIVE_BACK:
        return {'task_state': None}
    values = {'vm_state': a.on_failure, 'task_state': None}
    if power_state is not None:
        values['power_state'] = power_state
    return values


def settle_values(power_state, vm_state):
    """A SETTLE: task_state goes, vm_state from the guest's real power
    (``power_state``, Nova's number; no guest: ``vm_state`` kept)."""
    power = _POWER_OF_STATE.get(power_state)
    values = {'task_state': None, 'power_state': power_state}
    if power is not None:
        values['vm_state'] = VM_STATE_OF_POWER[power]
    else:
        values['vm_state'] = vm_state
    return values


def recovery_of(task_state):
    """(row, what to do) for a server found in ``task_state``; None when
    no lifecycle action sets it."""
    a = BY_TASK.get(task_state)
    return None if a is None else (a, a.recovery)
