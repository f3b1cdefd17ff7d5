"""Flavors."""
import uuid as uuidlib

from oslo_db import exception as db_exc
import sqlalchemy as sa

from nova_moves.db import models
from nova_moves import exception
from nova_moves.db.session import _session, _to_dict


def flavor_create(values):
    values = dict(values)
    values.setdefault('flavorid', str(uuidlib.uuid4()))
    with _session() as session:
        row = models.Flavor(**values)
        session.add(row)
        try:
            session.flush()
        except db_exc.DBDuplicateEntry:
            raise exception.Conflict(
                reason='flavor with name %s or id %s already exists'
                % (values.get('name'), values['flavorid']))
        return _to_dict(row)


def flavor_get(flavorid):
    with _session(writer=False) as session:
        row = session.scalars(sa.select(models.Flavor).where(
            models.Flavor.flavorid == str(flavorid))).first()
        if row is None:
            raise exception.FlavorNotFound(flavor_id=flavorid)
        return _to_dict(row)


def flavor_get_all():
    with _session(writer=False) as session:
        return [_to_dict(r) for r in session.scalars(
            sa.select(models.Flavor).order_by(models.Flavor.memory_mb,
                                              models.Flavor.flavorid))]


def flavor_update(flavorid, values):
    """PUT /flavors/{id} (2.55): only the description changes."""
    with _session() as session:
        row = session.scalars(sa.select(models.Flavor).where(
            models.Flavor.flavorid == str(flavorid))).first()
        if row is None:
            raise exception.FlavorNotFound(flavor_id=flavorid)
        for key, value in values.items():
            setattr(row, key, value)
        session.flush()
        return _to_dict(row)


def flavor_delete(flavorid):
    with _session() as session:
        row_id = session.scalar(sa.select(models.Flavor.id).where(
            models.Flavor.flavorid == str(flavorid)))
        # Its extra specs and access list go with it (SQLite here
        # enforces no foreign keys).
        for model in (models.FlavorExtraSpec, models.FlavorProject):
            session.execute(sa.delete(model).where(
                model.flavor_id == row_id))
        result = session.execute(sa.delete(models.Flavor).where(
            models.Flavor.flavorid == str(flavorid)))
        if result.rowcount == 0:
            raise exception.FlavorNotFound(flavor_id=flavorid)
