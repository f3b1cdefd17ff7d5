"""GET /v2.1/images[/{id}]: the fake hypervisor's images, Glance v2 style.

An ``--os-endpoint`` client (python-openstackclient with admin_token)
resolves ``server create --image NAME`` through the image service it
discovered on this endpoint, i.e. /v2.1/images (api/versions.py). Nova's
own image proxy at that path was removed in 2.36 and had another shape;
these bodies are Glance v2's because that is the client asking. The list
comes from ``[api] image_names``; ids are stable uuid5s of the names.
"""
import uuid

import flask

from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves import conf
from nova_moves import exception

_NAMESPACE = uuid.UUID('5b3f5c2e-9a6e-4c1c-9d43-6f1d3f0f2a11')
_CREATED = '2026-01-01T00:00:00Z'


def image_id(name):
    return str(uuid.uuid5(_NAMESPACE, name))


def _image(name):
    ident = image_id(name)
    return {'id': ident, 'name': name, 'status': 'active',
            'visibility': 'public', 'protected': False, 'os_hidden': False,
            'container_format': 'bare', 'disk_format': 'raw', 'size': 0,
            'virtual_size': 0, 'min_disk': 0, 'min_ram': 0, 'checksum': None,
            'os_hash_algo': None, 'os_hash_value': None, 'owner': None,
            'tags': [], 'created_at': _CREATED, 'updated_at': _CREATED,
            'self': '/v2/images/%s' % ident,
            'file': '/v2/images/%s/file' % ident,
            'schema': '/v2/schemas/image',
            'links': common.links('images', ident)}


def _all():
    return [_image(name) for name in conf.CONF.api.image_names]


def index():
    api_req.context()
    args = flask.request.args
    images = _all()
    if args.get('name'):
        images = [i for i in images if i['name'] == args['name']]
    ids = args.get('id')
    if ids:
        wanted = set(ids[3:].split(',') if ids.startswith('in:') else [ids])
        images = [i for i in images if i['id'] in wanted]
    return flask.jsonify({'images': images, 'schema': '/v2/schemas/images',
                          'first': '/v2/images'})


def show(image_ref):
    api_req.context()
    for image in _all():
        if image_ref == image['id']:
            return flask.jsonify(image)
    raise exception.NotFound('Image %s could not be found.' % image_ref)
