"""Moves as data: one step table per move kind (cold.py: resize and cold
migration with confirm and revert; live.py; evacuate.py), and what is
derived from them, here and nowhere else:

- the guards of the compute handlers (guard_of: move_advance's
  compare-and-swap arguments for a step's start or end);
- move_failed's undo (MOVE_TASK_STATES, UNSETTLED, failed_instance_values);
- the stuck-move sweep (sweep_step) and a restarted host's recovery
  (restart_step);
- the API's server status for a move's task_state (shown_status);
- the 1.0-compat translation (conductor/compat.py uses the same names).

Pure: no SQL, no RPC; imports only nova_moves.states. A new step is one
table row plus its handler; tests/unit/test_move_tables.py walks every
table against the handlers.
"""
from nova_moves.moves import cold
from nova_moves.moves import cross_cell
from nova_moves.moves import evacuate
from nova_moves.moves import live
from nova_moves.moves import step as _step
from nova_moves import states

KINDS = (cold, live, evacuate, cross_cell)
BY_TYPE = {t: kind for kind in KINDS for t in kind.TYPES}

Step = _step.Step
KEEP = _step.KEEP
SOURCE, DEST, CONDUCTOR = _step.SOURCE, _step.DEST, _step.CONDUCTOR
RESEND, ASK, ROLL_BACK = _step.RESEND, _step.ASK, _step.ROLL_BACK
REDRIVE = _step.REDRIVE
RESTART_UNDO, RESTART_REDO = _step.RESTART_UNDO, _step.RESTART_REDO


def _guards(kind):
    for s in kind.STEPS:
        yield from s.guards()


def kind_of(migration_type):
    return BY_TYPE[migration_type]


def kind_of_migration(migration):
    """The table of a migration (a dict): a cross-cell move's has the
    cold move's types and ``cross_cell_move`` set."""
    if migration.get('cross_cell_move'):
        return cross_cell
    return BY_TYPE[migration['migration_type']]


def step_named(kind, name):
    for s in kind.STEPS:
        if s.name == name:
            return s
    raise KeyError(name)


def guard_of(kind, name, phase='end'):
    """move_advance's arguments for ``name``'s ``phase`` ('start', 'end'
    or one of the row's ``phases``): the guard, and at the end (or an
    'end_*' phase) the step's allocation change; the start of a step
    with none is its end's check with nothing written."""
    s = step_named(kind, name)
    g = getattr(s, phase) if phase in ('start', 'end') else s.phases[phase]
    if g is None:
        g = s.end._replace(to_status=KEEP, to_task=KEEP)
    kwargs = g.kwargs()
    # A step's allocation change goes with its end, and with a phase
    # named 'end_*' (another way the step ends).
    ends = phase == 'end' or phase.startswith('end_')
    if ends and s.allocations and s.host != CONDUCTOR:
        kwargs['allocations'] = {'op': s.allocations}
    return kwargs


def fail_guard(kind, name):
    """move_failed's check for the undo of step ``name``: the migration
    statuses it may be undone in (the row's ``fails_from``, else the
    statuses its guards accept)."""
    return {'expected_status': list(step_named(kind, name).undo_statuses())}


def claim_fail_guard(kind, name):
    """move_failed's check for the undo of a conductor's step that never
    made its migration: the server's task_state its row names."""
    return {'task_states': list(step_named(kind, name).end.task)}


def request_task_state(kind):
    """The task_state the API's move_start gives the server (None -> it):
    the one the kind's conductor row checks."""
    [row] = [s for s in kind.STEPS if s.host == CONDUCTOR]
    [task] = row.end.task
    return task


def control_guard(kind, name):
    """move_advance's arguments for a control of a running step (a live
    migration's abort or force-complete): its check, nothing written."""
    return kind.CONTROL_GUARDS[name].kwargs()


# The task_states each type of move sets on its server: move_failed
# only clears one of these.
MOVE_TASK_STATES = {
    t: tuple(sorted(set().union(*(g.task_states()
                                  for g in _guards(kind)))))
    for kind in KINDS for t in kind.TYPES}

# A migration in one of these may still hold something to give back:
# every status a step names, but the terminal and the parked ones.
UNSETTLED = tuple(sorted(
    {st for kind in KINDS for g in _guards(kind)
     for st in g.status + ((g.to_status,) if g.to_status != KEEP else ())}
    - set(states.MIGRATION_TERMINAL_STATUSES)
    - {p for kind in KINDS for p in kind.PARKED}))


# What the stuck-move sweep lists: the statuses a compute step that the
# sweep acts on accepts. A conductor's own step is found by its server's
# task_state instead (conductor/recovery.py), so 'accepted' (the API's
# migration, its cast possibly still queued) is not swept by status.
SWEPT = tuple(sorted(
    {st for kind in KINDS for s in kind.STEPS
     if s.sweep is not None and s.host != CONDUCTOR
     for g in (s.start, s.end) if g is not None for st in g.status}))


def failed_instance_values(migration, instance):
    """Where move_failed puts the server back (migration and server as
    dicts): the kind's undo values."""
    return kind_of_migration(migration).undo(migration, instance)


def sweep_step(migration_type, status, task_state, done=lambda name: False):
    """The step a stalled move is at: the first row of its table that
    accepts (status, task_state). ``done(name)`` says whether a step is
    over: 'conductor' (it chose the destination; until then only the
    conductor's row applies), or a step another waits for (``after``).
    None when no row applies."""
    conductor_done = done('conductor')
    waited_for = {s.after for s in kind_of(migration_type).STEPS
                  if s.after}
    for s in kind_of(migration_type).STEPS:
        if not s.accepts(status, task_state):
            continue
        if s.host == CONDUCTOR:
            if conductor_done:
                continue
            return s
        if not conductor_done:
            return None
        if s.name in waited_for and done(s.name):
            continue
        if s.after and not done(s.after):
            continue
        return s
    return None


def restart_step(migration_type, status, task_state, roles,
                 done=lambda name: False):
    """The step a restarted host (``roles``: SOURCE and/or DEST) was
    running for a move in (status, task_state), and its table says what
    to do about it (``restart``); None when the step is another host's,
    has nothing to do, or was never started (its cast is still queued
    and runs it)."""
    s = sweep_step(migration_type, status, task_state, done)
    if s is None or s.host not in roles or s.restart is None:
        return None
    if s.restart == RESTART_UNDO and s.start is not None and \
            s.start.to_task not in (KEEP, task_state):
        return None
    return s


def restart_statuses(kind):
    """The statuses of the steps a restart acts on (what a restarting
    host lists)."""
    return {st for s in kind.STEPS if s.restart
            for g in (s.start, s.end) if g is not None for st in g.status}


SHOWN = {task: shown for kind in KINDS for task, shown in kind.SHOWN.items()}


def shown_status(vm_state, task_state):
    """The API's server status while a move's step runs; None when
    ``task_state`` is no move's (the view decides from vm_state)."""
    if vm_state in (states.ERROR, states.DELETED, states.BUILDING):
        return None
    return SHOWN.get(task_state)


# An evacuation under way (the statuses its conductor and its
# destination's rebuild run in): a rebuilding server is then the
# evacuation's, not a same-host rebuild (moves/lifecycle.py's row).
EVACUATING = frozenset(
    st for s in evacuate.STEPS if s.host != SOURCE
    for g in (s.start, s.end) if g is not None for st in g.status)
