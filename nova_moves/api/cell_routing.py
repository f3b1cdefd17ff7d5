"""Routing the API through the cells v2 mappings (doc/cells.md).

With ``[api_database] connection`` set, every request naming a server
(``/servers/{server_id}`` and below) looks up the server's instance
mapping once (app.py's view) and runs inside ``cells.target(<its
cell>)``: its database reads and writes go to that cell's database and
the RPC clients it uses (request.services()) are that cell's. A server
with no mapping is Nova's 404. A server mapped to cell0 (it never got
a host) is shown, updated and deleted there; an action on it is a 409,
as its ERROR state makes it in Nova.

Without a separate API database (the one-cell deployment) nothing is
looked up: the request costs what it cost before cells.

A boot picks its cell in api/boot_cells.py.

Cell mappings are read once per ``CELL_CACHE_TTL`` seconds per process,
so a request costs one indexed read of the API database (its instance
mapping)."""
import contextlib
import threading
import time

from nova_moves.api import request as api_req
from nova_moves import cells
from nova_moves import conf
from nova_moves.db import api_session
from nova_moves.db import mappings
from nova_moves import exception

CONF = conf.CONF

CELL_CACHE_TTL = 10.0
# Actions a server in cell0 still takes: its delete.
CELL0_ACTIONS = ('forceDelete',)


def enabled():
    """Whether requests are routed: the API tables have a database of
    their own (several cells are possible)."""
    return api_session.separate()


class _CellCache:
    lock = threading.Lock()
    expires = 0.0
    by_uuid = {}


def cell_mappings():
    """{uuid: mapping dict} of every cell, at most CELL_CACHE_TTL old."""
    now = time.monotonic()
    if now >= _CellCache.expires:
        with _CellCache.lock:
            if now >= _CellCache.expires:
                _CellCache.by_uuid = {c['uuid']: c
                                      for c in mappings.cell_list()}
                _CellCache.expires = now + CELL_CACHE_TTL
    return _CellCache.by_uuid


def forget_cells():
    """Read the cell mappings again at the next request (tests, and a
    cell that is not in the cache yet)."""
    _CellCache.expires = 0.0


def _cell(cell_uuid):
    mapping = cell_mappings().get(cell_uuid)
    if mapping is None:
        forget_cells()
        mapping = cell_mappings().get(cell_uuid)
    if mapping is None:
        raise exception.CellMappingNotFound(uuid=cell_uuid)
    return cells.Cell.from_mapping(mapping)


def is_cell0(cell):
    return cell is not None and cell.uuid == mappings.CELL0_UUID


def server_cell(server_id):
    """(The Cell of the server's mapping or None: mapped to no cell yet,
    the API's own database; the mapping); InstanceNotFound without a
    mapping."""
    mapping = mappings.instance_mapping_get(server_id)
    if mapping is None:
        raise exception.InstanceNotFound(instance_id=server_id)
    if mapping['cell_uuid'] is None:
        return None, mapping
    return _cell(mapping['cell_uuid']), mapping


def _check_cell0(server_id, mapping, method, action_of):
    """Nova's answer for a server that never got a host: shown, renamed,
    deleted; anything it would have to do is a 409 (its vm_state is
    error), to its owner or an admin (a 404 to anyone else, as the
    handler would answer). ``action_of()``: the action's name, or None."""
    action = action_of() if method == 'POST' else None
    if action is not None and action not in CELL0_ACTIONS:
        ctxt = api_req.context()
        if not ctxt.is_admin and mapping['project_id'] != ctxt.project_id:
            raise exception.InstanceNotFound(instance_id=server_id)
        raise exception.InstanceInvalidState(
            method=action, instance_uuid=server_id, attr='vm_state',
            state='error')


@contextlib.contextmanager
def server_target(server_id, method, action_of=lambda: None):
    """The request's work inside the server's cell."""
    cell, mapping = server_cell(server_id)
    if is_cell0(cell):
        _check_cell0(server_id, mapping, method, action_of)
    with cells.target(cell):
        yield cell


def is_home(cell):
    """Whether ``cell`` (a Cell, or None: this process's own) is the
    API's home cell: the one whose database is the API's own, where the
    API-level tables are."""
    return cell is None or \
        cell.database_connection == CONF.database.connection


def home_uuid():
    """The uuid of the API's home cell's mapping, or None."""
    for mapping in cell_mappings().values():
        if mapping['database_connection'] == CONF.database.connection:
            return mapping['uuid']
    return None


@contextlib.contextmanager
def home():
    """The API's own database (its API-level tables: flavors, key
    pairs, quotas, aggregates, server groups), also inside a server's
    cell."""
    with cells.target(None):
        yield
