"""What nova_moves adds to Nova's API inside Nova's microversions.

Nova has nothing to signal such additions (they sit inside a microversion
Nova already defines), so the version documents (GET / and GET /v2.1)
list them under ``extensions``: a client checks for a name there before
sending a field Nova would refuse. doc/api-ref/ describes each one.
"""

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
]


def advertised():
    return [dict(e) for e in EXTENSIONS]
