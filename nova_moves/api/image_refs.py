"""Which image ids exist, for a handler that takes one (a leaf: the
images resource serves them, rescue checks its ``rescue_image_ref``
without importing that handler module)."""
import uuid

from nova_moves.api import request as api_req
from nova_moves import conf
from nova_moves import exception
from nova_moves import image_store

NAMESPACE = uuid.UUID('5b3f5c2e-9a6e-4c1c-9d43-6f1d3f0f2a11')


def image_id(name):
    """The stable id of a name in ``[api] image_names``."""
    return str(uuid.uuid5(NAMESPACE, name))


def visible(record, ctxt):
    """A store image: public, or the caller's project's, or admin."""
    return (record['visibility'] == 'public' or ctxt.is_admin or
            record['owner'] == ctxt.project_id)


def known(image_ref):
    """Whether ``image_ref`` is a configured image or one of the image
    store the caller sees (a shelve's snapshot record is no image to
    boot anything else from)."""
    if image_ref in {image_id(n) for n in conf.CONF.api.image_names}:
        return True
    try:
        record = image_store.ImageStore().get(image_ref)
    except (exception.ImageNotFound, OSError, ValueError):
        return False
    return visible(record, api_req.context())
