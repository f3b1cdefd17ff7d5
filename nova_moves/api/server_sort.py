"""sort_key / sort_dir of GET /servers[/detail], as Nova reads them
(api/openstack/common.get_sort_params, servers.remove_invalid_sort_keys,
schemas/servers.py VALID_SORT_KEYS, db/utils.process_sort_params).

The keys and directions pair up in the order given; with no sort_key the
order is created_at, with no sort_dir desc, and a key without a
direction takes the first direction given. A key outside Nova's list is
a 400 at every microversion; the keys Nova's schema lists but ignores
(SERVER_LIST_IGNORE_SORT_KEY: id, vcpus, ...) are dropped with their
direction below 2.75 and a 400 from 2.75 (``locked`` is a key from 2.73).
``host`` and ``node`` are an admin's: 403 to anyone else. A direction
other than asc/desc, or more directions than keys, is a 400."""
import flask

from nova_moves.api import input_guard
from nova_moves.api import request as api_req
from nova_moves.db import keyset
from nova_moves.db import server_order
from nova_moves import exception

# Nova's SERVER_LIST_IGNORE_SORT_KEY: keys once accepted, now ignored.
IGNORED = ('architecture', 'cell_name', 'cleaned', 'default_ephemeral_device',
           'default_swap_device', 'deleted', 'deleted_at',
           'disable_terminate', 'ephemeral_gb', 'ephemeral_key_uuid', 'id',
           'key_data', 'launched_on', 'locked', 'memory_mb', 'os_type',
           'reservation_id', 'root_gb', 'shutdown_terminate', 'user_data',
           'vcpus', 'vm_mode')
# Nova's VALID_SORT_KEYS but the ignored ones.
KEYS = ('access_ip_v4', 'access_ip_v6', 'auto_disk_config',
        'availability_zone', 'config_drive', 'created_at',
        'display_description', 'display_name', 'host', 'hostname',
        'image_ref', 'instance_type_id', 'kernel_id', 'key_name',
        'launch_index', 'launched_at', 'locked_by', 'node', 'power_state',
        'progress', 'project_id', 'ramdisk_id', 'root_device_name',
        'task_state', 'terminated_at', 'updated_at', 'user_id', 'uuid',
        'vm_state')
ADMIN_ONLY = ('host', 'node')
PARAMS = ('sort_key', 'sort_dir')


def _keys_at(version):
    """(the keys sorted by, the keys dropped) at ``version``."""
    if version >= '2.75':
        return KEYS + ('locked',), ()
    if version >= '2.73':
        return KEYS + ('locked',), tuple(k for k in IGNORED if k != 'locked')
    return KEYS, IGNORED


def requested():
    """Whether the request names a sort (Nova then lists no partial
    records of a down cell: they have no values to sort by)."""
    return any(p in flask.request.args for p in PARAMS)


def order():
    """The request's order (db/server_order.order), or a 400/403."""
    args = flask.request.args
    # Nova strips each value (get_sort_params) after its schema check.
    keys = args.getlist('sort_key')
    dirs = [d.strip() for d in args.getlist('sort_dir')]
    valid, ignored = _keys_at(api_req.version())
    for key in keys:
        if key not in valid and key not in ignored:
            raise exception.ValidationError(
                detail='Invalid sort_key %s: it must be one of %s.'
                % (input_guard.excerpt(key), ', '.join(sorted(valid))))
    keys = list(keys) or ['created_at']
    dirs = dirs or ['desc']
    for key in list(keys):
        if key in ignored:
            # Nova's remove_invalid_sort_keys: the key and its direction.
            index = keys.index(key)
            if len(dirs) > index:
                dirs.pop(index)
            keys.pop(index)
        elif key in ADMIN_ONLY and not api_req.context().is_admin:
            raise exception.Forbidden(
                message='Only administrators can sort servers by %s' % key)
    if not keys:
        # Nova's InstanceSortContext: no key left, its default order.
        return keyset.DEFAULT_ORDER
    for direction in dirs:
        if direction not in ('asc', 'desc'):
            raise exception.ValidationError(
                detail="Invalid sort_dir %s: it must be 'asc' or 'desc'."
                % input_guard.excerpt(direction))
    if len(dirs) > len(keys):
        raise exception.ValidationError(
            detail='Sort direction size exceeds sort key size: %d sort_dir '
                   'for %d sort_key.' % (len(dirs), len(keys)))
    dirs += [dirs[0] if dirs else 'desc'] * (len(keys) - len(dirs))
    return server_order.order(keys, dirs)
