"""The orders a servers list can be in (Nova's sort_key/sort_dir on
GET /servers): each of Nova's sort keys as a column of the instances
table, an expression, or nothing here, and the whole order a list is
read and merged in (db/keyset)."""
import sqlalchemy as sa

from nova_moves.db import keyset
from nova_moves.db import models

_TABLE = models.Instance.__table__

# Nova's keys whose column is named otherwise here.
_RENAMED = {'display_description': 'description'}
# Nova's keys with no column here: every server holds the same (nothing,
# or what the views derive), so sorting by them leaves the order to the
# keys after them, as a sort by a column of equal values would.
NO_COLUMN = frozenset(('config_drive', 'hostname', 'instance_type_id',
                       'kernel_id', 'ramdisk_id', 'root_device_name'))
# 2.73's ``locked``: Nova's boolean column is ``locked_by`` being set.
EXPRS = {'locked': sa.case((_TABLE.c.locked_by.is_(None), 0), else_=1)}


def column_name(key):
    return _RENAMED.get(key, key)


def order(keys, dirs):
    """The order of a list sorted by ``keys`` with ``dirs`` (paired,
    already valid): Nova's -- the keys, then created_at and id in the
    first key's direction (its process_sort_params) unless already
    there, then the uuid ascending, unique across cells (its
    InstanceSortContext) -- the keys with no column here left out."""
    first = dirs[0] if dirs else 'desc'
    names = [column_name(k) for k in keys]
    result = [(n, d) for n, d in zip(names, dirs) if n not in NO_COLUMN]
    for name in ('created_at', 'id'):
        if name not in names:
            result.append((name, first))
    if 'uuid' not in names:
        result.append(('uuid', 'asc'))
    return tuple(result)


def value(record, name):
    """A server dict's value of an order's key."""
    if name == 'locked':
        return 0 if record.get('locked_by') is None else 1
    return record.get(name)


def values(record, order_=keyset.DEFAULT_ORDER):
    """A server's values of ``order_``'s keys (keyset.after)."""
    return {name: value(record, name) for name, _ in order_}


def sort(records, order_=keyset.DEFAULT_ORDER):
    return keyset.sort(records, order_, value)


def order_by(order_=keyset.DEFAULT_ORDER):
    return keyset.order_by(_TABLE, order_, EXPRS)


def after(values_, order_=keyset.DEFAULT_ORDER):
    return keyset.after(_TABLE, values_, order_, EXPRS)
