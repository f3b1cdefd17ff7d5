"""Flavors: list, detail, show, create and delete (admin). Extra specs
and access lists: api/flavor_extras.py."""
import re

import flask

from oslo_utils import strutils

from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves.api import input_guard
from nova_moves.api import microversion
from nova_moves.api import query
from nova_moves.api import validation
from nova_moves.api import views
from nova_moves.db import api as db_api
from nova_moves import exception

MAX_INT = 2 ** 31 - 1  # the database's Integer columns, as in Nova
_NAME = {'type': 'string', 'minLength': 1, 'maxLength': 255,
         'pattern': r'^(?! )[^\x00-\x1f\x7f]*(?<! )$'}
_INT = {'type': ['integer', 'string'], 'pattern': '^[0-9]{1,10}$',
        'minimum': 0, 'maximum': MAX_INT}
_POS_INT = {'type': ['integer', 'string'], 'pattern': '^[0-9]*[1-9][0-9]*$',
            'minimum': 1, 'maximum': MAX_INT}
_SWAP = {'type': ['integer', 'string'], 'pattern': '^[0-9]{0,10}$',
         'minimum': 0, 'maximum': MAX_INT}
# Nova's: a finite positive number; NaN/Infinity never parse (input_guard)
# and the string form must look like a number.
_RXTX = {'type': ['number', 'string'], 'pattern': r'^[0-9]+(\.[0-9]+)?$',
         'minimum': 0, 'maximum': 3.40282e+38}
# Nova's: a string or a number (tempest always sends a number), stored
# and shown as a string; the string form is checked once made (_flavorid).
_FLAVORID = {'type': ['string', 'number', 'null'], 'minLength': 1,
             'maxLength': 255, 'pattern': r'^(?! )[a-zA-Z0-9. _-]+(?<! )$'}
_FLAVORID_RE = re.compile(_FLAVORID['pattern'])
# GET /flavors?sort_key=: the flavor columns Nova sorts by.
SORT_KEYS = ('created_at', 'description', 'disabled', 'ephemeral_gb',
             'flavorid', 'id', 'is_public', 'memory_mb', 'name', 'root_gb',
             'rxtx_factor', 'swap', 'updated_at', 'vcpus')


def _bounded(body, key, default, cast=int, maximum=MAX_INT, positive=False):
    """A numeric field (the schema has checked its shape) within the
    column's range; a string form is bounded only here."""
    value = body.get(key)
    if value in (None, ''):
        return default
    value = cast(value)
    if not 0 <= value <= maximum or (positive and not value):
        raise exception.ValidationError(
            detail="Invalid input for field '%s'. Value: %s. It must be "
                   "%s %s and at most %s." % (
                       key, input_guard.excerpt(value),
                       'greater than' if positive else 'at least', 0,
                       maximum))
    return value


def _create_schema(version):
    props = {'name': _NAME, 'id': _FLAVORID,
             'ram': _POS_INT, 'vcpus': _POS_INT, 'disk': _INT,
             'OS-FLV-EXT-DATA:ephemeral': _INT, 'swap': _SWAP,
             'os-flavor-access:is_public': validation.BOOLEAN}
    if version < '2.102':
        props['rxtx_factor'] = _RXTX  # removed in 2.102, as Nova
    if version >= '2.55':
        props['description'] = {'type': ['string', 'null'],
                                'maxLength': 65535}
    return {'type': 'object', 'additionalProperties': False,
            'required': ['flavor'],
            'properties': {'flavor': {
                'type': 'object', 'additionalProperties': False,
                'required': ['name', 'ram', 'vcpus', 'disk'],
                'properties': props}}}


# Nova bounds a description by characters; MySQL's TEXT column holds
# 65535 bytes (4-byte characters past that were a 500 there): bounded
# by bytes, the same on every database.
DESCRIPTION_BYTES = 65535


def _description(body):
    value = body.get('description')
    if value is not None and len(value.encode('utf-8')) > DESCRIPTION_BYTES:
        raise exception.ValidationError(
            detail="Invalid input for field 'flavor/description': it is "
                   "longer than %d bytes in UTF-8." % DESCRIPTION_BYTES)
    return value


def _int_filter(name, column):
    value = query.int_arg(name)
    return None if value is None else (column, value)


def _is_public():
    """Nova's: public flavors unless an admin asks for is_public=false
    or none (every flavor)."""
    if not api_req.context().is_admin:
        return True
    value = flask.request.args.get('is_public')
    if value is None:
        return True
    if value.lower() == 'none':
        return None
    try:
        return strutils.bool_from_string(value, strict=True)
    except ValueError:
        raise exception.ValidationError(
            detail='Invalid is_public filter [%s]'
            % input_guard.excerpt(value))


def _sorting():
    args = flask.request.args
    key = args.get('sort_key') or 'flavorid'
    direction = args.get('sort_dir') or 'asc'
    # 2.102 removed rxtx_factor from flavors: no sorting by it either.
    keys = [k for k in SORT_KEYS
            if k != 'rxtx_factor' or api_req.version() < '2.102']
    if key not in keys:
        raise exception.ValidationError(
            detail='Invalid sort_key %s: it must be one of %s.'
            % (input_guard.excerpt(key), ', '.join(keys)))
    if direction not in ('asc', 'desc'):
        raise exception.ValidationError(
            detail="Invalid sort_dir %s: it must be 'asc' or 'desc'."
            % input_guard.excerpt(direction))
    return key, direction == 'desc'


def _listed():
    """GET /flavors[/detail]: Nova's filters (minRam, minDisk,
    is_public, name from 2.102; disabled ones hidden from non-admins),
    sort_key/sort_dir
    (flavorid ascending by default, the row id breaking ties), then one
    page (marker: a flavor id)."""
    minimums = [f for f in (_int_filter('minRam', 'memory_mb'),
                            _int_filter('minDisk', 'root_gb')) if f]
    is_public = _is_public()
    # 2.102: an exact name (below, ignored as any unknown parameter).
    name = (flask.request.args.get('name')
            if api_req.version() >= '2.102' else None)
    key, reverse = _sorting()
    ctxt = api_req.context()
    # Nova's: a project also sees the private flavors it has access to.
    granted = (set() if ctxt.is_admin or not ctxt.project_id
               else db_api.flavor_access_projects_flavors(ctxt.project_id))
    flavors = [f for f in db_api.flavor_get_all()
               if all(f[column] >= value for column, value in minimums)
               and (is_public is None or f['is_public'] == is_public
                    or f['id'] in granted)
               and (ctxt.is_admin or not f['disabled'])
               and (name is None or f['name'] == name)]
    flavors.sort(key=lambda f: (f[key] is not None, f[key], f['id']),
                 reverse=reverse)
    flavors, limit = common.page(flavors, key=lambda f: f['flavorid'])
    return flavors, limit


def _list_body(flavors, limit, view, path):
    return common.list_body('flavors', [view(f) for f in flavors], flavors,
                            limit, path, key=lambda f: f['flavorid'])


def index():
    flavors, limit = _listed()
    return _list_body(flavors, limit, lambda f: {
        'id': f['flavorid'], 'name': f['name'],
        'links': common.links('flavors', f['flavorid']),
        **({'description': f['description']}
           if api_req.version() >= '2.55' else {})}, 'flavors')


def detail():
    flavors, limit = _listed()
    return _list_body(flavors, limit, views.flavor, 'flavors/detail')


def _flavorid(value):
    """The stored id: a number as its string (Nova's str()), checked
    against the string pattern."""
    text = value if isinstance(value, str) else str(value)
    if len(text) > 255 or not _FLAVORID_RE.match(text):
        raise exception.ValidationError(
            detail="Invalid input for field 'id'. Value: %s. It must be a "
                   "string of letters, digits, '.', '_', '-' or spaces, or "
                   "a number." % input_guard.excerpt(value))
    return text


def show(flavor_id):
    flavor = common.visible_flavor(flavor_id)
    return flask.jsonify({'flavor': views.flavor(flavor)})


_UPDATE_SCHEMA = {
    'type': 'object', 'required': ['flavor'], 'additionalProperties': False,
    'properties': {'flavor': {
        'type': 'object', 'required': ['description'],
        'additionalProperties': False,
        'properties': {'description': {'type': ['string', 'null'],
                                       'maxLength': 65535}}}}}


@validation.schema(_UPDATE_SCHEMA, min_version='2.55')
def update(flavor_id):
    """PUT /flavors/{id}: the description, from 2.55 (404 below, as
    Nova's route does not exist there)."""
    if api_req.version() < '2.55':
        raise exception.NotFound('Updating a flavor needs microversion '
                                 '2.55 or later.')
    api_req.authorize('os_compute_api:os-flavor-manage:update')
    body = validation.body()['flavor']
    description = _description(body)
    common.visible_flavor(flavor_id)
    row = db_api.flavor_update(flavor_id, {'description': description})
    return flask.jsonify({'flavor': views.flavor(row)})


@validation.schema(_create_schema(microversion.APIVersion('2.1')),
                   max_version='2.54')
@validation.schema(_create_schema(microversion.APIVersion('2.55')),
                   min_version='2.55', max_version='2.101')
@validation.schema(_create_schema(microversion.APIVersion('2.102')),
                   min_version='2.102')
def create():
    api_req.authorize('os_compute_api:os-flavor-manage:create')
    body = validation.body()['flavor']
    values = {'name': body['name'],
              'memory_mb': _bounded(body, 'ram', 0),
              'vcpus': _bounded(body, 'vcpus', 0),
              'root_gb': _bounded(body, 'disk', 0),
              'ephemeral_gb': _bounded(body, 'OS-FLV-EXT-DATA:ephemeral', 0),
              'swap': _bounded(body, 'swap', 0),
              'rxtx_factor': _bounded(body, 'rxtx_factor', 1.0, float,
                                      3.40282e+38, positive=True),
              'is_public': validation.to_bool(
                  body.get('os-flavor-access:is_public', True)),
              'description': _description(body)}
    if body.get('id'):
        values['flavorid'] = _flavorid(body['id'])
    try:
        row = db_api.flavor_create(values)
    except exception.Conflict as exc:
        raise exception.Conflict(reason=exc.kwargs.get('reason'))
    return flask.jsonify({'flavor': views.flavor(row)})


def delete(flavor_id):
    api_req.authorize('os_compute_api:os-flavor-manage:delete')
    db_api.flavor_delete(flavor_id)
    return flask.Response(status=202)

