"""The conductors' concurrency gate: every move passes it before its
conductor does any work, and waits in ``queued`` while the cluster or its
source host is at its limit.

A move occupies a slot from its admission until its migration settles
(MIGRATION_SETTLED_STATUSES: completed, finished, done, error...). Every
decision is taken under one row update on ``move_limit_lock`` so two
conductors never both take the last slot; the queue is served in order,
except that a move whose source host is full does not hold up moves from
other hosts.
"""
import collections
import json

import sqlalchemy as sa

from nova_moves import exception
from nova_moves import states
from nova_moves.db import models
from nova_moves.db import phases
from nova_moves.db.session import _session, _to_dict, _tx, utcnow

__all__ = ['move_queue_enter', 'move_queue_admit', 'move_queue_get_all',
           'move_queue_waiting']

QUEUED = 'queued'
ADMITTED = 'admitted'
RELEASED = 'released'

# Core statements built once: every move passes the gate, and a pass
# runs whenever a move settles.
_bp = sa.bindparam
_QUEUE = models.MoveQueue.__table__
_MIGRATIONS = models.Migration.__table__
_LOCK_ROW = models.MoveLimitLock.__table__
_LOCK = _LOCK_ROW.update().where(_LOCK_ROW.c.id == 1).values(
    ticks=_LOCK_ROW.c.ticks + 1)
_ENTER = _QUEUE.insert().values(
    migration_uuid=_bp('v_migration'), instance_uuid=_bp('v_instance'),
    source_host=_bp('v_host'), kind=_bp('v_kind'), state=QUEUED,
    request=_bp('v_request'), created_at=_bp('v_now'))
# The slots held: admitted rows with their migration's status (NULL:
# deleted); _HELD_OR_MINE also any row of ``b_migration`` (a repeated
# delivery). The queue itself is read only when a slot is free, and only
# as far as the pass admits (_queued): a decision costs the limits' rows,
# not the queue's length.
_QUEUE_KEYS = dict.fromkeys(_QUEUE.c.keys())
_ROW_COLUMNS = (_QUEUE.c.id, _QUEUE.c.migration_uuid, _QUEUE.c.instance_uuid,
                _QUEUE.c.source_host, _QUEUE.c.kind, _QUEUE.c.state,
                _QUEUE.c.request, _QUEUE.c.created_at)
_HELD_FROM = _QUEUE.outerjoin(
    _MIGRATIONS, _MIGRATIONS.c.uuid == _QUEUE.c.migration_uuid)
_HELD = (sa.select(*_ROW_COLUMNS, _MIGRATIONS.c.status)
         .select_from(_HELD_FROM).where(_QUEUE.c.state == ADMITTED))
_HELD_OR_MINE = (sa.select(*_ROW_COLUMNS, _MIGRATIONS.c.status)
                 .select_from(_HELD_FROM)
                 .where(sa.or_(_QUEUE.c.state == ADMITTED,
                               _QUEUE.c.migration_uuid == _bp('b_migration'))))
_QUEUED_PAGE = 16
_QUEUED = (sa.select(*_ROW_COLUMNS)
           .where(_QUEUE.c.state == QUEUED, _QUEUE.c.id > _bp('b_after'))
           .order_by(_QUEUE.c.id).limit(_QUEUED_PAGE))
_RELEASE = _QUEUE.update().where(
    _QUEUE.c.id.in_(_bp('b_ids', expanding=True))).values(
    state=RELEASED, released_at=_bp('v_now'))
_ADMIT = _QUEUE.update().where(_QUEUE.c.id.in_(
    _bp('b_ids', expanding=True))).values(
    state=ADMITTED, admitted_at=_bp('v_now'), admitted_by=_bp('v_me'))
_ANY_QUEUED = sa.select(_QUEUE.c.id).where(
    _QUEUE.c.state == QUEUED).limit(1)
_PHASES_OF = sa.select(_MIGRATIONS.c.phases).where(
    _MIGRATIONS.c.uuid == _bp('b_uuid'))
_FLIP = _MIGRATIONS.update().where(
    _MIGRATIONS.c.uuid == _bp('b_uuid'),
    _MIGRATIONS.c.status == _bp('b_status')).values(
    status=_bp('v_status'), updated_at=_bp('v_now'),
    phases=_bp('v_phases'))


def _lock(session):
    """Serialise gate decisions: the row lock is held to commit."""
    if session.execute(_LOCK).rowcount == 0:
        # A schema made without the migration's row.
        session.execute(_LOCK_ROW.insert().values(id=1, ticks=1))


def _flip(session, migration_uuid, expected, new):
    """Compare-and-swap a migration's status (its phase stamped in the
    same write); False when it moved on."""
    current = session.execute(_PHASES_OF, {'b_uuid': migration_uuid}).scalar()
    now = utcnow()
    return session.execute(_FLIP, {
        'b_uuid': migration_uuid, 'b_status': expected, 'v_status': new,
        'v_now': now, 'v_phases': phases.stamp(current, new, now)},
    ).rowcount == 1


def _queued(session, fresh):
    """The queued rows in order, a page at a time, then ``fresh`` (the
    row the caller just queued, a dict with its id, or None)."""
    after = 0
    while True:
        page = session.execute(_QUEUED, {'b_after': after}).all()
        for row in page:
            if fresh is not None and row.id >= fresh.id:
                break
            yield row
        else:
            if len(page) == _QUEUED_PAGE:
                after = page[-1].id
                continue
        break
    if fresh is not None:
        yield fresh


def _admit_pass(session, cluster_limit, host_limit, me, fresh=None,
                held=None):
    """Release the slots of settled moves, then admit queued moves in
    order while there is room. Returns the rows admitted (dicts).
    ``held``: the admitted rows (_HELD), when the caller has read them;
    ``fresh``: the row the caller just queued (a dict with its id)."""
    now = utcnow()
    per_host = collections.Counter()
    total = 0
    released = []
    if held is None:
        held = session.execute(_HELD).all()
    for row in held:
        if row.status in (None,) + states.MIGRATION_SETTLED_STATUSES:
            released.append(row.id)
        else:
            total += 1
            per_host[row.source_host] += 1
    admitted = []
    if total < cluster_limit:
        for row in _queued(session, fresh):
            if total >= cluster_limit:
                break
            if row.source_host and per_host[row.source_host] >= host_limit:
                continue
            if row is not fresh:
                resume = json.loads(row.request or '{}').get(
                    'resume_status')
                if not _flip(session, row.migration_uuid, states.M_QUEUED,
                             resume):
                    # Deleted, aborted or failed while it waited.
                    released.append(row.id)
                    continue
            admitted.append(row)
            total += 1
            per_host[row.source_host] += 1
    if released:
        session.execute(_RELEASE, {'b_ids': released, 'v_now': now})
    if not admitted:
        return []
    session.execute(_ADMIT, {'b_ids': [r.id for r in admitted],
                             'v_now': now, 'v_me': me})
    # The rows as now written, without reading them back.
    return [dict(_QUEUE_KEYS, **dict(_written(r), state=ADMITTED,
                                     admitted_at=now.isoformat(),
                                     admitted_by=me))
            for r in admitted]


def _written(row):
    values = row if isinstance(row, dict) else row._mapping
    return {key: value.isoformat() if hasattr(value, 'isoformat') else value
            for key, value in values.items() if key in _QUEUE_KEYS}


def move_queue_enter(migration_uuid, instance_uuid, source_host, kind,
                     request, from_status, cluster_limit, host_limit, me):
    """A move arrives at the gate. Returns {'admitted': bool, 'others':
    [rows admitted meanwhile, for the caller to run]}. A move that must
    wait has its migration compare-and-swapped ``from_status`` ->
    queued in the same transaction (MoveConflict, nothing written, when
    it moved on). A repeated delivery finds its row and is admitted
    only if the row already was."""
    with _tx() as session:
        return enter_in(session, migration_uuid, instance_uuid, source_host,
                        kind, request, from_status, cluster_limit,
                        host_limit, me)


def enter_in(session, migration_uuid, instance_uuid, source_host, kind,
             request, from_status, cluster_limit, host_limit, me,
             unwritten=False):
    """move_queue_enter in the caller's transaction (a cold move's start
    passes the gate in the transaction that creates its migration).
    ``unwritten``: the caller writes the migration after this, in the
    answer's ``status``: there is no row to compare-and-swap yet."""
    _lock(session)
    # One read for both questions: is this move already at the gate,
    # and who holds the slots.
    held = session.execute(_HELD_OR_MINE,
                           {'b_migration': migration_uuid}).all()
    for row in held:
        if row.migration_uuid == migration_uuid:
            return _answer(row.state == ADMITTED, [], from_status)
    now = utcnow()
    values = {'migration_uuid': migration_uuid,
              'instance_uuid': instance_uuid, 'source_host': source_host,
              'kind': kind, 'state': QUEUED,
              'request': json.dumps(dict(request,
                                         resume_status=from_status)),
              'created_at': now}
    fresh_id = session.execute(_ENTER, {
        'v_migration': migration_uuid, 'v_instance': instance_uuid,
        'v_host': source_host, 'v_kind': kind,
        'v_request': values['request'], 'v_now': now,
    }).inserted_primary_key[0]
    fresh = _Row(values, id=fresh_id, created_at=now.isoformat())
    admitted = _admit_pass(session, cluster_limit, host_limit, me,
                           fresh=fresh, held=held)
    mine = [r for r in admitted if r['migration_uuid'] == migration_uuid]
    answer = _answer(bool(mine), [r for r in admitted if r not in mine],
                     from_status)
    if not (mine or unwritten) and not _flip(
            session, migration_uuid, from_status, answer['status']):
        raise exception.MoveConflict(
            migration=migration_uuid, instance_uuid=instance_uuid,
            reason='migration is no longer %s' % from_status)
    return answer


def _answer(admitted, others, from_status):
    """The gate's answer: whether the move runs now, the other moves
    this pass admitted, and the status its migration is in once it
    passed the gate (queued while it waits)."""
    return {'admitted': admitted, 'others': others,
            'status': from_status if admitted else states.M_QUEUED}


class _Row(dict):
    """A queue row written in this transaction, read like a result row."""

    def __init__(self, values, **more):
        super().__init__(values, **more)
        self.__dict__ = self


def move_queue_admit(cluster_limit, host_limit, me, waiting=False):
    """The periodic pass of a conductor: the rows it admitted (and must
    now run). ``waiting``: the caller knows moves wait (its last pass
    admitted one, or it queued one), so the read that spares an idle
    cluster the write lock would only cost a transaction."""
    if not waiting:
        with _tx(writer=False) as session:
            # An idle cluster costs a read per pass, not a write lock.
            if session.execute(_ANY_QUEUED).first() is None:
                return []
    with _tx() as session:
        _lock(session)
        return _admit_pass(session, cluster_limit, host_limit, me)


def move_queue_get_all(state=None, migration_uuids=None):
    with _session(writer=False) as session:
        query = sa.select(models.MoveQueue).order_by(models.MoveQueue.id)
        if state:
            query = query.where(models.MoveQueue.state == state)
        if migration_uuids is not None:
            query = query.where(models.MoveQueue.migration_uuid.in_(
                list(migration_uuids)))
        return [_to_dict(r) for r in session.scalars(query)]


def move_queue_waiting():
    """The migration uuids waiting at the gate: not stuck, only queued
    (the stuck-move sweep leaves them alone)."""
    with _session(writer=False) as session:
        return set(session.scalars(sa.select(
            models.MoveQueue.migration_uuid).where(
                models.MoveQueue.state == QUEUED)))
