"""The cells a conductor with the API database reaches, and their RPC
clients (the cross-cell resize, nova_moves/moves/cross_cell.py).

A client built inside cells.target(cell) uses that cell's transport
(rpc.get_transport), so each cell's are built once there and kept by
transport URL, as the API's (api/app.py Services)."""
import threading

from nova_moves import cells
from nova_moves.compute import cross_cell_rpcapi
from nova_moves import conf
from nova_moves.db import api_session
from nova_moves.db import mappings
from nova_moves.scheduler import rpcapi as scheduler_rpcapi

CONF = conf.CONF


def available():
    """Whether this conductor can reach other cells: it has the mappings
    (Nova's super-conductor's ``[api_database] connection``)."""
    return api_session.separate()


def _enabled_cells():
    return [m for m in mappings.cell_list()
            if not mappings.is_cell0(m) and not m.get('disabled')]


def own_cell():
    """This conductor's cell: the mapping of its [database] connection."""
    for mapping in mappings.cell_list():
        if mapping['database_connection'] == CONF.database.connection:
            return cells.Cell.from_mapping(mapping)
    return None


def other_cells():
    """The enabled cells but this conductor's own and cell0, by name."""
    own = own_cell()
    return sorted((cells.Cell.from_mapping(m) for m in _enabled_cells()
                   if own is None or m['uuid'] != own.uuid),
                  key=lambda c: c.name)


def cell(cell_uuid):
    return cells.Cell.from_mapping(mappings.cell_get(cell_uuid))


def cell_of_server(instance_uuid):
    mapping = mappings.instance_mapping_get(instance_uuid)
    return cell(mapping['cell_uuid'])


class CellClients:

    def __init__(self):
        self._lock = threading.Lock()
        self._by_url = {}

    def _clients(self, target):
        with self._lock:
            clients = self._by_url.get(target.transport_url)
            if clients is None:
                with cells.target(target):
                    clients = (scheduler_rpcapi.SchedulerAPI(),
                               cross_cell_rpcapi.CrossCellComputeAPI())
                self._by_url[target.transport_url] = clients
            return clients

    def scheduler(self, target):
        return self._clients(target)[0]

    def compute(self, target):
        return self._clients(target)[1]
