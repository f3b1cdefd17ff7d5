"""What past moves took, for drain plans (nova_moves/drain_plan.py)."""
import datetime

import sqlalchemy as sa

from nova_moves.db import models
from nova_moves.db import phases
from nova_moves.db.session import _session
from nova_moves import drain_plan
from nova_moves import states

__all__ = ['move_durations']

_KIND_OF_TYPE = {t: kind for kind, types in drain_plan.MIGRATION_TYPES.items()
                 for t in types}
_SUCCEEDED = (states.M_COMPLETED, states.M_CONFIRMED, states.M_DONE)


def move_durations(limit=1000):
    """[(kind, flavor_id, source_host, timings)] of the ``limit`` most
    recent moves that succeeded, from their phase timestamps
    (drain_plan.timings: the parts of a move a drain's pipeline needs)."""
    table = models.Migration.__table__
    with _session(writer=False) as session:
        rows = session.execute(
            sa.select(table.c.migration_type, table.c.old_flavor_id,
                      table.c.source_compute, table.c.phases)
            .where(table.c.status.in_(_SUCCEEDED),
                   table.c.phases.is_not(None))
            .order_by(table.c.id.desc()).limit(limit)).all()
    samples = []
    for migration_type, flavor_id, source, value in rows:
        kind = _KIND_OF_TYPE.get(migration_type)
        if kind is None:
            continue
        entries = [(status, datetime.datetime.fromisoformat(at))
                   for status, at in phases.load(value)]
        timings = drain_plan.timings(kind, entries)
        if timings is not None:
            samples.append((kind, flavor_id, source, timings))
    return samples
