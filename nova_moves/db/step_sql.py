"""The migration's half of a move step (db/transitions.py move_advance):
one guarded UPDATE, the step's compare-and-swap.

Where the database returns rows from an UPDATE (PostgreSQL, SQLite) the
guard is the statement's WHERE and the row comes back from it: the
migration is not read first (a statement per step), only to explain a
refusal. MySQL and MariaDB read it first, as before.
"""
import functools
import json

import sqlalchemy as sa

from nova_moves import exception
from nova_moves import timeutil
from nova_moves.db import models
from nova_moves.db import phases
from nova_moves.db.session import (_id_or_uuid, _parse_time,
                                   _row_by_id_or_uuid, utcnow)

_MIGRATIONS = models.Migration.__table__
_bp = sa.bindparam


def _as_list(value):
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _in(column, name, count):
    """``column IN (:name_0, ...)`` with ``count`` plain parameters: an
    expanding parameter is re-rendered into the SQL at every execution
    (~25 us each, measured), these lists are short and few in length."""
    return column.in_([_bp('%s_%d' % (name, i)) for i in range(count)])


def _in_params(name, values):
    return {'%s_%d' % (name, i): v for i, v in enumerate(values)}


def _bound(values):
    return {'v_' + k: v for k, v in values.items()}


def _conflict(migration, reason):
    return exception.MoveConflict(migration=migration.uuid,
                                  instance_uuid=migration.instance_uuid,
                                  reason=reason)


def _migration_row(session, migration_id):
    return _row_by_id_or_uuid(
        session, _MIGRATIONS, migration_id,
        lambda: exception.MigrationNotFound(migration_id=migration_id))


@functools.lru_cache(maxsize=256)
def _advance_update(keys, statuses, claimed, by, checks, stamp):
    """move_advance's UPDATE ... RETURNING: WHERE ``by`` (id or uuid) =
    b_ident, status IN b_status_* (``statuses``: their count), the
    ``checks`` ((column, is None) pairs: e_<column>), updated_at =
    b_claimed when ``claimed``; values bound as v_<column>; with
    ``stamp`` the new status's phase is appended to ``phases`` in SQL
    (unchanged when the migration already is in it: a re-entered step).
    Only where SET sees the old values (PostgreSQL, SQLite): MySQL
    assigns left to right."""
    query = _MIGRATIONS.update().where(_MIGRATIONS.c[by] == _bp('b_ident'))
    if statuses:
        query = query.where(_in(_MIGRATIONS.c.status, 'b_status', statuses))
    for column, is_none in checks:
        query = query.where(_MIGRATIONS.c[column].is_(None) if is_none
                            else _MIGRATIONS.c[column] == _bp('e_' + column))
    if claimed:
        query = query.where(_MIGRATIONS.c.updated_at == _bp('b_claimed'))
    values = {k: _bp('v_' + k) for k in keys}
    if stamp:
        current = _MIGRATIONS.c.phases
        values['phases'] = sa.case(
            (_MIGRATIONS.c.status == _bp('v_status'), current),
            (sa.or_(current.is_(None), sa.func.length(current) < 3),
             _bp('v_phases_fresh', type_=sa.Text)),
            else_=sa.func.substr(current, 1, sa.func.length(current) - 1,
                                 type_=sa.Text)
            + _bp('v_phases_tail', type_=sa.Text))
    return query.values(values).returning(*_MIGRATIONS.c)


@functools.lru_cache(maxsize=256)
def migration_update(keys, statuses, claimed=False):
    """UPDATE migrations SET ``keys`` WHERE id = b_id (AND status IN
    b_status_* when ``statuses``, their count; AND updated_at = b_claimed
    when ``claimed``); values bound as v_<column>."""
    query = _MIGRATIONS.update().where(_MIGRATIONS.c.id == _bp('b_id'))
    if statuses:
        query = query.where(_in(_MIGRATIONS.c.status, 'b_status', statuses))
    if claimed:
        query = query.where(_MIGRATIONS.c.updated_at == _bp('b_claimed'))
    return query.values({k: _bp('v_' + k) for k in keys})


def _step_values(status, values, now):
    mig_values = dict(values or {}, updated_at=now)
    if status is not None and len(status) > 1 and status[1]:
        mig_values['status'] = status[1]
    return mig_values


def advance_returning(session, migration_id, status, values,
                       expected_values, claimed, passed_phases):
    """The migration's half of a step as one UPDATE ... RETURNING
    (PostgreSQL, SQLite): the guard in its WHERE, the phase appended to
    ``phases`` by the statement itself, the row as written returned. The
    migration is read only to explain a refusal."""
    now = utcnow()
    mig_values = _step_values(status, values, now)
    by, ident = _id_or_uuid(migration_id, lambda: exception.MigrationNotFound(
        migration_id=migration_id))
    expected = _as_list(status[0]) if status is not None else []
    checks = tuple(sorted((k, v is None)
                          for k, v in (expected_values or {}).items()))
    params = dict(_bound(mig_values), b_ident=ident,
                  **_in_params('b_status', expected))
    params.update({'e_' + k: v for k, v in (expected_values or {}).items()
                   if v is not None})
    if claimed is not None:
        params['b_claimed'] = claimed
    stamp = 'status' in mig_values
    if stamp:
        entries = [[p, timeutil.api_time(_parse_time(at) or now)]
                   for p, at in (passed_phases or ())]
        entries.append([mig_values['status'], timeutil.api_time(now)])
        params['v_phases_fresh'] = json.dumps(entries)
        params['v_phases_tail'] = ', ' + json.dumps(entries)[1:]
    row = session.execute(_advance_update(
        tuple(sorted(mig_values)), len(expected), claimed is not None, by,
        checks, stamp), params).first()
    if row is None:
        raise _refusal(_migration_row(session, migration_id), status,
                       expected_values)
    return row


def _refusal(migration, status, expected_values):
    """The MoveConflict of a step whose guard did not hold."""
    if status is not None and migration.status not in _as_list(status[0]):
        return _conflict(migration, 'migration is %s, expected %s' % (
            migration.status, status[0]))
    for column, value in (expected_values or {}).items():
        if getattr(migration, column) != value:
            return _conflict(migration, '%s is %s, not %s' % (
                column, getattr(migration, column), value))
    return _conflict(migration, 'migration changed meanwhile')


def advance_read_first(session, migration_id, status, values,
                        expected_values, claimed, passed_phases):
    """The migration's half of a step where UPDATE returns no row
    (MySQL, MariaDB): read it, check, compare-and-swap. Returns the row
    read and what was written on it."""
    migration = _migration_row(session, migration_id)
    if status is not None and migration.status not in _as_list(status[0]):
        raise _refusal(migration, status, None)
    for column, value in (expected_values or {}).items():
        if getattr(migration, column) != value:
            raise _refusal(migration, None, expected_values)
    mig_values = _step_values(status, values, utcnow())
    if 'status' in mig_values:
        # Guarded by the status compare-and-swap below.
        stamped = migration.phases
        for passed, began in (passed_phases or ()):
            stamped = phases.stamp(stamped, passed,
                                   _parse_time(began) or
                                   mig_values['updated_at'])
        mig_values['phases'] = phases.stamp(
            stamped, mig_values['status'], mig_values['updated_at'])
    params = _bound(mig_values)
    params['b_id'] = migration.id
    expected = _as_list(status[0]) if status is not None else []
    params.update(_in_params('b_status', expected))
    if claimed is not None:
        params['b_claimed'] = claimed
    query = migration_update(tuple(sorted(mig_values)), len(expected),
                          claimed is not None)
    if session.execute(query, params).rowcount != 1:
        raise _conflict(migration, 'migration changed meanwhile')
    return migration, mig_values
