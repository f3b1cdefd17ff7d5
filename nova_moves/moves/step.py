"""What one row of a move's step table says (see __init__.py).

A Guard is one compare-and-swap of a step: the migration status and the
server's task_state it accepts, and what it writes. ``KEEP`` leaves a
value as it is; a task_state check of ``None`` accepts any task_state.
"""
import collections

from nova_moves import states

KEEP = '<keep>'

# Who runs a step: the compute on either end, or a conductor.
SOURCE, DEST, CONDUCTOR = 'source', 'dest', 'conductor'

# What the stuck-move sweep does with a step that stalled:
RESEND = 'resend'        # ask its host; still running: wait; else re-send
ASK = 'ask'              # ask its host; still running: wait; else undo
ROLL_BACK = 'roll_back'  # nothing to re-send (its conductor died): undo
# A conductor's own flow past the point of no return (a cross-cell
# confirm or revert, every part re-entrant): another conductor runs it
# again from its start.
REDRIVE = 'redrive'

# What a restart of the step's host does with a step it was running:
RESTART_UNDO = 'undo'      # roll the move back
RESTART_REDO = 'redo'      # run the step again (it is re-entrant)
RESTART_NONE = None        # a queued cast re-runs it, or the other host


class Guard(collections.namedtuple(
        'Guard', 'status to_status task to_task vm_state')):
    """One guarded write: migration ``status`` in the tuple -> ``to_status``
    (KEEP), server ``task`` in the tuple (None: unchecked) -> ``to_task``
    (KEEP; None clears it), server vm_state in ``vm_state`` (None:
    unchecked)."""

    def accepts(self, status, task_state):
        return status in self.status and (
            self.task is None or task_state in self.task)

    def kwargs(self):
        """The guard as move_advance's arguments."""
        out = {}
        status = list(self.status) if len(self.status) > 1 \
            else self.status[0]
        out['status'] = [status] if self.to_status == KEEP \
            else [status, self.to_status]
        if self.task is not None:
            task = list(self.task) if len(self.task) > 1 else self.task[0]
            out['task_state'] = [task] if self.to_task == KEEP \
                else [task, self.to_task]
        if self.vm_state:
            out['expected_vm_state'] = list(self.vm_state)
        return out

    def task_states(self):
        """Every task_state this guard names (the move's own)."""
        names = set(self.task or ()) - {None}
        if self.to_task not in (KEEP, None):
            names.add(self.to_task)
        return names


def _as_tuple(value):
    return value if isinstance(value, tuple) or value is None else (value,)


def guard(status, to_status=KEEP, task=None, to_task=KEEP, vm_state=None):
    as_tuple = _as_tuple
    return Guard(as_tuple(status), to_status, as_tuple(task), to_task,
                 as_tuple(vm_state))


class Step(collections.namedtuple(
        'Step', 'name host start end allocations event sweep restart '
                'after phases fails_from undo cleanup')):
    """One step of a move.

    name        the handler (RPC method) that runs it
    host        SOURCE, DEST or CONDUCTOR
    start       its first guarded write (None: it writes only at its end)
    end         its last one
    allocations the allocation change of its end (db move_advance op)
    event       its instance-action event name
    sweep       RESEND, ASK, ROLL_BACK, REDRIVE: what the stuck-move sweep does
    restart     RESTART_*: what a restart of its host does
    after       a step of the same statuses that must be done first (the
                revert's source half runs once the destination's is done)
    phases      {name: Guard}: its other guarded writes (a conductor's
                intermediate write, the unchained form of a chained
                write, the request that starts it), for guard_of
    fails_from  the migration statuses its undo (move_failed) accepts;
                None: every status its guards accept
    undo        what a restart of its host runs to roll it back (a
                method of the kind's start-up class; RESTART_UNDO rows)
    cleanup     (SOURCE or DEST, compute RPC method): what the sweep asks
                that host to clean up after rolling the step back
    """

    def accepts(self, status, task_state):
        """True when a migration in ``status`` with the server in
        ``task_state`` is at this step (started or not)."""
        return any(g.accepts(status, task_state)
                   for g in (self.start, self.end) if g is not None)

    def guards(self):
        """Every guarded write of the step: start, end, its phases."""
        out = [g for g in (self.start, self.end) if g is not None]
        return out + list((self.phases or {}).values())

    def undo_statuses(self):
        """The migration statuses move_failed accepts for this step."""
        if self.fails_from is not None:
            return tuple(self.fails_from)
        seen = []
        for g in (self.start, self.end):
            for st in g.status if g is not None else ():
                if st not in seen:
                    seen.append(st)
        return tuple(seen)


def step(name, host, end, start=None, allocations=None, event=None,
         sweep=None, restart=RESTART_NONE, after=None, phases=None,
         fails_from=None, undo=None, cleanup=None):
    return Step(name, host, start, end, allocations, event, sweep, restart,
                after, phases, fails_from, undo, cleanup)


# Re-exported so a table reads as data.
S = states
