"""The cell a new server is created in (doc/cells.md, "Boots").

One cell (no separate API database): the API's own, exactly as before
cells. Several: among the enabled cells other than cell0, the one whose
hosts have the most room for the flavor, read from each cell's own
placement tables (one read of its providers, inventories and usages);
a boot naming a host (``zone:host``) goes to that host's cell; a hard
affinity group's member to its members' cell (group_cell). When no
cell can fit the flavor the server is created in cell0, in ERROR with
Nova's "No valid host was found." fault, and nothing is claimed or
cast: Nova's build that never got a host."""
from nova_moves.api import cell_routing
from nova_moves.api import group_cells
from nova_moves import cells
from nova_moves.db import candidates
from nova_moves.db import api as db_api
from nova_moves.db import mappings
from nova_moves import exception


def cell_for_boot(flavor, host=None, group=None):
    """(Cell or None, cell mapping id or None) of the new server; a
    server group member's: group_cell."""
    if not cell_routing.enabled() or not any(
            uuid != mappings.CELL0_UUID
            for uuid in cell_routing.cell_mappings()):
        # No cell mapped yet (before cell_v2 setup): the API's own
        # database, mapped by its URL as before.
        return None, None
    if host:
        return _host_cell(host)
    if group is not None:
        return group_cell(flavor, group)
    return boot_cell(flavor)


def group_cell(flavor, group):
    """A member of a hard-affinity group with members goes to their cell
    (with room, else cell0: no host is where they are); any other
    member by room, as any boot: hosts of two cells are two hosts, so
    anti-affinity holds across cells, and the chosen cell's scheduler
    sees the members there (api/group_cells.py)."""
    cell_uuid = group_cells.affinity_cell(group)
    return boot_cell(flavor) if cell_uuid is None else \
        boot_cell(flavor, only=cell_uuid)


def _host_cell(host):
    mapping = mappings.host_mapping_get(host)
    if mapping is None:
        raise exception.Invalid(
            reason='Compute host %s could not be found.' % host)
    return cell_routing._cell(mapping['cell_uuid']), mapping['cell_id']


def room(resources):
    """The most room a host of the targeted cell has left for
    ``resources`` after taking them (the least free fraction over its
    classes), or None when none fits."""
    best = None
    for entry in candidates.provider_usages().values():
        inventories, usages = entry['inventories'], entry['usages']
        left = []
        for rc, amount in resources.items():
            inv = inventories.get(rc)
            if inv is None:
                break
            free = inv['capacity'] - usages.get(rc, 0) - amount
            if free < 0:
                break
            left.append(free / float(inv['capacity'] or 1))
        else:
            score = min(left) if left else 1.0
            if best is None or score > best:
                best = score
    return best


def boot_cell(flavor, only=None):
    """The enabled cell (not cell0) whose hosts have the most room for
    ``flavor`` (``only``: that cell's uuid alone); cell0 when none fits.
    A cell whose database cannot be read is passed over."""
    resources = candidates.resources_from_flavor(flavor)
    chosen, chosen_room, cell0 = None, None, None
    for mapping in cell_routing.cell_mappings().values():
        if mapping['uuid'] == mappings.CELL0_UUID:
            cell0 = mapping
            continue
        if mapping.get('disabled') or only not in (None, mapping['uuid']):
            continue
        cell = cells.Cell.from_mapping(mapping)
        try:
            with cells.target(cell):
                cell_room = room(resources)
        except Exception:  # a cell that is down is not chosen
            continue
        if cell_room is not None and (chosen_room is None
                                      or cell_room > chosen_room):
            chosen, chosen_room, chosen_id = cell, cell_room, mapping['id']
    if chosen is not None:
        return chosen, chosen_id
    if cell0 is None:
        raise exception.NoValidHost(
            reason='No cell can take the server and cell0 is not mapped.')
    return cells.Cell.from_mapping(cell0), cell0['id']


def no_valid_host(instance_uuid):
    """The fault of a server created in cell0 (inside its target)."""
    db_api.instance_fault_create(
        instance_uuid, 500, exception.NoValidHost(
            reason='There are not enough hosts available.').message)
