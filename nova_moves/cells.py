"""Which cell the current work is in: Nova's ``target_cell``.

A cells v2 deployment has one database and one message queue per cell;
the API (and the operator commands) reach a server's cell by looking up
its instance mapping and then doing the work inside ``target(cell)``.
Inside it, every database transaction (db/session.get_engine) goes to
the cell's database and every RPC client built there (rpc.get_transport)
uses the cell's transport URL. Outside any target, or with a cell whose
URLs are this process's own ``[database] connection`` and ``[DEFAULT]
transport_url``, nothing changes: a one-cell deployment never targets.

The target is a context variable, not an attribute of the request
context as in Nova, because the database layer takes no context; a
context variable is per thread (and per task), so concurrent API
requests in one worker each see their own cell."""
import contextlib
import contextvars
import dataclasses


@dataclasses.dataclass(frozen=True)
class Cell:
    """What routing needs of a cell mapping (db/mappings._cell's dict)."""
    uuid: str
    name: str
    database_connection: str
    transport_url: str

    @classmethod
    def from_mapping(cls, mapping):
        return cls(uuid=mapping['uuid'], name=mapping.get('name') or '',
                   database_connection=mapping['database_connection'],
                   transport_url=mapping['transport_url'])


_CURRENT = contextvars.ContextVar('nova_moves_cell', default=None)


def current():
    """The targeted Cell, or None (this process's own cell)."""
    return _CURRENT.get()


@contextlib.contextmanager
def target(cell):
    """Route this thread's database and RPC work to ``cell`` (a Cell,
    or None for this process's own) until the block ends."""
    token = _CURRENT.set(cell)
    try:
        yield cell
    finally:
        _CURRENT.reset(token)
