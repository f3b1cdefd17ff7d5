"""The cell a new server is created in (doc/cells.md, "Boots").

One cell (no separate API database): the API's own, exactly as before
cells. Several: among the enabled cells other than cell0, the one whose
hosts have the most room for the flavor, read from each cell's own
placement tables (one read of its providers, inventories and usages);
a boot naming a host (``zone:host``) goes to that host's cell, one
naming only a zone to a cell with a host in that zone, a hard affinity
group's member to its members' cell (group_cell). When no
cell can fit the flavor the server is created in cell0, in ERROR with
Nova's "No valid host was found." fault, and nothing is claimed or
cast: Nova's build that never got a host."""
from nova_moves.api import cell_routing
from nova_moves.api import group_cells
from nova_moves.api import service_names
from nova_moves import cells
from nova_moves.db import candidates
from nova_moves.db import api as db_api
from nova_moves.db import mappings
from nova_moves import exception


def cell_for_boot(flavor, host=None, group=None, zone=None):
    """(Cell or None, cell mapping id or None) of the new server; a
    server group member's: group_cell, within the cells of ``zone``."""
    if not cell_routing.enabled() or not any(
            uuid != mappings.CELL0_UUID
            for uuid in cell_routing.cell_mappings()):
        # No cell mapped yet (before cell_v2 setup): the API's own
        # database, mapped by its URL as before.
        return None, None
    if host:
        return _host_cell(host)
    only = zone_cells(zone, flavor) if zone else None
    if group is not None:
        return group_cell(flavor, group, only)
    return boot_cell(flavor, only=only)


def group_cell(flavor, group, only=None):
    """A member of a hard-affinity group with members goes to their cell
    (with room, else cell0: no host is where they are); any other
    member by room, as any boot: hosts of two cells are two hosts, so
    anti-affinity holds across cells, and the chosen cell's scheduler
    sees the members there (api/group_cells.py). ``only``: the cells
    the boot may take (its zone's), or None."""
    cell_uuid = group_cells.affinity_cell(group)
    if cell_uuid is not None:
        only = {cell_uuid} if only is None else set(only) & {cell_uuid}
    return boot_cell(flavor, only=only)


def _host_cell(host):
    mapping = mappings.host_mapping_get(host)
    if mapping is None:
        raise exception.Invalid(
            reason='Compute host %s could not be found.' % host)
    return cell_routing._cell(mapping['cell_uuid']), mapping['cell_id']


def room(resources, hosts=None):
    """The most room a host of the targeted cell (one of ``hosts``) has
    left for ``resources`` after taking them (the least free fraction
    over its classes), or None when none fits."""
    best = None
    for entry in candidates.provider_usages().values():
        if hosts is not None and entry['root'] not in hosts:
            continue
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


def zone_cells(zone, flavor):
    """The uuids of the enabled cells with a compute host in ``zone``
    (its aggregate's zone or the one it reports) that has room for
    ``flavor``, each read in its own database, which knows the zones of
    its hosts (their aggregates' mirrors); None (no choice to make,
    nothing read) with one cell. A cell whose database cannot be read is
    passed over. No cell fits: the boot goes to cell0 in ERROR with "No
    valid host", as a one-cell scheduler answers an unknown zone."""
    wanted = [m for m in cell_routing.cell_mappings().values()
              if m['uuid'] != mappings.CELL0_UUID and not m.get('disabled')]
    if len(wanted) < 2:
        return None
    resources = candidates.resources_from_flavor(flavor)
    found = set()
    for mapping in wanted:
        try:
            with cells.target(cells.Cell.from_mapping(mapping)):
                hosts = {s['host'] for s in db_api.service_get_all(
                    binary=service_names.COMPUTE_BINARY)
                    if service_names.zone(s) == zone}
                fits = bool(hosts) and room(resources, hosts) is not None
        except Exception:  # a cell that is down is not chosen
            continue
        if fits:
            found.add(mapping['uuid'])
    return found


def boot_cell(flavor, only=None):
    """The enabled cell (not cell0) whose hosts have the most room for
    ``flavor`` (``only``: among those cells' uuids); cell0 when none
    fits. A cell whose database cannot be read is passed over."""
    resources = candidates.resources_from_flavor(flavor)
    chosen, chosen_room, cell0 = None, None, None
    for mapping in cell_routing.cell_mappings().values():
        if mapping['uuid'] == mappings.CELL0_UUID:
            cell0 = mapping
            continue
        if mapping.get('disabled') or (
                only is not None and mapping['uuid'] not in only):
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
