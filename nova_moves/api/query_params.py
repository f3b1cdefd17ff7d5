"""The query parameters each operation accepts: from 2.102 any other is
a 400 naming it (Nova's 2.102 query schemas, additionalProperties false
on every API). Below 2.102 unknown parameters are ignored, or refused
from 2.75 where Nova's 2.75 did: the servers lists (``STRICT_SINCE``,
Nova's index_query_v275), keypairs and tenant usage (their handlers).

The declaration is the OpenAPI operation's parameter list
(openapi_operations.OPERATIONS, the routing table's operation ids), so
the document and the check cannot disagree; ``UNDOCUMENTED`` adds the
parameters Nova's schemas accept that nova_moves takes and ignores. The
dispatcher (app.py) calls ``check`` before any handler runs."""
import functools

import flask

from nova_moves.api import input_guard
from nova_moves.api import openapi_operations

STRICT_FROM = '2.102'
# Operations Nova's query schemas closed earlier than 2.102.
STRICT_SINCE = {'servers_index': '2.75', 'servers_detail': '2.75'}
# Nova's GET /servers[/detail] query schema (2.75+): filters a client may
# send that are not applied here, accepted and ignored (sort_key and
# sort_dir are applied: api/server_sort).
_NOVA_SERVER_PARAMS = (
    'user_id', 'tenant_id', 'launch_index', 'image_ref', 'kernel_id',
    'ramdisk_id', 'hostname', 'key_name', 'power_state', 'vm_state',
    'task_state', 'node', 'launched_at', 'terminated_at',
    'availability_zone', 'display_name', 'description',
    'display_description', 'locked_by', 'uuid', 'root_device_name',
    'config_drive', 'access_ip_v4', 'access_ip_v6', 'auto_disk_config',
    'progress', 'soft_deleted', 'changes-before',
    'ip', 'ip6', 'created_at', 'tags', 'tags-any', 'not-tags',
    'not-tags-any', 'locked', 'pinned_availability_zone')
# Nova's JOINED_TABLE_QUERY_PARAMS_SERVERS: its schema takes them so that
# the list refuses them by name (api/server_index.refuse_invalid_filters).
JOINED_TABLE_FILTERS = ('block_device_mapping', 'services', 'metadata',
                        'system_metadata', 'info_cache', 'security_groups',
                        'pci_devices')
_NOVA_SERVER_PARAMS += JOINED_TABLE_FILTERS
UNDOCUMENTED = {
    'servers_index': _NOVA_SERVER_PARAMS,
    'servers_detail': _NOVA_SERVER_PARAMS,
    # Nova's: the keypair of another user (2.10, admin).
    'keypairs_delete': ('user_id',),
    'quota_sets_update': ('user_id', 'force'),
    'quota_sets_delete': ('user_id',),
    'quota_sets_detail': ('user_id',),
}


@functools.lru_cache(maxsize=None)
def accepted(operation_id):
    """The parameter names ``operation_id`` accepts (none when its
    OpenAPI operation lists none); the tables are static, so each
    operation's set is built once, not per request."""
    name = openapi_operations.ALIASES.get(operation_id, operation_id)
    spec = openapi_operations.OPERATIONS.get(name)
    documented = spec[1] if spec else ()
    return frozenset(documented) | frozenset(UNDOCUMENTED.get(name, ()))


def declared(operation_id):
    """Whether the OpenAPI table describes ``operation_id`` at all (a
    route without one would accept nothing: tests require one)."""
    name = openapi_operations.ALIASES.get(operation_id, operation_id)
    return name in openapi_operations.OPERATIONS


def check(operation_id):
    """400 from 2.102 (or the operation's STRICT_SINCE) for a query
    parameter ``operation_id`` does not accept; unversioned documents
    (no microversion) are never checked."""
    version = flask.g.get('version')
    name = openapi_operations.ALIASES.get(operation_id, operation_id)
    if version is None or version < STRICT_SINCE.get(name, STRICT_FROM):
        return
    args = flask.request.args
    if name in STRICT_SINCE:
        # Nova's servers schemas take '_'-prefixed names (patternProperties)
        # for the list to refuse as "Invalid filter field".
        args = [a for a in args if not a.startswith('_')]
    input_guard.refuse_unknown_query(args, accepted(operation_id))
