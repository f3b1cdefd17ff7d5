"""The limits a server's metadata and its server group membership obey,
shared by boot (servers.py), the metadata resource (server_metadata.py)
and server groups: Nova's limits on metadata (keys of 1-255 characters
from [a-zA-Z0-9-_:. ], string values of at most 255, at most the
project's metadata_items quota in all: a 403 past it, as Nova's
OverQuota), the group a boot names and the key pair a boot or rebuild
names. A leaf: no handler module."""
from nova_moves.api import request as api_req
from nova_moves.api import quota_rules
from nova_moves import cells
from nova_moves.db import api as db_api
from nova_moves import exception

_KEY = '^[a-zA-Z0-9-_:. ]{1,255}$'
METADATA = {'type': 'object',
            'patternProperties': {_KEY: {'type': 'string',
                                         'maxLength': 255}},
            'additionalProperties': False}
# Nova's: a server's uuid, with or without its hyphens.
_SERVER_UUID = {'type': 'string', 'pattern': (
    '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?'
    '[0-9a-fA-F]{12}$')}
_HOST_HINT = {'oneOf': [_SERVER_UUID,
                        {'type': 'array', 'items': _SERVER_UUID}]}
# The boot's hints: any, as Nova's (kept for 2.100's views); those the
# scheduler acts on have Nova's form (a 400 naming the field otherwise).
HINTS = {'type': 'object', 'properties': {'same_host': _HOST_HINT,
                                          'different_host': _HOST_HINT}}


class MetadataLimitExceeded(exception.NovaMovesException):
    code = 403
    msg_fmt = ('Quota exceeded for metadata_items: Requested %(requested)d, '
               'but the limit is %(allowed)d.')


def metadata_checker(project_id):
    """check(count) for db instance_metadata_update: 403 past the
    project's metadata_items (-1 is unlimited)."""
    allowed = quota_rules.limits(project_id)['metadata_items']

    def check(count):
        if 0 <= allowed < count:
            raise MetadataLimitExceeded(requested=count, allowed=allowed)
    return check


def check_metadata_count(project_id, metadata):
    """For a boot: the same limit before anything is written."""
    metadata_checker(project_id)(len(metadata or {}))


def group_hint(ctxt, body):
    """The server group a boot request names (``os:scheduler_hints``
    ``group``), checked before anything is written: 400 for a malformed
    or unknown group or another project's."""
    hints = body.get('os:scheduler_hints') or body.get(
        'OS-SCH-HNT:scheduler_hints') or {}
    group_id = hints.get('group')
    if group_id is None:
        return None
    if isinstance(group_id, list) and len(group_id) == 1:
        group_id = group_id[0]
    if not isinstance(group_id, str) or len(group_id) > 255:
        raise exception.ValidationError(
            detail="Invalid input for field 'os:scheduler_hints/group'.")
    try:
        return db_api.server_group_get(group_id, project_id=ctxt.project_id)
    except db_api.ServerGroupNotFound:
        raise exception.Invalid(
            reason='Invalid server group %s.' % group_id[:64])


def key_pair(key_name):
    """(key_name, key_data) of the caller's key pair ``key_name`` for a
    boot or rebuild (None unsets); an unknown name is Nova's 400."""
    if key_name is None:
        return None, None
    try:
        with cells.target(None):  # API-level, as flavors
            keypair = db_api.key_pair_get(api_req.context().user_id,
                                          key_name)
    except db_api.KeypairNotFound:
        raise exception.Invalid('Invalid key_name provided.')
    return keypair['name'], keypair['public_key']


class PinnedZoneConflict(exception.Conflict):
    msg_fmt = '%(reason)s'


def pinned_zone(instance, wanted, current_zone):
    """The instance columns of a 2.104 pinned_availability_zone update.

    null unpins (any zone on the next move: the moves read requested_az,
    and the shown zone becomes the host's); the server's current zone
    (``current_zone``) re-pins; its pinned zone again is a no-op. Another
    zone is a 409 (the server is not there: Nova never moves it for
    this), as is one pinned zone for another (unpin first)."""
    pinned = instance.get('requested_az')
    if wanted == pinned:
        return {}
    if wanted is None:
        return {'requested_az': None, 'availability_zone': None}
    if pinned is not None:
        raise PinnedZoneConflict(reason=(
            'The server is pinned to availability zone %s; unpin it '
            '(pinned_availability_zone: null) before pinning it to %s.'
            % (pinned, wanted)))
    if wanted != current_zone:
        raise PinnedZoneConflict(reason=(
            'The server is in availability zone %s, not %s: it can only be '
            'pinned to the zone it is in.' % (current_zone or '(none)',
                                               wanted)))
    return {'requested_az': wanted, 'availability_zone': wanted}
