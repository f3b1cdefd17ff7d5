"""Aggregates whose hosts are in several cells (doc/cells.md,
"Aggregates and availability zones across cells").

The API's home cell database holds every aggregate with its hosts of
every cell: os-aggregates answers from it, and its zone checks see every
host. A host of another cell is found by its host mapping and its
compute service is checked in its cell. That cell's own zone logic
reads a mirror of the aggregate in its own database
(db/aggregate_mirrors.py), which ``Mirrors`` writes as the hook of the
home change: inside the home transaction (the aggregate's row locked,
so changes to one aggregate reach the mirrors in their order), after
the home checks and before the commit. A refused request therefore
changes nothing, and a cell that cannot be written is a 503 naming it,
with the home rows rolled back and the mirrors already written put
back.

One cell (no ``[api_database] connection``, or one cell besides cell0):
``mirrors()`` and ``host_cell()`` look nothing up, as before cells."""
from oslo_log import log as logging

from nova_moves.api import cell_lists
from nova_moves.api import cell_routing
from nova_moves.api import service_names
from nova_moves import cells
from nova_moves.db import aggregate_mirrors
from nova_moves.db import api as db_api
from nova_moves.db import mappings
from nova_moves import exception

LOG = logging.getLogger(__name__)


def spans():
    """Whether an aggregate can hold hosts of several cells."""
    return cell_lists.targets() is not None


def _name(cell):
    return cell.name or cell.uuid


def _in_cell(cell, fn, *args):
    """``fn(*args)`` in ``cell``; its database unreachable is a 503."""
    try:
        with cells.target(cell):
            return fn(*args)
    except Exception as exc:
        if not cell_lists.is_cell_failure(exc):
            raise
        LOG.warning('Cell %s unreachable for an aggregate: %s',
                    _name(cell), exc)
        raise exception.CellUnavailable(cell=_name(cell))


def host_cell(host):
    """The Cell of ``host`` when it is another cell's than the API's own
    (its compute service found there), else None: the home rows check it
    as before (also a host with no mapping yet). 404 when its cell has
    no such compute service."""
    if not spans():
        return None
    mapping = mappings.host_mapping_get(host)
    if mapping is None:
        return None
    cell = cell_routing._cell(mapping['cell_uuid'])
    if cell_routing.is_home(cell):
        return None
    if not _in_cell(cell, db_api.service_get_all,
                    service_names.COMPUTE_BINARY, host):
        raise exception.ComputeHostNotFound(host=host)
    return cell


def mirrors():
    """The hook of a change to an aggregate, or None with one cell."""
    return Mirrors() if spans() else None


class Mirrors:
    """Writes the mirrors a change concerns (``__call__``, the hook of
    db/aggregates) and puts them back when the change fails (``undo``)."""

    def __init__(self):
        self.written = []  # (Cell, the aggregate before, its hosts there)

    def __call__(self, old, new, action):
        cells_ = self._cells(set(old['hosts']) | set(new['hosts']))
        same = (old['name'], old['metadata']) == (new['name'],
                                                  new['metadata'])
        changed = []
        for cell, hosts in cells_.values():
            before = [h for h in old['hosts'] if h in hosts]
            after = [h for h in new['hosts'] if h in hosts]
            if before != after or (not same and after):
                changed.append((cell, before, after))
        if old['availability_zone'] != new['availability_zone']:
            # Nova refuses to move servers into another zone silently:
            # the home rows checked the home cell's servers, these are
            # the other cells'.
            for cell, before, _after in changed:
                if before and _in_cell(
                        cell, aggregate_mirrors.hosts_hold_servers, before):
                    raise db_api.InvalidAggregateAction(
                        action=action, aggregate_id=new['id'],
                        reason=db_api.HOLDS_SERVERS)
        for cell, before, after in changed:
            try:
                _in_cell(cell, aggregate_mirrors.mirror_write, new, after)
            except exception.CellUnavailable:
                self.undo()
                raise
            self.written.append((cell, old, before))

    @staticmethod
    def _cells(hosts):
        """{cell uuid: (Cell, its hosts among ``hosts``)}, the API's own
        cell and unmapped hosts left out."""
        found = {}
        for host, mapping in mappings.host_mappings_of(hosts).items():
            cell = cell_routing._cell(mapping['cell_uuid'])
            if not cell_routing.is_home(cell):
                found.setdefault(cell.uuid, (cell, set()))[1].add(host)
        return found

    def undo(self):
        """The mirrors written so far back as they were (the home change
        did not commit)."""
        while self.written:
            cell, old, hosts = self.written.pop()
            try:
                with cells.target(cell):
                    aggregate_mirrors.mirror_write(old, hosts)
            except Exception:
                # Left as the new one: the next change of the aggregate
                # rewrites it.
                LOG.exception('Could not put back the mirror of aggregate '
                              '%s in cell %s', old['uuid'], _name(cell))
