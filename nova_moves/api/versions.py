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
The root document lists only v2.1: listing an identity v3 there would make
clients given the unversioned root pick v3 for compute too. Both documents
carry Nova's keys only (our additions are listed by GET /v2.1/extensions,
api/extensions.py).
"""
import flask

from nova_moves.api import common
from nova_moves.api import microversion

UPDATED = '2013-07-23T11:33:21Z'


def _version(base):
    return {'id': 'v2.1', 'status': 'CURRENT',
            'version': microversion.MAX_VERSION,
            'min_version': microversion.MIN_VERSION, 'updated': UPDATED,
            'links': [{'rel': 'self', 'href': base + '/v2.1/'}]}


def root():
    return flask.jsonify({'versions': [_version(common.base_url())]})


def v21():
    base = common.base_url()
    body = _version(base)
    body['links'].append({'rel': 'describedby', 'type': 'text/html',
                          'href': 'https://docs.openstack.org/'})
    body['media-types'] = [{
        'base': 'application/json',
        'type': 'application/vnd.openstack.compute+json;version=2.1'}]
    return flask.jsonify({'version': body})


def register(app):
    app.add_url_rule('/', 'versions', root, methods=['GET'])
    app.add_url_rule('/v2.1', 'v21', v21, methods=['GET'])
    app.add_url_rule('/v2.1/', 'v21_slash', v21, methods=['GET'])
