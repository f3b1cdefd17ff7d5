"""What nova_moves adds to Nova's API inside Nova's microversions.

Nova has nothing to signal such additions (they sit inside a microversion
Nova already defines), so they are listed where Nova lists its own
extensions, ``GET /v2.1/extensions`` (and ``/extensions/{alias}``), in
Nova's format: a client checks for an alias there before sending a field
Nova would refuse. The version documents stay exactly Nova's, since
strict clients (tempest's response schemas) refuse any other key there.
doc/api-ref/extensions.md describes each one.

This module is the list (a leaf); versions.py serves it.

Response fields Nova does not have are off by default even then (a strict
client validating Nova's schemas must not meet them): a request names the
ones it wants in the ``Nova-Moves-Extensions`` header, comma-separated.
"""
import flask

from nova_moves.api import extension_list

HEADER = 'Nova-Moves-Extensions'
PHASES = 'nova_moves-migration-phases'

EXTENSIONS = [
    {'name': 'nova_moves-migrate-force', 'min_version': '2.56',
     'description': 'migrate takes "force" with "host": true skips the '
                    'scheduler and claims on that host; false, null or '
                    'absent checks the destination (Nova spec "Enable cold '
                    'migration with target host").'},
    {'name': 'nova_moves-move-check', 'min_version': '2.1',
     'description': 'migrate (2.56+), os-migrateLive and evacuate take '
                    '"check": true with "host": a dry run answered 200 '
                    '{"valid": bool, "reasons": [str]}; nothing changes '
                    '(Nova blueprint "Check the destination host when '
                    'migrating").'},
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


# When this list took its current form; Nova's extensions carry a date.
UPDATED = '2026-11-25T00:00:00Z'
NAMESPACE = 'https://docs.openstack.org/nova_moves/api-ref/extensions/%s'


def info(extension):
    """Nova's extension_info entry (tempest's list_extensions schema)."""
    name = extension['name']
    return {'alias': name, 'name': name,
            'description': 'From microversion %s: %s' % (
                extension['min_version'], extension['description']),
            'links': [], 'namespace': NAMESPACE % name,
            'updated': UPDATED}


def nova_info(alias, name, description):
    """One entry of Nova's frozen list, as Nova answers it."""
    return {'alias': alias, 'name': name, 'description': description,
            'links': [], 'namespace': extension_list.NAMESPACE,
            'updated': extension_list.UPDATED}


def advertised():
    """Nova's frozen list, then what nova_moves adds."""
    return ([nova_info(*entry) for entry in extension_list.NOVA] +
            [info(e) for e in EXTENSIONS])


def find(alias):
    """The entry of ``alias`` (Nova's or ours), or None."""
    for entry in advertised():
        if entry['alias'] == alias:
            return entry
    return None


def requested(name):
    """Whether the request asked for response extension ``name``."""
    asked = flask.request.headers.get(HEADER, '')
    return name in {part.strip() for part in asked.split(',')}
