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
from nova_moves.db.session import _session, _to_dict, utcnow

__all__ = ['move_queue_enter', 'move_queue_admit', 'move_queue_get_all',
           'move_queue_waiting']

QUEUED = 'queued'
ADMITTED = 'admitted'
RELEASED = 'released'


def _lock(session):
    """Serialise gate decisions: the row lock is held to commit."""
    result = session.execute(
        sa.update(models.MoveLimitLock).where(models.MoveLimitLock.id == 1)
        .values(ticks=models.MoveLimitLock.ticks + 1))
    if result.rowcount == 0:  # a schema made without the migration's row
        session.add(models.MoveLimitLock(id=1, ticks=1))
        session.flush()


def _flip(session, migration_uuid, expected, new):
    """Compare-and-swap a migration's status (its phase stamped in the
    same write); False when it moved on."""
    current = session.scalars(sa.select(models.Migration.phases).where(
        models.Migration.uuid == migration_uuid)).first()
    now = utcnow()
    return session.execute(
        sa.update(models.Migration)
        .where(models.Migration.uuid == migration_uuid,
               models.Migration.status == expected)
        .values(status=new, updated_at=now,
                phases=phases.stamp(current, new, now))).rowcount == 1


def _admit_pass(session, cluster_limit, host_limit, me, fresh=None):
    """Release the slots of settled moves, then admit queued moves in
    order while there is room. Returns the rows admitted (dicts)."""
    now = utcnow()
    admitted = session.scalars(sa.select(models.MoveQueue).where(
        models.MoveQueue.state == ADMITTED)).all()
    status = dict(session.execute(
        sa.select(models.Migration.uuid, models.Migration.status).where(
            models.Migration.uuid.in_([r.migration_uuid for r in admitted])))
        .all()) if admitted else {}
    per_host = collections.Counter()
    total = 0
    for row in admitted:
        if status.get(row.migration_uuid) in (
                None,) + states.MIGRATION_SETTLED_STATUSES:
            row.state, row.released_at = RELEASED, now
            continue
        total += 1
        per_host[row.source_host] += 1
    result = []
    for row in session.scalars(sa.select(models.MoveQueue).where(
            models.MoveQueue.state == QUEUED).order_by(models.MoveQueue.id)):
        if total >= cluster_limit:
            break
        if row.source_host and per_host[row.source_host] >= host_limit:
            continue
        if row.migration_uuid != fresh:
            resume = json.loads(row.request or '{}').get('resume_status')
            if not _flip(session, row.migration_uuid, states.M_QUEUED,
                         resume):
                # Deleted, aborted or failed while it waited.
                row.state, row.released_at = RELEASED, now
                continue
        row.state, row.admitted_at, row.admitted_by = ADMITTED, now, me
        total += 1
        per_host[row.source_host] += 1
        result.append(row)
    session.flush()
    return [_to_dict(r) for r in result]


def move_queue_enter(migration_uuid, instance_uuid, source_host, kind,
                     request, from_status, cluster_limit, host_limit, me):
    """A move arrives at the gate. Returns {'admitted': bool, 'others':
    [rows admitted meanwhile, for the caller to run]}. A move that must
    wait has its migration compare-and-swapped ``from_status`` ->
    queued in the same transaction (MoveConflict, nothing written, when
    it moved on). A repeated delivery finds its row and is admitted
    only if the row already was."""
    with _session() as session:
        _lock(session)
        row = session.scalars(sa.select(models.MoveQueue).where(
            models.MoveQueue.migration_uuid == migration_uuid)).first()
        if row is not None:
            return {'admitted': row.state == ADMITTED, 'others': []}
        session.add(models.MoveQueue(
            migration_uuid=migration_uuid, instance_uuid=instance_uuid,
            source_host=source_host, kind=kind, state=QUEUED,
            request=json.dumps(dict(request, resume_status=from_status)),
            created_at=utcnow()))
        session.flush()
        rows = _admit_pass(session, cluster_limit, host_limit, me,
                           fresh=migration_uuid)
        mine = [r for r in rows if r['migration_uuid'] == migration_uuid]
        if not mine and not _flip(session, migration_uuid, from_status,
                                  states.M_QUEUED):
            raise exception.MoveConflict(
                migration=migration_uuid, instance_uuid=instance_uuid,
                reason='migration is no longer %s' % from_status)
        return {'admitted': bool(mine),
                'others': [r for r in rows if not mine or r is not mine[0]]}


def move_queue_admit(cluster_limit, host_limit, me):
    """The periodic pass of a conductor: the rows it admitted (and must
    now run)."""
    with _session(writer=False) as session:
        # An idle cluster costs a read per pass, not a write lock.
        if session.scalars(sa.select(models.MoveQueue.id).where(
                models.MoveQueue.state == QUEUED).limit(1)).first() is None:
            return []
    with _session() as session:
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
