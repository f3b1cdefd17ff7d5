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
# The request's action inside a step's own statements: a move step
# writes its events without reading the action first (a statement
# fewer per step; no action: the statements write nothing).
_ACTION_OF = _ACTION_ID.scalar_subquery()
# Only an Error event touches its action (its message): an action's
# updated_at as the API shows it is the newest of its own and its
# events' (``_touched``), so the steps need not write it.
_MARK_ERROR = _ACTIONS.update().where(
    _ACTIONS.c.instance_uuid == _bp('b_uuid'),
    _ACTIONS.c.request_id == _bp('b_request_id')).values(
    updated_at=_bp('v_updated_at'), message='Error')
_NEW_ACTION = _ACTIONS.insert().values(
    instance_uuid=_bp('instance_uuid'), action=_bp('action'),
    request_id=_bp('request_id'), user_id=_bp('user_id'),
    project_id=_bp('project_id'), start_time=_bp('start_time'),
    created_at=_bp('created_at'), updated_at=_bp('updated_at'))


def _typed(name, column):
    # Typed: a parameter in a SELECT list has no column to take its type
    # from (PostgreSQL would otherwise have to guess it).
    return _bp(name, type_=_EVENTS.c[column].type)


_EVENT_START = _EVENTS.insert().from_select(
    ['action_id', 'event', 'start_time', 'host', 'created_at'],
    sa.select(_ACTION_OF, _typed('v_event', 'event'),
              _typed('v_now', 'start_time'), _typed('v_host', 'host'),
              _typed('v_now', 'created_at'))
    .where(_ACTION_OF.is_not(None)))
# Close the action's open ``b_event`` events: one statement, no read
# (only the events table is updated, so MySQL takes the subquery).
_EVENT_CLOSE_OPEN = _EVENTS.update().where(
    _EVENTS.c.action_id == _ACTION_OF,
    _EVENTS.c.event == _bp('b_event'),
    _EVENTS.c.finish_time.is_(None)).values(
    finish_time=_bp('v_now'), result=_bp('v_result'),
    traceback=_bp('v_traceback'), details=_bp('v_details'),
    updated_at=_bp('v_now'))
_EVENT_WHOLE = _EVENTS.insert().from_select(
    ['action_id', 'event', 'start_time', 'host', 'created_at',
     'finish_time', 'result', 'traceback', 'details'],
    sa.select(_ACTION_OF, _typed('v_event', 'event'),
              _typed('v_start', 'start_time'), _typed('v_host', 'host'),
              _typed('v_now', 'created_at'), _typed('v_now', 'finish_time'),
              _typed('v_result', 'result'),
              _typed('v_traceback', 'traceback'),
              _typed('v_details', 'details'))
    .where(_ACTION_OF.is_not(None)))
# When an action last changed: its own updated_at or its newest event's.
_EVENT_TOUCHED = (sa.select(sa.func.max(sa.func.coalesce(
    _EVENTS.c.updated_at, _EVENTS.c.created_at)))
    .where(_EVENTS.c.action_id == _ACTIONS.c.id).scalar_subquery())
_TOUCHED = sa.case((_EVENT_TOUCHED > _ACTIONS.c.updated_at, _EVENT_TOUCHED),
                   else_=_ACTIONS.c.updated_at).label('touched_at')


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


def _with_touched(row, touched):
    action = _to_dict(row)
    if action is not None and touched is not None:
        action['updated_at'] = touched
    return action


def action_get_by_request_id(instance_uuid, request_id):
    with _session(writer=False) as session:
        row = session.execute(
            sa.select(models.InstanceAction, _TOUCHED)
            .where(models.InstanceAction.instance_uuid == instance_uuid,
                   models.InstanceAction.request_id == request_id)
            .order_by(models.InstanceAction.id.desc())).first()
        return _with_touched(*row) if row is not None else None


def actions_get(instance_uuid, limit=None, marker=None, changes_since=None,
                changes_before=None):
    """The server's actions, newest first; ``updated_at`` (and the
    changes-since/-before filters, 2.58) is when the action or one of
    its events last changed."""
    with _session(writer=False) as session:
        query = (sa.select(models.InstanceAction, _TOUCHED)
                 .where(models.InstanceAction.instance_uuid == instance_uuid)
                 .order_by(models.InstanceAction.created_at.desc(),
                           models.InstanceAction.id.desc()))
        if changes_since:
            query = query.where(_TOUCHED >= _parse_time(changes_since))
        if changes_before:
            query = query.where(_TOUCHED <= _parse_time(changes_before))
        if marker:
            mrow = session.scalars(sa.select(models.InstanceAction).where(
                models.InstanceAction.instance_uuid == instance_uuid,
                models.InstanceAction.request_id == marker)).first()
            if mrow is None:
                raise exception.MarkerNotFound(marker=marker)
            query = query.where(models.InstanceAction.id < mrow.id)
        if limit:
            query = query.limit(limit)
        return [_with_touched(row, touched)
                for row, touched in session.execute(query)]


def _action_id(session, instance_uuid, request_id):
    """The id of the request's action: Core, one column (every move step
    records an event, so this runs on the hottest path)."""
    action_id = session.execute(_ACTION_ID, {
        'b_uuid': instance_uuid, 'b_request_id': request_id}).scalar()
    if action_id is None:
        raise exception.ActionNotFound(request_id=request_id,
                                       instance_uuid=instance_uuid)
    return action_id


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


def events_in(session, instance_uuid, request_id, events, lookup=True):
    """Record a step's events ({name, result (None: a start), traceback,
    details, host, start_time}) in its transaction, each one statement
    that finds the action itself (no read first, and the action is not
    touched: its updated_at is read as its newest event's).

    A finish closes the open ``name`` events of the action; without one
    (a short step recorded whole at its end, or one that failed before
    its start was recorded) the event is recorded whole, started at
    ``start_time`` (at once when the event says ``whole``). ``lookup``:
    raise ActionNotFound, writing nothing, when the request has no
    action (a step's own events, lookup=False, are then silently not
    recorded)."""
    if not events:
        return
    keys = {'b_uuid': instance_uuid, 'b_request_id': request_id}
    if lookup:
        _action_id(session, instance_uuid, request_id)
    now = utcnow()
    error = False
    for event in events:
        result = event.get('result')
        if not result:
            session.execute(_EVENT_START, dict(
                keys, v_event=event['name'], v_now=now,
                v_host=event.get('host')))
            continue
        error = error or result == 'Error'
        # 2.84 details of an Error event, fit for the owner.
        details = fault_text.event_details(
            session, result, event.get('details'), event.get('traceback'))
        done = dict(keys, v_now=now, v_result=result,
                    v_traceback=event.get('traceback'), v_details=details)
        # ``whole``: never started (instance_actions.Recording.take).
        closed = not event.get('whole') and session.execute(
            _EVENT_CLOSE_OPEN, dict(done, b_event=event['name'])).rowcount
        if not closed:
            session.execute(_EVENT_WHOLE, dict(
                done, v_event=event['name'], v_host=event.get('host'),
                v_start=_parse_time(event.get('start_time')) or now))
    if error:
        session.execute(_MARK_ERROR, dict(keys, v_updated_at=now))


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
