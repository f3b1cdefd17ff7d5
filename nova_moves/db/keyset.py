"""Keyset paging by the sort values of a record that may live in another
database: what a list merged across cells needs (Nova's marker, looked up
in its own cell, then applied to every cell by its values)."""
import sqlalchemy as sa

from nova_moves.db.session import _parse_time

# The default order of a merged list (Nova's InstanceSortContext and
# MigrationSortContext): newest first, then the cell's id, then the uuid,
# which alone is unique across cells.
DEFAULT_ORDER = (('created_at', 'desc'), ('id', 'desc'), ('uuid', 'asc'))


def _value(column, value):
    if isinstance(column.type, sa.DateTime):
        return _parse_time(value)
    return value


def after(table, values, order=DEFAULT_ORDER):
    """The clause of the rows strictly after ``values`` (a dict of the
    order's columns) in ``order``: (a > x) or (a = x and (b > y or ...)),
    with each column's direction."""
    clause = None
    for name, direction in reversed(order):
        column = table.c[name]
        value = _value(column, values[name])
        beyond = column < value if direction == 'desc' else column > value
        clause = beyond if clause is None else sa.or_(
            beyond, sa.and_(column == value, clause))
    return clause


def order_by(table, order=DEFAULT_ORDER):
    return [table.c[name].desc() if direction == 'desc' else table.c[name]
            for name, direction in order]
