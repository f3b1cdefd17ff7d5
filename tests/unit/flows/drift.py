"""The drift check of the step tables (nova_moves/moves) against what the
flows do: a fixture records every guarded write of a move (db
move_advance and move_failed) an in-process flow makes -- its guard,
the migration and server before and after, refused or not -- and
``problems()`` checks each against the table of its kind:

- the guard is one the table holds (a row's start, end or phase, a
  control's, or a row's undo statuses for move_failed): a guard written
  by hand elsewhere is drift;
- no write of the flow is refused: in a flow that runs through, a
  refused guard means the table says the move is somewhere the
  handlers did not leave it;
- the migration's status and the server's task_state after the write
  are the ones the guard writes, and nothing else changes them on the
  side (``values`` with a status, ``instance_values`` with a
  task_state).

A shared fixture, not a test: tests/unit/flows/test_moves.py uses it.
"""
import threading

import fixtures

from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import moves

_GUARD_KEYS = ('status', 'task_state', 'expected_vm_state')


def _frozen(value):
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


def _guard_of(kwargs):
    return tuple((k, _frozen(kwargs[k])) for k in _GUARD_KEYS
                 if kwargs.get(k) is not None)


def table_guards(kind):
    """Every move_advance guard ``kind``'s table allows, frozen."""
    found = set()
    for s in kind.STEPS:
        guards = s.guards()
        if s.start is None:  # guard_of(..., 'start') of such a row
            guards.append(s.end._replace(to_status=moves.KEEP,
                                         to_task=moves.KEEP))
        for g in guards:
            found.add(_guard_of(g.kwargs()))
    for g in getattr(kind, 'CONTROL_GUARDS', {}).values():
        found.add(_guard_of(g.kwargs()))
    return found


def _state(migration_id):
    try:
        migration = db_api.migration_get(migration_id)
        instance = db_api.instance_get(migration['instance_uuid'])
    except exception.NotFound:
        return None
    return (migration['migration_type'], migration['status'],
            instance['task_state'])


class Write(dict):
    def __str__(self):
        return '%(call)s %(guard)s %(before)s -> %(after)s' % self


class GuardRecorder(fixtures.Fixture):
    """Records every move_advance / move_failed of a flow."""

    def _setUp(self):
        self.writes = []
        self._lock = threading.Lock()
        for name in ('move_advance', 'move_failed'):
            self.useFixture(fixtures.MonkeyPatch(
                'nova_moves.db.api.' + name,
                self._recording(name, getattr(db_api, name))))

    def _recording(self, name, real):
        def call(migration_id=None, **kwargs):
            if migration_id is None:  # a server-only undo: no table row
                return real(migration_id, **kwargs)
            before = _state(migration_id)
            write = Write(call=name, kwargs=kwargs, before=before,
                          refused=None, guard=_guard_of(kwargs)
                          if name == 'move_advance'
                          else kwargs.get('expected_status'))
            try:
                return real(migration_id, **kwargs)
            except exception.MoveConflict as exc:
                write['refused'] = str(exc)
                raise
            finally:
                write['after'] = _state(migration_id)
                with self._lock:
                    self.writes.append(write)
        return call

    def problems(self):
        return [p for w in list(self.writes) for p in _check(w)]

    def kinds(self):
        """The move kinds whose writes were seen."""
        return {moves.kind_of(w['before'][0]) for w in self.writes
                if w['before']}


def _check(write):
    if write['before'] is None:
        return []
    kind = moves.kind_of(write['before'][0])
    name = kind.__name__.rsplit('.', 1)[1]
    out = []
    if write['refused']:
        out.append('%s: refused (%s): %s' % (name, write['refused'],
                                               write))
    kwargs = write['kwargs']
    if write['call'] == 'move_failed':
        undo = {frozenset(s.undo_statuses()) for s in kind.STEPS}
        expected = kwargs.get('expected_status')
        if expected is not None and frozenset(expected) not in undo:
            out.append('%s: undo guard %s is no row\'s' % (name, expected))
        return out
    if write['guard'] not in table_guards(kind):
        out.append('%s: guard %s is in no row of the table: %s'
                   % (name, write['guard'], write))
    if 'status' in (kwargs.get('values') or {}) or \
            'task_state' in (kwargs.get('instance_values') or {}):
        out.append('%s: a status or task_state written beside the guard: '
                   '%s' % (name, write))
    if write['refused'] or write['after'] is None:
        return out
    status, task = kwargs.get('status'), kwargs.get('task_state')
    if status and len(status) == 2 and write['after'][1] != status[1]:
        out.append('%s: status after is not the guard\'s: %s'
                   % (name, write))
    if task and len(task) == 2 and write['after'][2] != task[1]:
        out.append('%s: task_state after is not the guard\'s: %s'
                   % (name, write))
    return out
