"""GET /v2.1/images[/{id}]: the fake hypervisor's images, Glance v2 style.

An ``--os-endpoint`` client (python-openstackclient with admin_token)
resolves ``server create --image NAME`` through the image service it
discovered on this endpoint, i.e. /v2.1/images (api/versions.py). Nova's
own image proxy at that path was removed in 2.36 and had another shape;
these bodies are Glance v2's because that is the client asking. The list
comes from ``[api] image_names``; ids are stable uuid5s of the names.

Shelve snapshots: Nova's shelve uploads a snapshot image named
``<server name>-shelved`` to Glance, unshelve boots from it and deletes
it (so does deleting the shelved server). Here the fake guest has no
disk to upload, so the snapshot is the record the shelve left: every
server in SHELVED or SHELVED_OFFLOADED is listed with one private image
of its project, whose id is derived from the request id of the shelve
that made it (a new id for each shelve). It exists exactly as long as
Nova's would: from the end of the shelve to the end of the unshelve or
the server's deletion. The owner's project and admins see it.

The local image store (image_store.py, ``[image] store_path``): the
images the QEMU driver boots, added by ``nova-moves-manage image import``
or by a driver's snapshot, listed between the names and the shelved
records with their real sizes, dates, visibility and owner. A private one
is seen by its owner's project and admins only (404 to the others, as
Glance). A store image whose id is a shelved record's replaces that
record: a driver that snapshots a shelve under the record's id makes the
record real.
"""
import uuid

import flask
from oslo_log import log as logging

from nova_moves.api import cell_lists
from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves.api import image_refs
from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import image_store
from nova_moves import states
from nova_moves import timeutil

LOG = logging.getLogger(__name__)

_NAMESPACE = image_refs.NAMESPACE
_CREATED = '2026-01-01T00:00:00Z'


image_id = image_refs.image_id


def _image(name, ident=None):
    ident = ident or image_id(name)
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


SHELVED_STATES = (states.SHELVED, states.SHELVED_OFFLOADED)


def _shelve_request_id(instance_uuid):
    for action in db_api.actions_get(instance_uuid):
        if action['action'] == 'shelve':
            return action['request_id'], action['start_time']
    return None, None


def shelved_image_id(instance_uuid, request_id):
    return str(uuid.uuid5(_NAMESPACE, 'shelved:%s:%s' % (
        instance_uuid, request_id)))


def _shelved_image(instance):
    request_id, started = _shelve_request_id(instance['uuid'])
    ident = shelved_image_id(instance['uuid'], request_id)
    image = _image(instance['display_name'] + '-shelved', ident)
    when = timeutil.api_time_z(started) if started else _CREATED
    image.update({
        'visibility': 'private',
        'owner': instance['project_id'], 'created_at': when,
        'updated_at': when,
        # The properties Nova's snapshot carries.
        'image_type': 'snapshot', 'instance_uuid': instance['uuid'],
        'base_image_ref': instance['image_ref'] or ''})
    return image


def _shelved():
    ctxt = api_req.context()
    # Every cell's shelved servers (cell_lists: a one-cell deployment
    # reads its own database alone).
    instances = cell_lists.gather_or_skip(
        db_api.instance_get_all,
        project_id=None if ctxt.is_admin else ctxt.project_id,
        vm_states=SHELVED_STATES)
    return [_shelved_image(i) for _cell, i in instances]


def _stored_image(record):
    image = _image(record['name'], record['id'])
    image.update({key: record[key] for key in (
        'status', 'visibility', 'owner', 'disk_format', 'container_format',
        'size', 'virtual_size', 'min_disk', 'min_ram', 'created_at',
        'updated_at')})
    # Glance's property for a kernel command line (Nova's libvirt driver
    # reads it).
    if record.get('cmdline'):
        image['os_command_line'] = record['cmdline']
    # Glance v2 shows custom properties as top-level keys; never one that
    # would replace a core field.
    for key, value in (record.get('properties') or {}).items():
        image.setdefault(key, value)
    return image


_visible = image_refs.visible


def _stored():
    ctxt = api_req.context()
    try:
        records = image_store.ImageStore().list()
    except OSError as exc:
        # A store this API host cannot read must not take the names and
        # the shelved records (which clients resolve servers' images
        # with) down too.
        LOG.error('Cannot list the image store: %s', exc)
        return []
    return [_stored_image(r) for r in records if _visible(r, ctxt)]


def _all():
    stored = _stored()
    ids = {i['id'] for i in stored}
    return [_image(name) for name in conf.CONF.api.image_names] + \
        stored + [i for i in _shelved() if i['id'] not in ids]


def index():
    api_req.context()
    args = flask.request.args
    images = _all()
    # Glance's filters, each an exact match; visibility=all is no filter.
    for key in ('name', 'status', 'visibility'):
        value = args.get(key)
        if value and not (key == 'visibility' and value == 'all'):
            images = [i for i in images if i[key] == value]
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
    raise exception.ImageNotFound(image_id=image_ref)
