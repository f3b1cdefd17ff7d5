"""Rows of key/value pairs that hang off a server or a flavor (server
metadata, flavor extra specs, server tags): the server's row lock their
writers take, and the write of a set of keys over the rows already
there."""
import sqlalchemy as sa

from nova_moves.db import models
from nova_moves import exception
from nova_moves.db.session import utcnow


def lock_instance(session, instance_uuid):
    """Hold the server's row (FOR UPDATE where the database has it;
    SQLite's writer is already alone) so that racing writers of its keys
    count and write one after the other."""
    query = sa.select(models.Instance.id).where(
        models.Instance.uuid == instance_uuid, models.Instance.deleted == 0)
    if session.bind.dialect.name != 'sqlite':
        query = query.with_for_update()
    if session.execute(query).first() is None:
        raise exception.InstanceNotFound(instance_id=instance_uuid)


def upsert(session, current, items, new_row, duplicate, what):
    """Write ``items`` ({key: value}) over ``current`` ({key: row}, the
    rows there now): a row's value is updated, a missing key gets
    ``new_row(key, value)``, added to ``current`` too; then
    flush_unique."""
    for key, value in items.items():
        if key in current:
            current[key].value = value
            current[key].updated_at = utcnow()
        else:
            current[key] = new_row(key, value)
            session.add(current[key])
    flush_unique(session, duplicate, what)


def flush_unique(session, duplicate, what):
    """Flush; ``duplicate`` (what this engine raises for a unique key) is
    a Conflict naming ``what``. MySQL's collation compares keys without
    case or trailing spaces: two such keys are one there."""
    try:
        session.flush()
    except duplicate:
        raise exception.Conflict(
            reason='%s must differ by more than letter case or trailing '
                   'spaces' % what)
