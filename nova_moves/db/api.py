"""The one way into the database. Functions take and return plain dicts so
results can cross RPC unchanged; every write that must not race uses a
compare-and-swap in its WHERE clause, never a read-then-write.

The code lives in one module per resource; this module re-exports them so
callers keep one door (``from nova_moves.db import api as db_api``)."""
from nova_moves.db.session import *  # noqa: F401,F403
from nova_moves.db.services import *  # noqa: F401,F403
from nova_moves.db.providers import *  # noqa: F401,F403
from nova_moves.db.candidates import *  # noqa: F401,F403
from nova_moves.db.allocations import *  # noqa: F401,F403
from nova_moves.db.flavors import *  # noqa: F401,F403
from nova_moves.db.flavor_extras import *  # noqa: F401,F403
from nova_moves.db.instances import *  # noqa: F401,F403
from nova_moves.db.actions import *  # noqa: F401,F403
from nova_moves.db.moves import *  # noqa: F401,F403
from nova_moves.db.settle import *  # noqa: F401,F403
from nova_moves.db.quotas import *  # noqa: F401,F403
from nova_moves.db.metadata import *  # noqa: F401,F403
from nova_moves.db.transitions import *  # noqa: F401,F403
from nova_moves.db.drains import *  # noqa: F401,F403
from nova_moves.db.move_queue import *  # noqa: F401,F403
from nova_moves.db.server_groups import *  # noqa: F401,F403
from nova_moves.db.move_history import *  # noqa: F401,F403
from nova_moves.db.aggregates import *  # noqa: F401,F403
from nova_moves.db.keypairs import *  # noqa: F401,F403
from nova_moves.db.usage import *  # noqa: F401,F403

# Private helpers the tests and the recovery reach through this door.
from nova_moves.db.allocations import (  # noqa: F401,E402
    _CAS_RETRIES, _bump_generations, _GenerationConflict, _with_cas_retry)
from nova_moves.db.session import _parse_time, _session  # noqa: F401,E402

# Every function above, called through this door, rides out a database
# that is briefly unreachable ([database] use_db_reconnect; db/retry.py).
from nova_moves.db import retry as _retry  # noqa: E402

_retry.wrap_module(globals(), exclude=('get_engine', 'dispose_engines',
                                       'utcnow'))
