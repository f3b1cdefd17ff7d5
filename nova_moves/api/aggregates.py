"""os-aggregates: Nova's host aggregates, admin only.

An aggregate is a named set of compute hosts with metadata; its
``availability_zone`` (a metadata key) is the zone of its hosts in
os-availability-zone, os-services, os-hypervisors, server views and the
scheduler's AvailabilityZoneFilter (db/services.py reads it). A host is
in at most one zone: adding it to, or naming a zone for, an aggregate
that would put a host in two zones is refused. An aggregate with hosts
cannot be deleted. 2.41 adds ``uuid`` to the view; paths keep the
integer id, as in Nova. These are not placement's aggregates of sharing
providers (/os-nova-moves-placement).

With several cells an aggregate may hold hosts of any cell (each found
by its host mapping); the cells other than the API's own get a mirror
of it (api/aggregate_cells.py).
"""
import re

import flask

from nova_moves.api import aggregate_cells
from nova_moves.api import request as api_req
from nova_moves.api import validation
from nova_moves.db import api as db_api
from nova_moves import exception

_NAME = {'type': 'string', 'minLength': 1, 'maxLength': 255,
         'pattern': r'^(?![\s])[\S\s]*(?<![\s])$'}
# No ':' — 'zone:host' in a server create names a host.
_ZONE = {'type': ['string', 'null'], 'minLength': 1, 'maxLength': 255,
         'pattern': r'^(?![\s])[^:]*(?<![\s])$'}
_MAX_ID = 2 ** 31 - 1

CREATE = {'type': 'object', 'additionalProperties': False,
          'required': ['aggregate'],
          'properties': {'aggregate': {
              'type': 'object', 'additionalProperties': False,
              'required': ['name'],
              'properties': {'name': _NAME, 'availability_zone': _ZONE}}}}
UPDATE = {'type': 'object', 'additionalProperties': False,
          'required': ['aggregate'],
          'properties': {'aggregate': {
              'type': 'object', 'additionalProperties': False,
              'minProperties': 1,
              'properties': {'name': _NAME, 'availability_zone': _ZONE}}}}
_HOST = {'type': 'object', 'additionalProperties': False,
         'required': ['host'], 'properties': {'host': validation.HOSTNAME}}
ACTION = {'type': 'object', 'additionalProperties': False,
          'minProperties': 1, 'maxProperties': 1,
          'properties': {
              'add_host': _HOST, 'remove_host': _HOST,
              'set_metadata': {
                  'type': 'object', 'additionalProperties': False,
                  'required': ['metadata'],
                  'properties': {'metadata': {
                      'type': 'object', 'additionalProperties': False,
                      'patternProperties': {
                          r'^[a-zA-Z0-9-_:. ]{1,255}$': {
                              'type': ['string', 'null'],
                              'maxLength': 255}}}}}}}


def view(aggregate, with_members=True):
    body = {key: aggregate[key] for key in (
        'id', 'name', 'availability_zone', 'created_at', 'updated_at')}
    body.update(deleted=False, deleted_at=None)
    if with_members:
        body['hosts'] = list(aggregate['hosts'])
        body['metadata'] = dict(aggregate['metadata'])
    if api_req.version() >= '2.41':
        body['uuid'] = aggregate['uuid']
    return body


def _id(aggregate_id):
    """Nova's paths take the integer id: anything else is a 400; an
    integer no aggregate can have (negative, too big for the column) is
    simply not found, as in Nova."""
    # ASCII digits only: '²'.isdigit() is true and int() refuses it.
    if not re.fullmatch(r'-?[0-9]{1,40}', aggregate_id):
        raise exception.ValidationError(detail='id must be an integer.')
    value = int(aggregate_id)
    if not 0 <= value <= _MAX_ID:
        raise db_api.AggregateNotFound(aggregate_id=aggregate_id)
    return value


def _answer(aggregate, with_members=True):
    return flask.jsonify({'aggregate': view(aggregate, with_members)})


def _change(fn, *args, **kwargs):
    """``fn`` (a change of db/aggregates) with the other cells' mirrors
    written before the home rows commit, and put back if they do not."""
    hook = aggregate_cells.mirrors()
    try:
        return fn(*args, hook=hook, **kwargs)
    except Exception:
        if hook is not None:
            hook.undo()
        raise


def index():
    api_req.authorize('os_compute_api:os-aggregates:index')
    return flask.jsonify({'aggregates': [
        view(agg) for agg in db_api.aggregate_get_all()]})


@validation.schema(CREATE)
def create():
    api_req.authorize('os_compute_api:os-aggregates:create')
    body = validation.body()['aggregate']
    aggregate = db_api.aggregate_create(body['name'],
                                        body.get('availability_zone'))
    # Nova's create answer has neither hosts nor metadata.
    return _answer(aggregate, with_members=False)


def show(aggregate_id):
    api_req.authorize('os_compute_api:os-aggregates:show')
    return _answer(db_api.aggregate_get(_id(aggregate_id)))


@validation.schema(UPDATE)
def update(aggregate_id):
    api_req.authorize('os_compute_api:os-aggregates:update')
    values = validation.body()['aggregate']
    return _answer(_change(db_api.aggregate_update, _id(aggregate_id),
                           values))


def delete(aggregate_id):
    api_req.authorize('os_compute_api:os-aggregates:delete')
    db_api.aggregate_delete(_id(aggregate_id))
    # Nova answers this delete with 200 and an empty body, not 204.
    return flask.Response(status=200)


def _add_host(aggregate_id, name):
    api_req.authorize('os_compute_api:os-aggregates:add_host')
    agg_id = _id(aggregate_id)
    body = validation.body()[name]
    cell = aggregate_cells.host_cell(body['host'])
    try:
        return _change(db_api.aggregate_host_add, agg_id, body['host'],
                       service_checked=cell is not None)
    except db_api.InvalidAggregateAction as exc:
        # Nova answers a zone conflict on add_host with 409.
        raise exception.Conflict(exc.message)


def _remove_host(aggregate_id, name):
    api_req.authorize('os_compute_api:os-aggregates:remove_host')
    agg_id = _id(aggregate_id)
    body = validation.body()[name]
    return _change(db_api.aggregate_host_remove, agg_id, body['host'])


def _set_metadata(aggregate_id, name):
    api_req.authorize('os_compute_api:os-aggregates:set_metadata')
    agg_id = _id(aggregate_id)
    body = validation.body()[name]
    return _change(db_api.aggregate_metadata_set, agg_id, body['metadata'])


_ACTIONS = {'add_host': _add_host, 'remove_host': _remove_host,
            'set_metadata': _set_metadata}


@validation.schema(ACTION)
def action(aggregate_id):
    body = api_req.json_body()
    name = next(iter(body), None) if isinstance(body, dict) else None
    handler = _ACTIONS.get(name)
    if handler is None or len(body) != 1:
        validation.body()  # its 400 names what is wrong
        raise exception.ValidationError(
            detail='The action body must be one of %s.' % sorted(_ACTIONS))
    # The action's own rule before the body's 400, as Nova's policy
    # comes first for a non-admin.
    return _answer(handler(aggregate_id, name))
