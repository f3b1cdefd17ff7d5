"""A cell's copy of an aggregate whose hosts include some of that cell's
(api/aggregate_cells.py writes it, inside cells.target(cell)).

The API's home cell holds every aggregate (os-aggregates answers from
there); a cell's own zone logic -- its services' zone (db/services.py),
its scheduler's AvailabilityZoneFilter, a server's zone -- joins the
aggregate tables of its own database, the only one its services reach.
So each other cell holding a member host keeps a mirror: the same uuid,
name and metadata, and only its own member hosts. Those cells' tables
hold nothing but mirrors: a row of the same name and another uuid is a
stale one and is replaced."""
import sqlalchemy as sa

from nova_moves.db import models
from nova_moves.db.session import _tx

_AGGS = models.Aggregate.__table__
_HOSTS = models.AggregateHost.__table__
_META = models.AggregateMetadata.__table__
_INSTANCES = models.Instance.__table__


def mirror_write(aggregate, hosts):
    """This cell's mirror of ``aggregate`` (a db/aggregates view: uuid,
    name, metadata) with ``hosts``; no mirror when ``hosts`` is empty.
    One transaction: the mirror is wholly the old one or the new one."""
    now = models.utcnow()
    with _tx() as conn:
        rows = conn.execute(sa.select(_AGGS.c.id, _AGGS.c.uuid).where(sa.or_(
            _AGGS.c.uuid == aggregate['uuid'],
            _AGGS.c.name == aggregate['name']))).all()
        ids = [row.id for row in rows]
        kept = next((row.id for row in rows
                     if row.uuid == aggregate['uuid'] and hosts), None)
        if ids:
            conn.execute(_HOSTS.delete().where(
                _HOSTS.c.aggregate_id.in_(ids)))
            conn.execute(_META.delete().where(_META.c.aggregate_id.in_(ids)))
            conn.execute(_AGGS.delete().where(_AGGS.c.id.in_(ids),
                                              _AGGS.c.id != kept))
        if not hosts:
            return
        if kept is None:
            kept = conn.execute(_AGGS.insert().values(
                uuid=aggregate['uuid'], name=aggregate['name'],
                created_at=now)).inserted_primary_key[0]
        else:
            conn.execute(_AGGS.update().where(_AGGS.c.id == kept).values(
                name=aggregate['name'], updated_at=now))
        if aggregate['metadata']:
            conn.execute(_META.insert(), [
                {'aggregate_id': kept, 'key': key, 'value': value,
                 'created_at': now}
                for key, value in aggregate['metadata'].items()])
        conn.execute(_HOSTS.insert(), [
            {'aggregate_id': kept, 'host': host, 'created_at': now}
            for host in sorted(hosts)])


def hosts_hold_servers(hosts):
    """Whether a server (not deleted) of this cell is on one of
    ``hosts``."""
    with _tx(writer=False) as conn:
        return conn.execute(sa.select(_INSTANCES.c.id).where(
            _INSTANCES.c.host.in_(list(hosts)),
            _INSTANCES.c.deleted == 0).limit(1)).first() is not None
