"""When each phase of a migration began.

A migration's ``phases`` column holds a JSON list of [status, time] in
the order the statuses were entered: accepted / pre-migrating at its
creation, then queued, preparing, running, post-migrating, migrating,
finished, confirming, confirmed, reverting, reverted, done, completed,
error... A status entered again (a reschedule back to pre-migrating) is
listed again. ``stamp`` is the one writer: every status change of a
migration (db/transitions.py move_start, move_advance, move_failed, and
db/moves.py migration_start and migration_update) adds its entry in the
same transaction as the status itself.
"""
import json

from nova_moves import timeutil


def stamp(current, status, now):
    """The ``phases`` column value once ``status`` began at ``now``;
    unchanged (``current``) when the migration already is in it."""
    entries = load(current)
    if entries and entries[-1][0] == status:
        return current
    entries.append([status, timeutil.api_time(now)])
    return json.dumps(entries)


def load(value):
    if not value:
        return []
    try:
        return [list(e) for e in json.loads(value)]
    except (TypeError, ValueError):
        return []


def view(value):
    """The API's ``phases``: [{"phase", "started_at"}] in order."""
    return [{'phase': status, 'started_at': at} for status, at in load(value)]
