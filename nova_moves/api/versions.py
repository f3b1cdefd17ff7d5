"""GET / and GET /v2.1: the version documents clients discover with.

With ``openstack --os-auth-type admin_token --os-endpoint URL`` every
service (compute, image, identity...) gets the same endpoint, and
keystoneauth takes each service's major version from the URL itself
(``/v2.1`` -> 2) without asking the server. So:
- compute works (v2.1, microversions negotiated from the document below);
- image lookups (``server create --image NAME``, image names in ``server
  show``) go to /v2.1/images, served by api/images.py;
- commands where python-openstackclient requires identity v3 before doing
  anything (``server list``, ``flavor create``, ``server migration
  list``) fail in the client, with no request sent, against any server
  including Nova. The workaround is ``OS_IDENTITY_ENDPOINT_OVERRIDE=
  http://HOST:PORT/v3``, served by the minimal identity in api/identity.py.
The root document lists v2.0 then v2.1, as Nova does (tempest checks
that v2.0 comes first and follows every listed self link): GET /v2 answers
v2.0's document, but nothing is served under /v2/ (Nova's legacy v2
compatibility API; see doc/api-ref/platform.md). No identity version is
listed: it would make clients given the unversioned root pick v3 for
compute too. The documents carry Nova's keys only (our additions are
listed by GET /v2.1/extensions, api/extensions.py).
"""
import flask

from nova_moves.api import common
from nova_moves.api import extensions
from nova_moves.api import microversion
from nova_moves.api import request as api_req
from nova_moves import exception

UPDATED = '2013-07-23T11:33:21Z'
UPDATED_V20 = '2011-01-21T11:33:21Z'


def _version(base):
    return {'id': 'v2.1', 'status': 'CURRENT',
            'version': microversion.MAX_VERSION,
            'min_version': microversion.MIN_VERSION, 'updated': UPDATED,
            'links': [{'rel': 'self', 'href': base + '/v2.1/'}]}


def _version_v20(base):
    # Nova's: no microversions, so version and min_version are ''.
    return {'id': 'v2.0', 'status': 'SUPPORTED', 'version': '',
            'min_version': '', 'updated': UPDATED_V20,
            'links': [{'rel': 'self', 'href': base + '/v2/'}]}


def root():
    base = common.base_url()
    return flask.jsonify({'versions': [_version_v20(base), _version(base)]})


def _detail(body, media_version):
    body['links'].append({'rel': 'describedby', 'type': 'text/html',
                          'href': 'https://docs.openstack.org/'})
    body['media-types'] = [{
        'base': 'application/json',
        'type': 'application/vnd.openstack.compute+json;version=%s'
                % media_version}]
    return flask.jsonify({'version': body})


def v21():
    return _detail(_version(common.base_url()), '2.1')


def v20():
    return _detail(_version_v20(common.base_url()), '2')


# GET /v2.1/extensions[/{alias}]: Nova's extension list, holding what
# nova_moves adds (api/extensions.py).

def extension_list():
    api_req.authorize('os_compute_api:extensions')
    return flask.jsonify({'extensions': extensions.advertised()})


def extension(alias):
    api_req.authorize('os_compute_api:extensions')
    entry = extensions.find(alias)
    if entry is not None:
        return flask.jsonify({'extension': entry})
    raise exception.NotFound('Extension %s could not be found.' % alias[:64])


def openapi():
    """GET /openapi.json: the OpenAPI description of this API (no token),
    built once per app from the builder app.py installs (openapi.py)."""
    app = flask.current_app
    text = app.extensions.get('nova_moves.openapi.json')
    if text is None:
        text = app.extensions['nova_moves.openapi']()
        app.extensions['nova_moves.openapi.json'] = text
    return flask.Response(text, mimetype='application/json')
