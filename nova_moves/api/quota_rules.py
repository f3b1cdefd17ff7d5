"""Quota enforcement, as Nova has it for what this API creates: instances,
cores and ram per project, counted from the servers; metadata_items
(server_rules.py) and key_pairs (keypairs.py) are checked where those
are made; the other quota-set fields are shown and stored, never
enforced.

Boot counts and creates the server in one transaction under the
project's quota lock (db/quotas.py: racing boots queue, so the limit
holds exactly). Resize to a larger flavor checks the difference in cores
and ram.

With cells (doc/cells.md), the limits are the API's (its home database,
also inside a server's cell) and the usage is counted in every cell, as
Nova counts it (a cell that does not answer is left out of the count,
as in Nova). The boot's own cell is counted under its lock; the other
cells' counts are read just before, so two boots of one project racing
in two cells may both pass (Nova's recheck has the same window).
"""
from nova_moves.api import cell_lists
from nova_moves.api import cell_routing
from nova_moves import cells
from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves import exception

CONF = conf.CONF
ENFORCED = ('instances', 'cores', 'ram')
# Nova's other quota-set fields: shown with Nova's defaults, stored when
# set; key_pairs and metadata_items are checked by their own APIs.
OTHER = {'key_pairs': 100, 'metadata_items': 128, 'server_groups': 10,
         'server_group_members': 10}
BEFORE_2_57 = {'injected_files': 5, 'injected_file_content_bytes': 10240,
               'injected_file_path_bytes': 255}
BEFORE_2_36 = {'fixed_ips': -1, 'floating_ips': 10, 'security_groups': 10,
               'security_group_rules': 20}
MAX_INT = 2 ** 31 - 1
DEFAULT_CLASS = 'default'
# One limit in an os-quota-sets or os-quota-class-sets PUT body: Nova
# takes an integer or its digits as a string.
LIMIT_SCHEMA = {'type': ['integer', 'string'], 'pattern': '^-?[0-9]{1,10}$',
                'minimum': -1, 'maximum': MAX_INT}


class QuotaExceeded(exception.NovaMovesException):
    code = 403
    msg_fmt = ('Quota exceeded for %(overs)s: Requested %(req)s, but '
               'already used %(used)s of %(allowed)s %(overs)s')


def config_defaults(version):
    values = {name: getattr(CONF.quota, name) for name in ENFORCED}
    values.update(OTHER)
    if version < '2.57':
        values.update(BEFORE_2_57)
    if version < '2.36':
        values.update(BEFORE_2_36)
    return values


def defaults(version):
    """Every project's defaults: the [quota] options, overridden by the
    ``default`` quota class where it is set (as Nova)."""
    values = config_defaults(version)
    values.update({k: v for k, v in db_api.quota_class_get(
        DEFAULT_CLASS).items() if k in values})
    return values


def limits(project_id, version='2.95'):
    with cell_routing.home():
        values = defaults(version)
        overrides = db_api.quota_get_project(project_id)
    values.update({k: v for k, v in overrides.items() if k in values})
    return values


def _count(cell, project_id):
    return db_api.quota_usage(project_id)


def usage(project_id, except_current=False):
    """The project's instances, cores and ram in every cell (this
    process's database alone in a one-cell deployment).
    ``except_current``: without the targeted cell's (cells.current),
    which the caller counts itself under the project's lock."""
    targets = cell_lists.targets()
    if targets is None:
        return (dict.fromkeys(ENFORCED, 0) if except_current
                else db_api.quota_usage(project_id))
    if except_current:
        current = cells.current()
        here = (current.database_connection if current is not None
                else CONF.database.connection)
        targets = [cell for cell in targets
                   if cell.database_connection != here]
    counts, _down = cell_lists.scatter(targets, _count, project_id)
    return {name: sum(count[name] for count in counts.values())
            for name in ENFORCED}


def _plus(one, other):
    return {name: one.get(name, 0) + other.get(name, 0) for name in ENFORCED}


def check(project_id, deltas):
    """403 when adding ``deltas`` goes over a limit; -1 is unlimited."""
    enforce(limits(project_id), deltas, usage(project_id))


def enforce(allowed, deltas, used):
    for name in ENFORCED:
        delta = deltas.get(name, 0)
        if delta <= 0 or allowed[name] < 0:
            continue
        if used[name] + delta > allowed[name]:
            raise QuotaExceeded(overs=name, req=delta, used=used[name],
                                allowed=allowed[name])


def allowed_count(project_id, deltas, min_count, max_count):
    """How many servers of ``deltas`` each fit the quota now, at most
    ``max_count``; fewer than ``min_count`` is Nova's 403 for the
    ``min_count`` servers. Each server is still created under the
    quota lock (create_instance), so a racing boot cannot overshoot."""
    allowed, used = limits(project_id), usage(project_id)
    count = max_count
    for name in ENFORCED:
        delta = deltas.get(name, 0)
        if delta > 0 and allowed[name] >= 0:
            count = min(count, max(0, (allowed[name] - used[name]) // delta))
    if count < min_count:
        enforce(allowed, {name: delta * min_count
                          for name, delta in deltas.items()}, used)
    return count


def create_instance(project_id, deltas, values):
    """The new server's row, if ``deltas`` fit the project's quota: its
    cell's usage counted under the lock, the other cells' added."""
    allowed = limits(project_id)
    elsewhere = usage(project_id, except_current=True)
    return db_api.instance_create_in_quota(
        values, lambda here: enforce(allowed, deltas, _plus(here, elsewhere)))


def flavor_deltas(flavor, old_flavor=None):
    old = old_flavor or {}
    return {'cores': flavor['vcpus'] - old.get('vcpus', 0),
            'ram': flavor['memory_mb'] - old.get('memory_mb', 0)}


def project(project_id):
    # The path segment is the project; ids longer than the column cannot
    # have a quota (and must not reach the database).
    if not project_id or len(project_id) > 255:
        raise exception.NotFound('Project %s could not be found.'
                                 % project_id[:64])
    return project_id


def limit_values(body):
    """{field: int} of a validated PUT body (LIMIT_SCHEMA's strings
    allow more digits than an Integer column holds: refused here)."""
    values = {}
    for name, value in body.items():
        value = int(value)
        if not -1 <= value <= MAX_INT:
            raise exception.ValidationError(
                detail="Invalid input for field '%s'. It must be between -1 "
                       "and %d." % (name, MAX_INT))
        values[name] = value
    return values
