"""Nova host aggregates (os-aggregates): named sets of compute hosts with
metadata. The ``availability_zone`` metadata key is the zone of the
aggregate's hosts (a host in no such aggregate keeps the zone its
compute service reports). Placement's provider aggregates (sharing
providers) are another thing: see providers.py.

Every check and its change run in one transaction, so a refused request
changes nothing. A change may take a ``hook(old, new, action)``, run
inside that transaction after the change and before it commits (the
API's mirrors in the other cells, api/aggregate_cells.py): what it
raises undoes the change.
"""
import uuid as uuidlib

from oslo_db import exception as db_exc
import sqlalchemy as sa

from nova_moves.db import models
from nova_moves import exception
from nova_moves.db.session import _session, _to_dict

__all__ = ['AggregateNotFound', 'AggregateNameExists',
           'AggregateHostExists', 'AggregateHostNotFound',
           'InvalidAggregateAction', 'aggregate_create', 'aggregate_get',
           'aggregate_get_all', 'aggregate_update', 'aggregate_delete',
           'aggregate_host_add', 'aggregate_host_remove',
           'aggregate_metadata_set', 'aggregate_host_zones', 'HOLDS_SERVERS']

AZ_KEY = 'availability_zone'
_AGGS = models.Aggregate.__table__
_HOSTS = models.AggregateHost.__table__
_META = models.AggregateMetadata.__table__
_SERVICES = models.Service.__table__
_INSTANCES = models.Instance.__table__
_COMPUTE_BINARY = 'nova-moves-compute'
# Zone of services that are not computes (service_names.zone): no
# aggregate may take it, as in Nova.
INTERNAL_ZONE = 'internal'
# Nova's reason for refusing to change the zone of hosts with servers.
HOLDS_SERVERS = 'one or more hosts contain instances in this zone'


class AggregateNotFound(exception.NotFound):
    msg_fmt = 'Aggregate %(aggregate_id)s could not be found.'


class AggregateNameExists(exception.Conflict):
    msg_fmt = 'Aggregate %(aggregate_name)s already exists.'


class AggregateHostExists(exception.Conflict):
    msg_fmt = ('Aggregate %(aggregate_id)s already has host '
               '%(host)s.')


class AggregateHostNotFound(exception.NotFound):
    msg_fmt = 'Aggregate %(aggregate_id)s has no host %(host)s.'


class InvalidAggregateAction(exception.Invalid):
    """400 by default; add_host answers it with 409, as Nova does."""
    msg_fmt = ('Unacceptable parameters: cannot %(action)s aggregate '
               '%(aggregate_id)s. Reason: %(reason)s.')


def _view(session, row):
    agg = _to_dict(row)
    agg['hosts'] = list(session.scalars(
        sa.select(_HOSTS.c.host).where(_HOSTS.c.aggregate_id == row.id)
        .order_by(_HOSTS.c.id)))
    agg['metadata'] = {key: value for key, value in session.execute(
        sa.select(_META.c.key, _META.c.value)
        .where(_META.c.aggregate_id == row.id).order_by(_META.c.id))}
    agg['availability_zone'] = agg['metadata'].get(AZ_KEY)
    return agg


def _row(session, aggregate_id, lock=False):
    query = sa.select(models.Aggregate).where(
        models.Aggregate.id == aggregate_id)
    if lock:
        query = query.with_for_update()
    row = session.scalars(query).first()
    if row is None:
        raise AggregateNotFound(aggregate_id=aggregate_id)
    return row


def _name_taken(session, name, but=None):
    query = sa.select(_AGGS.c.id).where(_AGGS.c.name == name)
    if but is not None:
        query = query.where(_AGGS.c.id != but)
    if session.execute(query).first() is not None:
        raise AggregateNameExists(aggregate_name=name)


def _check_zone(session, agg_id, zone, hosts, action):
    """Nova's is_safe_to_update_az: a zone has a name, is not the
    internal one, and none of ``hosts`` is in another aggregate with
    another zone."""
    if not zone:
        raise InvalidAggregateAction(
            action=action, aggregate_id=agg_id,
            reason='an aggregate does not support an empty named '
                   'availability zone')
    if zone == INTERNAL_ZONE:
        raise InvalidAggregateAction(
            action=action, aggregate_id=agg_id,
            reason='the %s availability zone is reserved' % INTERNAL_ZONE)
    if not hosts:
        return
    query = (sa.select(_META.c.value).distinct()
             .join(_HOSTS, _HOSTS.c.aggregate_id == _META.c.aggregate_id)
             .where(_META.c.key == AZ_KEY, _HOSTS.c.host.in_(hosts),
                    _META.c.value != zone))
    if agg_id is not None:
        query = query.where(_META.c.aggregate_id != agg_id)
    others = sorted(session.scalars(query))
    if others:
        raise InvalidAggregateAction(
            action=action, aggregate_id=agg_id,
            reason='one or more hosts already in availability zone(s) %s'
                   % others)


def _check_no_servers(session, agg, zone, action):
    """Nova refuses to change the zone of hosts that hold servers: the
    servers would silently change zone."""
    if zone == agg['availability_zone'] or not agg['hosts']:
        return
    held = session.execute(sa.select(_INSTANCES.c.id).where(
        _INSTANCES.c.host.in_(agg['hosts']),
        _INSTANCES.c.deleted == 0).limit(1)).first()
    if held is not None:
        raise InvalidAggregateAction(
            action=action, aggregate_id=agg['id'],
            reason=HOLDS_SERVERS)


def _set_meta(session, agg_id, key, value):
    session.execute(_META.delete().where(_META.c.aggregate_id == agg_id,
                                         _META.c.key == key))
    if value is not None:
        session.execute(_META.insert().values(
            aggregate_id=agg_id, key=key, value=value,
            created_at=models.utcnow()))


def aggregate_create(name, zone=None):
    with _session() as session:
        _name_taken(session, name)
        if zone is not None:
            _check_zone(session, None, zone, [], 'create')
        row = models.Aggregate(uuid=str(uuidlib.uuid4()), name=name)
        session.add(row)
        try:
            session.flush()
        except (db_exc.DBDuplicateEntry, sa.exc.IntegrityError):
            # A concurrent create of the same name won the race.
            raise AggregateNameExists(aggregate_name=name)
        if zone is not None:
            _set_meta(session, row.id, AZ_KEY, zone)
        return _view(session, row)


def aggregate_get(aggregate_id):
    with _session(writer=False) as session:
        return _view(session, _row(session, aggregate_id))


def aggregate_get_all():
    with _session(writer=False) as session:
        rows = session.scalars(sa.select(models.Aggregate).order_by(
            models.Aggregate.id)).all()
        return [_view(session, row) for row in rows]


def _run_hook(hook, session, row, old, action):
    if hook is None:
        return _view(session, row)
    session.flush()
    new = _view(session, row)
    hook(old, new, action)
    return new


def aggregate_update(aggregate_id, values, hook=None):
    """PUT: ``name`` and/or ``availability_zone`` (a zone is checked as
    set_metadata checks it)."""
    with _session() as session:
        row = _row(session, aggregate_id, lock=True)
        old = _view(session, row) if hook is not None else None
        if AZ_KEY in values:
            agg = old or _view(session, row)
            _check_zone(session, row.id, values[AZ_KEY], agg['hosts'],
                        'update')
            _check_no_servers(session, agg, values[AZ_KEY], 'update')
            _set_meta(session, row.id, AZ_KEY, values[AZ_KEY])
        if 'name' in values and values['name'] != row.name:
            _name_taken(session, values['name'], but=row.id)
            row.name = values['name']
        row.updated_at = models.utcnow()
        try:
            session.flush()
        except (db_exc.DBDuplicateEntry, sa.exc.IntegrityError):
            # A concurrent create, or a name equal under MySQL's collation.
            raise AggregateNameExists(aggregate_name=values['name'])
        return _run_hook(hook, session, row, old, 'update')


def aggregate_delete(aggregate_id):
    with _session() as session:
        row = _row(session, aggregate_id, lock=True)
        if _view(session, row)['hosts']:
            raise InvalidAggregateAction(
                action='delete', aggregate_id=aggregate_id,
                reason='host aggregate is not empty')
        session.execute(_META.delete().where(
            _META.c.aggregate_id == row.id))
        session.delete(row)


def aggregate_host_add(aggregate_id, host, service_checked=False, hook=None):
    """``service_checked``: the host's compute service was found in its
    own cell (another cell's host; the API checked it there)."""
    with _session() as session:
        row = _row(session, aggregate_id, lock=True)
        if not service_checked and session.execute(
                sa.select(_SERVICES.c.id).where(
                    _SERVICES.c.host == host,
                    _SERVICES.c.binary == _COMPUTE_BINARY)).first() is None:
            raise exception.ComputeHostNotFound(host=host)
        agg = old = _view(session, row)
        if host in agg['hosts']:
            raise AggregateHostExists(aggregate_id=aggregate_id, host=host)
        if agg['availability_zone'] is not None:
            _check_zone(session, row.id, agg['availability_zone'], [host],
                        'add host to')
        try:
            with session.begin_nested():
                session.execute(_HOSTS.insert().values(
                    aggregate_id=row.id, host=host,
                    created_at=models.utcnow()))
        except (db_exc.DBDuplicateEntry, sa.exc.IntegrityError):
            raise AggregateHostExists(aggregate_id=aggregate_id, host=host)
        return _run_hook(hook, session, row, old, 'add host to')


def aggregate_host_remove(aggregate_id, host, hook=None):
    with _session() as session:
        row = _row(session, aggregate_id, lock=True)
        old = _view(session, row) if hook is not None else None
        gone = session.execute(_HOSTS.delete().where(
            _HOSTS.c.aggregate_id == row.id, _HOSTS.c.host == host))
        if gone.rowcount == 0:
            raise AggregateHostNotFound(aggregate_id=aggregate_id,
                                        host=host)
        return _run_hook(hook, session, row, old, 'remove host from')


def aggregate_metadata_set(aggregate_id, metadata, hook=None):
    """set_metadata: each key set, or deleted when its value is None."""
    with _session() as session:
        row = _row(session, aggregate_id, lock=True)
        old = _view(session, row) if hook is not None else None
        if AZ_KEY in metadata:
            agg = old or _view(session, row)
            _check_zone(session, row.id, metadata[AZ_KEY], agg['hosts'],
                        'update metadata of')
            _check_no_servers(session, agg, metadata[AZ_KEY],
                              'update metadata of')
        for key, value in metadata.items():
            _set_meta(session, row.id, key, value)
        row.updated_at = models.utcnow()
        session.flush()
        return _run_hook(hook, session, row, old, 'update metadata of')


def aggregate_host_zones(hosts=None):
    """{host: zone} for hosts in an aggregate with a zone (``hosts``
    limits the answer to those hosts)."""
    query = (sa.select(_HOSTS.c.host, _META.c.value)
             .join(_META, _META.c.aggregate_id == _HOSTS.c.aggregate_id)
             .where(_META.c.key == AZ_KEY))
    if hosts is not None:
        query = query.where(_HOSTS.c.host.in_(list(hosts)))
    with _session(writer=False) as session:
        return dict(session.execute(query).all())
