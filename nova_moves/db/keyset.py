"""Keyset paging by the sort values of a record that may live in another
database: what a list merged across cells needs (Nova's marker, looked up
in its own cell, then applied to every cell by its values).

An order is a tuple of (name, 'asc' or 'desc'); ``exprs`` maps a name
that is not a column of the table to its SQL expression (a server's
``locked``). NULL sorts as the lowest value on every database (SQLite's
and MySQL's rule; PostgreSQL's own is the opposite, so a nullable key is
ordered by its IS NULL first): first ascending, last descending. The
Python side (``sort``) follows the same rule, so a merge of pages read
from several databases is in the order each database read them in."""
import sqlalchemy as sa

from nova_moves.db.session import _parse_time

# The default order of a merged list (Nova's InstanceSortContext and
# MigrationSortContext): newest first, then the cell's id, then the uuid,
# which alone is unique across cells.
DEFAULT_ORDER = (('created_at', 'desc'), ('id', 'desc'), ('uuid', 'asc'))


def _column(table, name, exprs):
    if exprs and name in exprs:
        return exprs[name]
    return table.c[name]


def _nullable(column):
    return getattr(column, 'nullable', True)


def _value(column, value):
    if isinstance(column.type, sa.DateTime):
        return _parse_time(value)
    return value


def _beyond(column, value, direction):
    """The rows strictly after ``value`` by this one key, NULL lowest."""
    if value is None:
        # Nothing is below NULL; everything else is above it.
        return column.isnot(None) if direction == 'asc' else sa.false()
    if direction == 'asc':
        return column > value
    if _nullable(column):
        return sa.or_(column < value, column.is_(None))
    return column < value


def _equal(column, value):
    return column.is_(None) if value is None else column == value


def after(table, values, order=DEFAULT_ORDER, exprs=None):
    """The clause of the rows strictly after ``values`` (a dict of the
    order's keys) in ``order``: (a > x) or (a = x and (b > y or ...)),
    with each key's direction."""
    clause = None
    for name, direction in reversed(order):
        column = _column(table, name, exprs)
        value = _value(column, values[name])
        beyond = _beyond(column, value, direction)
        clause = beyond if clause is None else sa.or_(
            beyond, sa.and_(_equal(column, value), clause))
    return clause


def order_by(table, order=DEFAULT_ORDER, exprs=None):
    terms = []
    for name, direction in order:
        column = _column(table, name, exprs)
        desc = direction == 'desc'
        if _nullable(column):
            # NULL lowest on every database (PostgreSQL puts it highest).
            nulls = column.is_(None)
            terms.append(nulls.asc() if desc else nulls.desc())
        terms.append(column.desc() if desc else column)
    return terms


def sort(records, order=DEFAULT_ORDER, value=None):
    """``records`` sorted by ``order`` in Python as order_by sorts them
    in the database (NULL lowest); ``value(record, name)`` reads a key
    (default: record[name])."""
    if value is None:
        def value(record, name):
            return record[name]
    records = list(records)
    # Stable sorts from the last key to the first: the first key decides.
    for name, direction in reversed(order):
        def key(record, name=name):
            v = value(record, name)
            return (v is not None, v if v is not None else 0)
        records.sort(key=key, reverse=direction == 'desc')
    return records
