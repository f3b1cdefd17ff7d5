"""GET/DELETE /servers/{id}/os-server-password (Nova's
os-server-password): the server's encrypted password as its guest
posted it to the metadata service, kept as Nova keeps it in the
server's system metadata, cut in four 255-character chunks
(``password_0`` .. ``password_3``); '' when there is none.

DELETE clears the stored copy only (204): the guest's password does not
change, as in Nova.
"""
import flask

from nova_moves.api import common
from nova_moves.db import api as db_api

CHUNKS = 4
CHUNK_LENGTH = 255
RULE = 'os_compute_api:os-server-password:%s'


def chunks(password):
    """Nova's convert_password: the system metadata items of
    ``password`` (None clears: every chunk '')."""
    password = password or ''
    items = {}
    for index in range(CHUNKS):
        items['password_%d' % index] = password[:CHUNK_LENGTH]
        password = password[CHUNK_LENGTH:]
    return items


def extract(system_metadata):
    """Nova's extract_password: the chunks joined, None when empty."""
    password = ''.join(system_metadata.get('password_%d' % index) or ''
                       for index in range(CHUNKS))
    return password or None


def index(server_id):
    instance = common.get_instance(server_id, RULE % 'show')
    password = extract(db_api.system_metadata_get(instance['uuid']))
    return flask.jsonify({'password': password or ''})


def clear(server_id):
    instance = common.get_instance(server_id, RULE % 'clear')
    db_api.system_metadata_update(instance['uuid'], chunks(None))
    return common.no_content()
