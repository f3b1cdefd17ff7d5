"""Server actions rescue and unrescue (Nova's os-rescue).

rescue (ACTIVE, SHUTOFF or ERROR, no task_state; task_state rescuing):
the server's compute boots a rescue image, ``rescue_image_ref`` or the
server's own image, with the server's disk attached as a second disk
(a stable device rescue when the image has hw_rescue_device or
hw_rescue_bus: the server's disk first, unchanged, the rescue disk
after it; virt/rescue_devices.py) -> RESCUED (status RESCUE), running.
200 with the admin password, the one given or a generated one (Nova's
with [api] enable_instance_password, its default; the fake guest has no
agent to set it in, as changePassword). unrescue (RESCUED; task_state
unrescuing): the guest boots its own disk again -> ACTIVE; 202. A
failure of either is ERROR with a fault (Nova's).

The claim is the row's of the lifecycle table (moves/lifecycle.py): one
compare-and-swap with the instance action, so a server in another state
(a PAUSED one, say), or one another request claimed first, is a 409
with nothing written. A rescued server refuses every other action the
tables do not allow from RESCUED (reboot, rebuild, the moves, pause,
shelve...) with 409; delete works.
"""
import secrets

import flask

from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves.api import guards
from nova_moves.api import image_refs
from nova_moves.api import lifecycle_claim
from nova_moves.api import validation
from nova_moves import exception
from nova_moves.moves import lifecycle as lc_table

POLICIES = {'rescue': 'os_compute_api:os-rescue',
            'unrescue': 'os_compute_api:os-unrescue'}

# Nova's schema (parameter_types.admin_password, image_id); an image id
# here is any image the store lists, so it is checked there, not by
# format.
_RESCUE = {'type': 'object', 'required': ['rescue'],
           'additionalProperties': False,
           'properties': {'rescue': {
               'type': ['object', 'null'], 'additionalProperties': False,
               'properties': {
                   'adminPass': {'type': 'string', 'maxLength': 255},
                   'rescue_image_ref': {'type': 'string', 'minLength': 1,
                                        'maxLength': 255}}}}}
_UNRESCUE = {'type': 'object', 'required': ['unrescue'],
             'additionalProperties': False,
             'properties': {'unrescue': {
                 'type': ['null', 'object'], 'properties': {},
                 'additionalProperties': False}}}


class RescueNotSupported(exception.Conflict):
    msg_fmt = ('%(action)s needs every compute at RPC version 1.10 '
               '([upgrade_levels] compute caps below it).')


class RescueImageNotFound(exception.Invalid):
    msg_fmt = 'Rescue image %(image_id)s could not be found.'


def _compute(name, instance):
    compute = api_req.services().compute
    if not compute.can_rescue():
        raise RescueNotSupported(action=name)
    guards.require_host(name, instance)
    return compute


def _cast(name, instance, compute, **kwargs):
    lifecycle_claim.claim_and_cast(name, name, name, instance, compute,
                                   **kwargs)


@validation.schema(_RESCUE)
def rescue(server_id, value):
    body = validation.body()['rescue'] or {}
    instance = common.get_instance(server_id, POLICIES['rescue'])
    compute = _compute('rescue', instance)
    # Nova checks the state before it looks the image up: a PAUSED
    # server is a 409 whatever the image.
    row = lc_table.row('rescue')
    common.check_state(instance, 'rescue', row.vm_states)
    image_ref = body.get('rescue_image_ref')
    if image_ref is not None and not image_refs.known(image_ref):
        raise RescueImageNotFound(image_id=image_ref)
    # The image is named in the cast: a redo after a restart of the host
    # (no image in it) keeps what the guest recorded.
    _cast('rescue', instance, compute,
          rescue_image_ref=image_ref or instance.get('image_ref'))
    return flask.jsonify(
        {'adminPass': body.get('adminPass') or secrets.token_urlsafe(9)})


@validation.schema(_UNRESCUE)
def unrescue(server_id, value):
    validation.body()
    instance = common.get_instance(server_id, POLICIES['unrescue'])
    _cast('unrescue', instance, _compute('unrescue', instance))
    return common.accepted()


ACTIONS = {'rescue': rescue, 'unrescue': unrescue}
