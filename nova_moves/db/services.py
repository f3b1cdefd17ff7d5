"""Service records: registration, heartbeats, forced-down."""
import functools
import uuid as uuidlib

import sqlalchemy as sa

from nova_moves.db import models
from nova_moves import exception
from nova_moves.db.session import (
    CONF,
    _get_by_id_or_uuid,
    _parse_time,
    _row_dict,
    _session,
    _to_dict,
    _tx,
    utcnow)


def service_report(host, binary, topic, availability_zone=None):
    """Create the service record if needed and mark it seen now."""
    now = utcnow()
    with _session() as session:
        result = session.execute(
            sa.update(models.Service)
            .where(models.Service.host == host,
                   models.Service.binary == binary)
            .values(last_seen_up=now,
                    report_count=models.Service.report_count + 1))
        if result.rowcount == 0:
            session.add(models.Service(
                uuid=str(uuidlib.uuid4()), host=host, binary=binary,
                topic=topic, last_seen_up=now, report_count=1,
                availability_zone=availability_zone))
    return service_get_by_host_and_binary(host, binary)


def service_get_all(binary=None, host=None, hosts=None):
    # Core rows: the scheduler reads the compute services of the hosts it
    # looks at (``hosts``) per request.
    with _tx(writer=False) as session:
        query, params = _services_query(bool(binary), bool(host),
                                        hosts is not None), {}
        if binary:
            params['b_binary'] = binary
        if host:
            params['b_host'] = host
        if hosts is not None:
            params['b_hosts'] = list(hosts)
        return [_row_dict(row) for row in session.execute(query, params)]


@functools.lru_cache(maxsize=8)
def _services_query(binary, host, hosts):
    # Built once per shape: the scheduler runs it on every request.
    table = models.Service.__table__
    columns = [c for c in table.c if c.name != 'availability_zone']
    query = sa.select(*columns, _zone(table)).order_by(table.c.id)
    if binary:
        query = query.where(table.c.binary == sa.bindparam('b_binary'))
    if host:
        query = query.where(table.c.host == sa.bindparam('b_host'))
    if hosts:
        query = query.where(table.c.host.in_(
            sa.bindparam('b_hosts', expanding=True)))
    return query


def _zone(table):
    """The service's zone: its host's aggregate zone (os-aggregates) if
    it has one, else the zone the service reported (Nova's rule)."""
    hosts, meta = (models.AggregateHost.__table__,
                   models.AggregateMetadata.__table__)
    aggregate_zone = (
        sa.select(meta.c.value)
        .join(hosts, hosts.c.aggregate_id == meta.c.aggregate_id)
        .where(hosts.c.host == table.c.host,
               meta.c.key == 'availability_zone')
        .order_by(meta.c.aggregate_id).limit(1).scalar_subquery())
    return sa.func.coalesce(aggregate_zone, table.c.availability_zone).label(
        'availability_zone')


def _with_zone(service):
    if service is not None:
        zone = service_zone_of_host(service['host'])
        if zone is not None:
            service['availability_zone'] = zone
    return service


def service_zone_of_host(host):
    """The zone an aggregate gives ``host``, or None."""
    hosts, meta = (models.AggregateHost.__table__,
                   models.AggregateMetadata.__table__)
    with _tx(writer=False) as conn:
        return conn.execute(
            sa.select(meta.c.value)
            .join(hosts, hosts.c.aggregate_id == meta.c.aggregate_id)
            .where(hosts.c.host == host, meta.c.key == 'availability_zone')
            .order_by(meta.c.aggregate_id).limit(1)).scalar()


def service_get(service_id):
    """By integer id or uuid."""
    return _with_zone(_get_by_id_or_uuid(
        models.Service, service_id,
        lambda: exception.ServiceNotFound(service_id=service_id)))


def service_get_by_host_and_binary(host, binary):
    with _session(writer=False) as session:
        row = session.scalars(sa.select(models.Service).where(
            models.Service.host == host,
            models.Service.binary == binary)).first()
        return _with_zone(_to_dict(row))


def service_update(service_id, values):
    service = service_get(service_id)
    with _session() as session:
        session.execute(sa.update(models.Service).where(
            models.Service.id == service['id']).values(**values))
    return service_get(service['id'])


def service_delete(service_id):
    service = service_get(service_id)
    with _session() as session:
        session.execute(sa.delete(models.Service).where(
            models.Service.id == service['id']))
    return service


def service_is_up(service):
    """Down when forced down or silent for longer than service_down_time."""
    if service['forced_down']:
        return False
    last = _parse_time(service['last_seen_up'])
    if last is None:
        return False
    age = (utcnow() - last).total_seconds()
    return abs(age) <= CONF.service_down_time


def service_heartbeats(binary):
    """The last heartbeat of every ``binary`` service not forced down:
    the liveness watch's fleet-wide view (servicegroup.py)."""
    table = models.Service.__table__
    with _tx(writer=False) as conn:
        return [_parse_time(value) for value in conn.execute(
            sa.select(table.c.last_seen_up)
            .where(table.c.binary == binary,
                   table.c.forced_down == sa.false(),
                   table.c.last_seen_up.is_not(None))).scalars()]
