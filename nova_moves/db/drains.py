"""Host drains (os-host-drains) and their servers. The conductor that
owns a drain refreshes its heartbeat on every pass; another conductor
takes it over (drain_claim) once the heartbeat is older than
service_down_time."""
import json
import uuid as uuidlib

import sqlalchemy as sa

from nova_moves.db import models
from nova_moves import exception
from nova_moves.db.session import (_id_or_uuid, _session, _to_dict,
                                   utcnow)

__all__ = ['HostDrainNotFound', 'drain_create', 'drain_get', 'drain_get_all',
           'drain_update', 'drain_claim', 'drain_servers_add',
           'drain_server_update']

# Drain statuses: running and cancelling are still the conductor's.
RUNNING = 'running'
CANCELLING = 'cancelling'
CANCELLED = 'cancelled'
COMPLETED = 'completed'
ACTIVE = (RUNNING, CANCELLING)

# Server states in a drain.
PENDING = 'pending'
MOVING = 'moving'
DONE = 'done'
FAILED = 'failed'


class HostDrainNotFound(exception.NotFound):
    msg_fmt = 'Host drain %(drain_id)s could not be found.'


def _drain_dict(row, servers=None):
    drain = _to_dict(row)
    drain['target_hosts'] = json.loads(drain['target_hosts'] or 'null')
    if servers is not None:
        drain['servers'] = [_to_dict(s) for s in servers]
    return drain


def drain_create(host, mode, target_hosts=None, force_down_if_dead=False,
                 user_id=None, project_id=None):
    """A new drain, waiting for a conductor; Conflict while another drain
    of the same host is still active."""
    with _session() as session:
        busy = session.scalars(sa.select(models.HostDrain).where(
            models.HostDrain.host == host,
            models.HostDrain.status.in_(ACTIVE))).first()
        if busy is not None:
            raise exception.Conflict(
                reason='host %s is already being drained (drain %s)'
                % (host, busy.uuid))
        row = models.HostDrain(
            uuid=str(uuidlib.uuid4()), host=host, mode=mode,
            target_hosts=json.dumps(target_hosts) if target_hosts else None,
            force_down_if_dead=bool(force_down_if_dead), status=RUNNING,
            user_id=user_id, project_id=project_id)
        session.add(row)
        session.flush()
        return _drain_dict(row, [])


def _drain_row(session, drain_id):
    def not_found():
        raise HostDrainNotFound(drain_id=drain_id)
    # The one parser of numeric ids (ASCII digits within the Integer
    # column): isdigit() took '²' and 2**31 to PostgreSQL, a 500.
    column, value = _id_or_uuid(drain_id, not_found)
    row = session.scalars(sa.select(models.HostDrain).where(
        getattr(models.HostDrain, column) == value)).first()
    if row is None:
        raise HostDrainNotFound(drain_id=drain_id)
    return row


def drain_get(drain_id):
    """By uuid (or id), with its servers."""
    with _session(writer=False) as session:
        row = _drain_row(session, drain_id)
        servers = session.scalars(sa.select(models.HostDrainServer).where(
            models.HostDrainServer.drain_id == row.id).order_by(
                models.HostDrainServer.id)).all()
        return _drain_dict(row, servers)


def drain_get_all(status=None, host=None):
    with _session(writer=False) as session:
        query = sa.select(models.HostDrain).order_by(models.HostDrain.id)
        if status:
            query = query.where(models.HostDrain.status.in_(
                [status] if isinstance(status, str) else list(status)))
        if host:
            query = query.where(models.HostDrain.host == host)
        return [_drain_dict(r) for r in session.scalars(query)]


def drain_update(drain_id, values, expected_status=None):
    """Conflict (nothing written) when ``expected_status`` no longer
    holds."""
    with _session() as session:
        row = _drain_row(session, drain_id)
        query = sa.update(models.HostDrain).where(
            models.HostDrain.id == row.id)
        if expected_status:
            query = query.where(models.HostDrain.status.in_(
                list(expected_status)))
        if session.execute(query.values(
                updated_at=utcnow(), **values)).rowcount != 1:
            raise exception.Conflict(reason='drain %s is %s, not %s' % (
                row.uuid, row.status, list(expected_status)))
    return drain_get(drain_id)


def drain_claim(drain_id, owner, stale_before):
    """Take or keep an active drain: free, already ``owner``'s, or its
    owner's heartbeat older than ``stale_before``. True when ours."""
    with _session() as session:
        row = _drain_row(session, drain_id)
        return session.execute(
            sa.update(models.HostDrain)
            .where(models.HostDrain.id == row.id,
                   models.HostDrain.status.in_(ACTIVE),
                   sa.or_(models.HostDrain.owner.is_(None),
                          models.HostDrain.owner == owner,
                          models.HostDrain.heartbeat_at < stale_before))
            .values(owner=owner, heartbeat_at=utcnow())).rowcount == 1


def drain_servers_add(drain_id, instance_uuids):
    with _session() as session:
        row = _drain_row(session, drain_id)
        known = set(session.scalars(sa.select(
            models.HostDrainServer.instance_uuid).where(
                models.HostDrainServer.drain_id == row.id)))
        for instance_uuid in instance_uuids:
            if instance_uuid not in known:
                session.add(models.HostDrainServer(
                    drain_id=row.id, instance_uuid=instance_uuid,
                    state=PENDING, attempts=0))


def drain_server_update(drain_id, instance_uuid, values,
                        expected_state=None):
    """True when written (the server row still in ``expected_state``)."""
    with _session() as session:
        row = _drain_row(session, drain_id)
        query = sa.update(models.HostDrainServer).where(
            models.HostDrainServer.drain_id == row.id,
            models.HostDrainServer.instance_uuid == instance_uuid)
        if expected_state:
            query = query.where(
                models.HostDrainServer.state == expected_state)
        return session.execute(query.values(
            updated_at=utcnow(), **values)).rowcount == 1
