"""Server groups whose members are in several cells (doc/cells.md,
"Server groups").

The group's row in the API's home cell is the group (os-server-groups
creates, shows, lists and deletes it there) and holds the members of
that cell. A member booted in another cell joins a mirror of the group
in that cell (same uuid, name, policy and rules; db/server_groups.py),
written before its build cast, so the cell's scheduler filters and
weighs with the members it has, as in one cell: hosts of two cells are
different hosts, so a group's policy only ever needs one cell's members
(hard affinity keeps every member in one cell: boot_cells).

A one-cell deployment (no ``[api_database] connection``, or one cell
besides cell0) reads nothing more: ``spans()`` is false and every
function here is a no-op or the home cell's read alone."""
import collections

from oslo_log import log as logging

from nova_moves.api import cell_lists
from nova_moves.api import cell_routing
from nova_moves.api import quota_rules
from nova_moves import cells
from nova_moves.db import api as db_api
from nova_moves.db import mappings

LOG = logging.getLogger(__name__)
HARD_AFFINITY = 'affinity'


def _others():
    """The cells other than home (cell0 included) when groups may span
    cells, else None."""
    targets = cell_lists.targets(include_cell0=True)
    if targets is None:
        return None
    return [cell for cell in targets if not cell_routing.is_home(cell)]


def spans():
    return _others() is not None


def _elsewhere(group_uuids, skip=None, shown=False):
    """{cell uuid: {group uuid: [live member]}} of the mirrors in the
    other cells (``skip``: a cell not to read; ``shown``: a member moving
    across cells only where it is shown). A cell that does not answer is
    left out (logged), as the lists leave it out."""
    others = [c for c in _others() or () if skip is None
              or c.uuid != skip.uuid]
    if not others or not group_uuids:
        return {}
    found, _down = cell_lists.scatter(
        others, lambda _cell: db_api.server_group_members_here(
            list(group_uuids), shown=shown))
    return found


def with_all_members(groups):
    """``groups`` (home cell dicts) with the members of every cell; a
    server being moved across cells has a copy in both until the move
    settles: listed once."""
    if not groups or not spans():
        return groups
    found = _elsewhere([g['uuid'] for g in groups])
    for group in groups:
        members = list(group['members'])
        for by_group in found.values():
            members += by_group.get(group['uuid'], ())
        group['members'] = list(dict.fromkeys(members))
    return groups


def affinity_cell(group):
    """The uuid of the cell a new member of a hard-affinity ``group``
    must go to: the one holding most of its members (several only after
    an older state or a race of first members), or None (no member yet,
    another policy, or one cell)."""
    if group['policy'] != HARD_AFFINITY or not spans():
        return None
    counts = collections.Counter()
    home = cell_routing.home_uuid()
    if group['members'] and home is not None:
        # A member moving across cells counts in the cell it is shown
        # from (its mapping's), once.
        counts[home] = len(db_api.server_group_members_here(
            [group['uuid']], shown=True).get(group['uuid'], ()))
    for cell_uuid, by_group in _elsewhere([group['uuid']],
                                          shown=True).items():
        if cell_uuid != mappings.CELL0_UUID:
            counts[cell_uuid] += len(by_group.get(group['uuid'], ()))
    counts = +counts
    if not counts:
        return None
    # The most members, then the cell order: one answer for every boot.
    return max(sorted(counts), key=lambda uuid: counts[uuid])


def join(ctxt, group, instance_uuid):
    """Inside the new server's cell: it joins ``group`` (the home cell's,
    with its members, as the boot read it) there, its mirror written
    first outside the home cell (cell0 too: a member with no room),
    within the project's server_group_members quota counted in every
    cell."""
    cell = cells.current()
    elsewhere = set()
    if spans():
        # Uuids, not counts: a member moving across cells is in two.
        for by_group in _elsewhere([group['uuid']], skip=cell).values():
            elsewhere.update(by_group.get(group['uuid'], ()))
    home = cell_routing.is_home(cell)
    if not home:
        elsewhere.update(group['members'])
    try:
        return db_api.server_group_member_add(
            group['uuid'], instance_uuid, ctxt.project_id,
            quota_rules.limits(ctxt.project_id)['server_group_members'],
            elsewhere=elsewhere, mirror=None if home else group)
    except db_api.ServerGroupFull:
        if not home:
            # The mirror written for this member only (none other here).
            db_api.server_group_drop_if_empty(group['uuid'])
        raise


def leave(instance_uuid):
    """Inside a deleted server's cell, outside the home cell: it leaves
    its group's mirror, and the mirror with no member left goes. In the
    home cell nothing changes (a deleted server is not a member; its row
    stays, as Nova's until archived)."""
    if cell_routing.is_home(cells.current()):
        return
    group_uuid = db_api.server_group_leave(instance_uuid)
    if group_uuid is not None:
        db_api.server_group_drop_if_empty(group_uuid)


def delete_mirrors(group_uuid):
    """The group's mirrors in the other cells go with it; a cell that
    does not answer keeps its mirror (logged): a mirror whose group is
    gone only keeps its cell's members apart or together."""
    others = _others()
    if not others:
        return
    _found, down = cell_lists.scatter(
        others, lambda _cell: _delete_here(group_uuid))
    for cell_uuid in down:
        LOG.warning('The mirror of server group %s in cell %s could not be '
                    'deleted', group_uuid, cell_uuid)


def _delete_here(group_uuid):
    try:
        db_api.server_group_delete(group_uuid)
    except db_api.ServerGroupNotFound:
        pass
