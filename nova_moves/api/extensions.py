"""What nova_moves adds to Nova's API inside Nova's microversions.

Nova has nothing to signal such additions (they sit inside a microversion
Nova already defines), so the version documents (GET / and GET /v2.1)
list them under ``extensions``: a client checks for a name there before
sending a field Nova would refuse. doc/api-ref/ describes each one.

Response fields Nova does not have are off by default even then (a strict
client validating Nova's schemas must not meet them): a request names the
ones it wants in the ``Nova-Moves-Extensions`` header, comma-separated.
"""
import flask

HEADER = 'Nova-Moves-Extensions'
PHASES = 'nova_moves-migration-phases'

EXTENSIONS = [
    {'name': 'nova_moves-migrate-force', 'min_version': '2.56',
     'description': 'migrate takes "force" with "host": true skips the '
                    'scheduler and claims on that host; false, null or '
                    'absent checks the destination (seed 002).'},
    {'name': 'nova_moves-move-check', 'min_version': '2.1',
     'description': 'migrate (2.56+), os-migrateLive and evacuate take '
                    '"check": true with "host": a dry run answered 200 '
                    '{"valid": bool, "reasons": [str]}; nothing changes '
                    '(seed 003).'},
    {'name': PHASES, 'min_version': '2.1',
     'description': 'migrations carry "phases": [{"phase": status, '
                    '"started_at": time}], when each status began. Always '
                    'in GET /os-migrations/{id}; in GET /os-migrations and '
                    '/servers/{id}/migrations[/{id}] with the request '
                    'header "%s: %s".' % (HEADER, PHASES)},
    {'name': 'nova_moves-host-drains', 'min_version': '2.1',
     'description': 'POST/GET/DELETE /os-host-drains (admin): the '
                    'conductors move every server off a host; every move '
                    'waits in migration status "queued" while the '
                    'cluster or its source host is at its [conductor] '
                    'limit.'},
]


def advertised():
    return [dict(e) for e in EXTENSIONS]


def requested(name):
    """Whether the request asked for response extension ``name``."""
    asked = flask.request.headers.get(HEADER, '')
    return name in {part.strip() for part in asked.split(',')}
