"""Instance actions and their events (os-instance-actions)."""
import sqlalchemy as sa

from nova_moves.db import fault_text
from nova_moves.db import models
from nova_moves import exception
from nova_moves.db.session import (
    _parse_time,
    _session,
    _tx,
    _to_dict,
    utcnow)


# Core tables: an action and its events are written on every move step,
# with statements built once (building one costs more than running it).
_ACTIONS = models.InstanceAction.__table__
_EVENTS = models.InstanceActionEvent.__table__
_bp = sa.bindparam

_ACTION_ID = (sa.select(_ACTIONS.c.id)
              .where(_ACTIONS.c.instance_uuid == _bp('b_uuid'),
                     _ACTIONS.c.request_id == _bp('b_request_id'))
              .order_by(_ACTIONS.c.id.desc()).limit(1))
_TOUCH = _ACTIONS.update().where(_ACTIONS.c.id == _bp('b_id')).values(
    updated_at=_bp('v_updated_at'))
_TOUCH_ERROR = _ACTIONS.update().where(_ACTIONS.c.id == _bp('b_id')).values(
    updated_at=_bp('v_updated_at'), message='Error')
_NEW_ACTION = _ACTIONS.insert().values(
    instance_uuid=_bp('instance_uuid'), action=_bp('action'),
    request_id=_bp('request_id'), user_id=_bp('user_id'),
    project_id=_bp('project_id'), start_time=_bp('start_time'),
    created_at=_bp('created_at'), updated_at=_bp('updated_at'))
_EVENT_START = _EVENTS.insert().values(
    action_id=_bp('v_action_id'), event=_bp('v_event'),
    start_time=_bp('v_now'), host=_bp('v_host'), created_at=_bp('v_now'))
# Close the action's open ``b_event`` events: one statement, no read
# (only the events table is updated, so MySQL takes the plain WHERE).
_EVENT_CLOSE_OPEN = _EVENTS.update().where(
    _EVENTS.c.action_id == _bp('b_action_id'),
    _EVENTS.c.event == _bp('b_event'),
    _EVENTS.c.finish_time.is_(None)).values(
    finish_time=_bp('v_now'), result=_bp('v_result'),
    traceback=_bp('v_traceback'), details=_bp('v_details'),
    updated_at=_bp('v_now'))
_EVENT_WHOLE = _EVENTS.insert().values(
    action_id=_bp('v_action_id'), event=_bp('v_event'),
    start_time=_bp('v_start'), host=_bp('v_host'), created_at=_bp('v_now'),
    finish_time=_bp('v_now'), result=_bp('v_result'),
    traceback=_bp('v_traceback'), details=_bp('v_details'))


def action_start(instance_uuid, action, request_id, user_id, project_id):
    with _tx() as session:
        return _action_start_in(session, instance_uuid, action, request_id,
                                user_id, project_id)


def _action_start_in(session, instance_uuid, action, request_id, user_id,
                     project_id):
    now = utcnow()
    values = dict(instance_uuid=instance_uuid, action=action,
                  request_id=request_id, user_id=user_id,
                  project_id=project_id, start_time=now, created_at=now,
                  updated_at=now)
    action_id = session.execute(_NEW_ACTION,
                                values).inserted_primary_key[0]
    # The row as written, without reading it back.
    row = dict.fromkeys(_ACTIONS.c.keys())
    row.update({k: v.isoformat() if hasattr(v, 'isoformat') else v
                for k, v in values.items()}, id=action_id)
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
                raise exception.MarkerNotFound(marker=marker)
            query = query.where(models.InstanceAction.id < mrow.id)
        if limit:
            query = query.limit(limit)
        return [_to_dict(r) for r in session.scalars(query)]


def _action_id(session, instance_uuid, request_id):
    """The id of the request's action: Core, one column (every move step
    records an event, so this runs on the hottest path)."""
    action_id = session.execute(_ACTION_ID, {
        'b_uuid': instance_uuid, 'b_request_id': request_id}).scalar()
    if action_id is None:
        raise exception.ActionNotFound(request_id=request_id,
                                       instance_uuid=instance_uuid)
    return action_id


def _touch_action(session, action_id, now, error=False):
    session.execute(_TOUCH_ERROR if error else _TOUCH,
                    {'b_id': action_id, 'v_updated_at': now})


def _event_start_in(session, instance_uuid, request_id, event, host=None):
    events_in(session, instance_uuid, request_id,
              [{'name': event, 'host': host}])


def action_event_start(instance_uuid, request_id, event, host=None):
    with _tx() as session:
        _event_start_in(session, instance_uuid, request_id, event, host)


def _event_finish_in(session, instance_uuid, request_id, event, result,
                     traceback=None, details=None, host=None,
                     start_time=None):
    events_in(session, instance_uuid, request_id, [{
        'name': event, 'result': result, 'traceback': traceback,
        'details': details, 'host': host, 'start_time': start_time}])


def events_in(session, instance_uuid, request_id, events):
    """Record a step's events ({name, result (None: a start), traceback,
    details, host, start_time}) in its transaction. The action is read
    once and touched once however many events the step carries (a
    chained step ends one event and starts the next): each is a
    statement per event otherwise, on every step of every move.

    A finish closes the open ``name`` events of the action; without one
    (a short step recorded whole at its end, or one that failed before
    its start was recorded) the event is recorded whole, started at
    ``start_time``. Raises ActionNotFound before writing anything."""
    if not events:
        return
    action_id = _action_id(session, instance_uuid, request_id)
    now = utcnow()
    error = False
    for event in events:
        result = event.get('result')
        if not result:
            session.execute(_EVENT_START, {
                'v_action_id': action_id, 'v_event': event['name'],
                'v_now': now, 'v_host': event.get('host')})
            continue
        error = error or result == 'Error'
        # 2.84 details of an Error event, fit for the owner.
        details = fault_text.event_details(
            session, result, event.get('details'), event.get('traceback'))
        done = {'v_now': now, 'v_result': result,
                'v_traceback': event.get('traceback'), 'v_details': details}
        closed = session.execute(_EVENT_CLOSE_OPEN, dict(
            done, b_action_id=action_id, b_event=event['name'])).rowcount
        if not closed:
            session.execute(_EVENT_WHOLE, dict(
                done, v_action_id=action_id, v_event=event['name'],
                v_host=event.get('host'),
                v_start=_parse_time(event.get('start_time')) or now))
    _touch_action(session, action_id, now, error=error)


def action_event_finish(instance_uuid, request_id, event, result,
                        traceback=None, details=None, host=None,
                        start_time=None):
    with _tx() as session:
        _event_finish_in(session, instance_uuid, request_id, event, result,
                         traceback, details, host=host,
                         start_time=start_time)


def action_events_get(action_id):
    """In the order the events started: a short step is recorded whole
    at its end, after steps that started later."""
    with _session(writer=False) as session:
        return [_to_dict(r) for r in session.scalars(
            sa.select(models.InstanceActionEvent)
            .where(models.InstanceActionEvent.action_id == action_id)
            .order_by(models.InstanceActionEvent.start_time,
                      models.InstanceActionEvent.id))]
