"""Flavors: list, detail, show, create and delete (admin)."""
import flask

from nova_moves.api import app as api_app
from nova_moves.api import common
from nova_moves.api import input_guard
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
_FLAVORID = {'type': ['string', 'null'], 'minLength': 1, 'maxLength': 255,
             'pattern': r'^(?! )[a-zA-Z0-9. _-]+(?<! )$'}


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
             'rxtx_factor': _RXTX,
             'os-flavor-access:is_public': validation.BOOLEAN}
    if version >= '2.55':
        props['description'] = {'type': ['string', 'null'],
                                'maxLength': 65535}
    return {'type': 'object', 'additionalProperties': False,
            'required': ['flavor'],
            'properties': {'flavor': {
                'type': 'object', 'additionalProperties': False,
                'required': ['name', 'ram', 'vcpus', 'disk'],
                'properties': props}}}


def index():
    return flask.jsonify({'flavors': [
        {'id': f['flavorid'], 'name': f['name'],
         'links': common.links('flavors', f['flavorid']),
         **({'description': f['description']}
            if api_app.version() >= '2.55' else {})}
        for f in db_api.flavor_get_all()]})


def detail():
    return flask.jsonify({'flavors': [views.flavor(f)
                                      for f in db_api.flavor_get_all()]})


def show(flavor_id):
    return flask.jsonify({'flavor': views.flavor(db_api.flavor_get(
        flavor_id))})


def create():
    api_app.authorize('os_compute_api:os-flavor-manage:create')
    body = validation.validate(common.json_body(),
                               _create_schema(api_app.version()))['flavor']
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
              'description': body.get('description')}
    if body.get('id'):
        values['flavorid'] = str(body['id'])
    try:
        row = db_api.flavor_create(values)
    except exception.Conflict as exc:
        raise exception.Conflict(reason=exc.kwargs.get('reason'))
    return flask.jsonify({'flavor': views.flavor(row)})


def delete(flavor_id):
    api_app.authorize('os_compute_api:os-flavor-manage:delete')
    db_api.flavor_delete(flavor_id)
    return flask.Response(status=202)


def extra_specs(flavor_id):
    """Flavors carry no extra specs in nova_moves (the fake hypervisor has
    nothing to tune), but clients read them: python-openstackclient's
    ``flavor show`` fetches them below 2.61."""
    api_app.authorize('os_compute_api:os-flavor-extra-specs:index')
    db_api.flavor_get(flavor_id)
    return flask.jsonify({'extra_specs': {}})


def extra_spec(flavor_id, key):
    api_app.authorize('os_compute_api:os-flavor-extra-specs:show')
    db_api.flavor_get(flavor_id)
    raise exception.NotFound('Flavor %s has no extra spec with key %s.'
                             % (flavor_id, key))


def register(app):
    app.add_url_rule('/v2.1/flavors', 'flavors_index', index,
                     methods=['GET'])
    app.add_url_rule('/v2.1/flavors', 'flavors_create', create,
                     methods=['POST'])
    app.add_url_rule('/v2.1/flavors/detail', 'flavors_detail', detail,
                     methods=['GET'])
    app.add_url_rule('/v2.1/flavors/<flavor_id>', 'flavors_show', show,
                     methods=['GET'])
    app.add_url_rule('/v2.1/flavors/<flavor_id>', 'flavors_delete', delete,
                     methods=['DELETE'])
    app.add_url_rule('/v2.1/flavors/<flavor_id>/os-extra_specs',
                     'flavors_extra_specs', extra_specs, methods=['GET'])
    app.add_url_rule('/v2.1/flavors/<flavor_id>/os-extra_specs/<key>',
                     'flavors_extra_spec', extra_spec, methods=['GET'])
