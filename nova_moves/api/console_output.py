"""Server action os-getConsoleOutput (Nova's os-console-output): the
last ``length`` lines of the server's serial console, asked of its host
with a short RPC call (compute RPC 1.9, compute/console.py).

``length`` is Nova's: an integer or a string of digits, at least -1;
-1 and null (or no length) mean the whole console. Nova's schema lets a
string such as "-5" through and then tails nonsense; here a string is
held to the same minimum (400). No instance action is recorded and a
lock does not stop it (Nova's is not lock-checked): it changes nothing.

404 for an unknown server (or another project's), 409 when it has no
host (never scheduled, shelved offloaded) or its guest is not on the
host the database names (a move or delete got there first), 501 when
the hypervisor has no console to read.
"""
import re

import flask

from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves.api import validation
from nova_moves import exception

ACTION = 'os-getConsoleOutput'
RULE = 'os_compute_api:os-console-output'
# Nova's schema (nova/api/openstack/compute/schemas/console_output.py).
SCHEMA = {
    'type': 'object',
    'properties': {ACTION: {
        'type': 'object',
        'properties': {'length': {
            'type': ['integer', 'string', 'null'],
            'pattern': '^-?[0-9]+$',
            # -1 (and null) mean no limit.
            'minimum': -1}},
        'additionalProperties': False}},
    'required': [ACTION],
    'additionalProperties': False}
# Nova filters these out of the output (a JSON string may carry them,
# but terminals and old XML clients choke on them): not \t and \n.
_CONTROL = re.compile('[\x00-\x08\x0B-\x1F]')


def tail_length(length):
    """The RPC's tail_length for the body's ``length``: None for all."""
    if length is None:
        return None
    number = int(length)
    if number < -1:  # only a string can get here: the schema has minimum
        raise exception.ValidationError(
            detail="Invalid input for field 'length'. Value: %s. It is "
                   "less than the minimum of -1" % number)
    return None if number == -1 else number


@validation.schema(SCHEMA)
def get_console_output(server_id, value):
    # Nova validates the body before it looks the server up.
    length = tail_length(validation.body()[ACTION].get('length'))
    instance = common.get_instance(server_id, RULE)
    if not instance['host']:
        raise exception.InstanceNotReady(
            instance_id=instance['uuid'], reason='it is on no host')
    try:
        output = api_req.services().compute.get_console_output(
            api_req.context(), instance['host'], instance['uuid'], length)
    except NotImplementedError:
        raise exception.FeatureNotSupported(feature='Console output',
                                            host=instance['host'])
    return flask.jsonify({'output': _CONTROL.sub('', output or '')})


ACTIONS = {ACTION: get_console_output}
