"""Instance actions and their events (os-instance-actions)."""
import sqlalchemy as sa

from nova_moves.db import models
from nova_moves import exception
from nova_moves.db.session import (
    _parse_time,
    _session,
    _to_dict,
    utcnow)


def action_start(instance_uuid, action, request_id, user_id, project_id):
    now = utcnow()
    with _session() as session:
        row = models.InstanceAction(
            instance_uuid=instance_uuid, action=action, request_id=request_id,
            user_id=user_id, project_id=project_id, start_time=now,
            updated_at=now)
        session.add(row)
        session.flush()
        return _to_dict(row)


def _action_for(session, instance_uuid, request_id):
    row = session.scalars(
        sa.select(models.InstanceAction)
        .where(models.InstanceAction.instance_uuid == instance_uuid,
               models.InstanceAction.request_id == request_id)
        .order_by(models.InstanceAction.id.desc())).first()
    if row is None:
        raise exception.ActionNotFound(request_id=request_id,
                                       instance_uuid=instance_uuid)
    return row


def action_get_by_request_id(instance_uuid, request_id):
    with _session(writer=False) as session:
        row = session.scalars(
            sa.select(models.InstanceAction)
            .where(models.InstanceAction.instance_uuid == instance_uuid,
                   models.InstanceAction.request_id == request_id)
            .order_by(models.InstanceAction.id.desc())).first()
        return _to_dict(row)


def actions_get(instance_uuid, limit=None, marker=None, changes_since=None,
                changes_before=None):
    with _session(writer=False) as session:
        query = (sa.select(models.InstanceAction)
                 .where(models.InstanceAction.instance_uuid == instance_uuid)
                 .order_by(models.InstanceAction.created_at.desc(),
                           models.InstanceAction.id.desc()))
        if changes_since:
            query = query.where(models.InstanceAction.updated_at >=
                                _parse_time(changes_since))
        if changes_before:
            query = query.where(models.InstanceAction.updated_at <=
                                _parse_time(changes_before))
        if marker:
            mrow = session.scalars(sa.select(models.InstanceAction).where(
                models.InstanceAction.instance_uuid == instance_uuid,
                models.InstanceAction.request_id == marker)).first()
            if mrow is None:
                raise exception.Invalid(reason='marker %s not found' % marker)
            query = query.where(models.InstanceAction.id < mrow.id)
        if limit:
            query = query.limit(limit)
        return [_to_dict(r) for r in session.scalars(query)]


def _event_start_in(session, instance_uuid, request_id, event, host=None):
    now = utcnow()
    action = _action_for(session, instance_uuid, request_id)
    session.add(models.InstanceActionEvent(
        action_id=action.id, event=event, start_time=now, host=host))
    action.updated_at = now


def action_event_start(instance_uuid, request_id, event, host=None):
    with _session() as session:
        _event_start_in(session, instance_uuid, request_id, event, host)


def _event_finish_in(session, instance_uuid, request_id, event, result,
                     traceback=None, details=None, host=None):
    now = utcnow()
    action = _action_for(session, instance_uuid, request_id)
    row = session.scalars(
        sa.select(models.InstanceActionEvent)
        .where(models.InstanceActionEvent.action_id == action.id,
               models.InstanceActionEvent.event == event,
               models.InstanceActionEvent.finish_time.is_(None))
        .order_by(models.InstanceActionEvent.id.desc())).first()
    if row is None:
        row = models.InstanceActionEvent(action_id=action.id, event=event,
                                         start_time=now, host=host)
        session.add(row)
    row.finish_time = now
    row.result = result
    row.traceback = traceback
    row.details = details
    action.updated_at = now
    if result == 'Error':
        action.message = 'Error'


def action_event_finish(instance_uuid, request_id, event, result,
                        traceback=None, details=None):
    with _session() as session:
        _event_finish_in(session, instance_uuid, request_id, event, result,
                         traceback, details)


def action_events_get(action_id):
    with _session(writer=False) as session:
        return [_to_dict(r) for r in session.scalars(
            sa.select(models.InstanceActionEvent)
            .where(models.InstanceActionEvent.action_id == action_id)
            .order_by(models.InstanceActionEvent.id))]
