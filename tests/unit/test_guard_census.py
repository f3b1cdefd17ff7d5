"""The census of hand-written guards: no guarded write outside the step
tables (nova_moves/moves) names a state of a move kind. A guarded write
is a call of move_start / move_advance / move_failed / instance_update /
migration_update / settle_start (or the thin wrappers around them) with
a check argument (expected_status, expected_task_state,
expected_vm_state, status, task_state, task_states, or a positional
argument); a literal there (``states.M_QUEUED``, ``states.MIGRATING``)
is a guard written twice, once in a table and once in a handler, which
drift apart. Ask the row instead (moves.guard_of, fail_guard,
claim_fail_guard, request_task_state, control_guard).

move_failed's ``status`` is its outcome (failed, error, cancelled: the
cause decides), not a check, so it is not counted."""
import ast
import pathlib

import fixtures
import testtools

from nova_moves import moves
from nova_moves.moves import lifecycle
from nova_moves import states

ROOT = pathlib.Path(moves.__file__).parent.parent

# The calls that write under a guard (and the handlers' wrappers).
GUARDED = {'move_start', 'move_advance', 'move_failed', '_advance',
           '_move_failed', 'instance_update', '_update', 'migration_update',
           'settle_start', 'cold_move_start', '_set_status', '_guard',
           '_claim_cas', 'start_move', 'claim_task_state', 'abandon_move',
           'release_task_state'}
CHECKS = {'expected_status', 'expected_task_state', 'expected_vm_state',
          'status', 'task_state', 'task_states', 'expected'}
OUTCOMES = {('move_failed', 'status'), ('_move_failed', 'status')}

NOT_MOVE_KINDS = set()


def _move_state_names():
    """The names in nova_moves.states of every state a move table
    names."""
    named = set()
    for kind in moves.KINDS:
        guards = [g for s in kind.STEPS for g in s.guards()]
        guards += list(getattr(kind, 'CONTROL_GUARDS', {}).values())
        for g in guards:
            named |= set(g.status) | set(g.task or ()) | set(
                g.vm_state or ()) | {g.to_status, g.to_task}
    # The lifecycle table (no migration record): its claims and ends.
    for a in lifecycle.ACTIONS + (lifecycle.GUEST_STOPPED,
                                  lifecycle.CHANGE_PASSWORD):
        named |= {a.task, a.started} | set(a.takes_over) | set(
            a.vm_states) | {a.vm_state}
    named -= {None, moves.KEEP, lifecycle.FROM_GUEST}
    return {k for k, v in vars(states).items()
            if isinstance(v, str) and v in named or
            isinstance(v, tuple) and v and set(v) <= named}


def _literal(value, names):
    return [n.attr for n in ast.walk(value)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
            and n.value.id == 'states' and n.attr in names]


def _patched(rel, node, names):
    """A derived guard patched by hand (``end['status'][0] =
    states.M_PREPARING``): a literal assigned into a guard's check."""
    out = []
    for target in node.targets:
        keys = {n.value for n in ast.walk(target)
                if isinstance(n, ast.Constant)}
        if isinstance(target, ast.Subscript) and keys & CHECKS:
            out += ['%s:%d patched %s=states.%s' % (
                rel, node.lineno, sorted(keys & CHECKS)[0], name)
                for name in _literal(node.value, names)]
    return out


def census(root=ROOT):
    """['path:line call arg=states.NAME'] of every literal guard."""
    names = _move_state_names()
    found = []
    for path in sorted((root / 'nova_moves').rglob('*.py')):
        rel = path.relative_to(root).as_posix()
        if rel.startswith('nova_moves/moves/') or rel in NOT_MOVE_KINDS:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign):
                found += _patched(rel, node, names)
                continue
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) \
                else getattr(func, 'id', None)
            if name not in GUARDED:
                continue
            args = [(k.arg, k.value) for k in node.keywords
                    if k.arg in CHECKS and (name, k.arg) not in OUTCOMES]
            args += [('#%d' % i, a) for i, a in enumerate(node.args)]
            for arg, value in args:
                for n in ast.walk(value):
                    if isinstance(n, ast.Attribute) and \
                            isinstance(n.value, ast.Name) and \
                            n.value.id == 'states' and n.attr in names:
                        found.append('%s:%d %s %s=states.%s' % (
                            rel, node.lineno, name, arg, n.attr))
    return found


class GuardCensusTest(testtools.TestCase):

    def test_no_literal_guard_outside_the_tables(self):
        self.assertEqual([], census())

    def test_the_census_sees_a_literal_guard(self):
        # It must be able to fail: a handler written the old way.
        tmp = pathlib.Path(self.useFixture(fixtures.TempDir()).path)
        (tmp / 'nova_moves' / 'compute').mkdir(parents=True)
        (tmp / 'nova_moves' / 'compute' / 'x.py').write_text(
            'def f(self, ctxt, uuid):\n'
            '    self._advance(ctxt, uuid, None,\n'
            '                  status=[states.M_QUEUED, states.M_PREPARING],'
            '\n                  task_state=[states.MIGRATING])\n'
            '    self._move_failed(ctxt, uuid, None, status=states.M_ERROR,'
            '\n                      expected_status=[states.M_REVERTING])\n'
            "    end['status'][0] = states.M_PREPARING\n")
        self.assertEqual(
            ['nova_moves/compute/x.py:2 _advance status=states.M_PREPARING',
             'nova_moves/compute/x.py:2 _advance status=states.M_QUEUED',
             'nova_moves/compute/x.py:2 _advance task_state=states.'
             'MIGRATING',
             'nova_moves/compute/x.py:5 _move_failed expected_status='
             'states.M_REVERTING',
             'nova_moves/compute/x.py:7 patched status=states.M_PREPARING'],
            sorted(census(tmp)))

