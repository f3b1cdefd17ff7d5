"""What every command of the plugin shares: the client, the compute
microversion, finding a server, turning API faults into CommandError."""
import json

from osc_lib import exceptions


def client(app):
    return app.client_manager.moves


def _as_tuple(version):
    try:
        major, minor = str(version).split('.')
        return int(major), int(minor)
    except ValueError:
        return None


def microversion(app, minimum):
    """``minimum``, or the --os-compute-api-version asked for when that is
    higher (never lower: the command's fields need ``minimum``)."""
    asked = getattr(app.client_manager, '_api_version', {}).get('compute')
    asked_t = _as_tuple(asked)
    if asked_t and asked_t > _as_tuple(minimum):
        return '%d.%d' % asked_t
    return minimum


def fault(response):
    """The API's fault message, e.g. badRequest.message."""
    try:
        body = response.json()
        inner = next(iter(body.values()))
        if isinstance(inner, dict) and 'message' in inner:
            return inner['message']
        return json.dumps(body)[:500]
    except (ValueError, StopIteration, AttributeError):
        return response.text[:500]


def check(response, *expected):
    if response.status_code not in expected:
        raise exceptions.CommandError('%s (HTTP %d)' % (
            fault(response), response.status_code))
    return response


def find_server(api, name_or_id):
    """A server by id, else by exact name (all projects for an admin)."""
    response = api.get('/servers/%s' % name_or_id, version='2.47')
    if response.status_code == 200:
        return response.json()['server']
    # Nova's name filter is a regex, this API's a substring: either way
    # the plain name matches, and the exact match is ours.
    params = {'name': name_or_id, 'all_tenants': '1'}
    found = check(api.get('/servers/detail', params=params,
                          version='2.47'), 200).json()['servers']
    found = [s for s in found if s['name'] == name_or_id]
    if not found:
        raise exceptions.CommandError('No server with a name or ID of '
                                      '%r exists.' % name_or_id)
    if len(found) > 1:
        raise exceptions.CommandError('More than one server named %r; '
                                      'use its ID.' % name_or_id)
    return found[0]
