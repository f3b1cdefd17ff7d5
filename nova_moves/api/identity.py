"""A minimal identity v3 at /v3, for python-openstackclient run with
``--os-auth-type admin_token --os-endpoint http://HOST:PORT/v2.1``.

Such a client takes every service's version from that URL (see
api/versions.py), so its identity service is "v2" and it refuses ``server
list`` or ``flavor create`` (it requires identity v3 before sending any
request). Pointing identity here with
``OS_IDENTITY_ENDPOINT_OVERRIDE=http://HOST:PORT/v3`` makes them work.
Served with auth_strategy = noauth only. There nova_moves has no
Keystone: tokens are ``user:project`` strings and any name is a valid
project or user id. So projects and users resolve to themselves, which is
what ``--project X`` / ``--user X`` lookups need.
"""
import flask

from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves import exception


def version():
    base = common.base_url()
    return flask.jsonify({'version': {
        'id': 'v3.14', 'status': 'stable', 'updated': '2020-04-07T00:00:00Z',
        'links': [{'rel': 'self', 'href': base + '/v3/'}],
        'media-types': [{
            'base': 'application/json',
            'type': 'application/vnd.openstack.identity-v3+json'}]}})


def _entity(kind, ident):
    body = {'id': ident, 'name': ident, 'domain_id': 'default',
            'enabled': True,
            'links': {'self': '%s/v3/%s/%s' % (common.base_url(), kind,
                                               ident)}}
    if kind == 'projects':
        body.update({'description': '', 'is_domain': False,
                     'parent_id': 'default', 'tags': []})
    return body


def lookup(kind, ident):
    api_req.context()  # authenticated by app._before
    if not ident.strip():
        raise exception.NotFound('Could not find %s: %s.' % (kind[:-1],
                                                              ident))
    return flask.jsonify({kind[:-1]: _entity(kind, ident)})


def listing(kind):
    name = flask.request.args.get('name')
    items = [_entity(kind, name)] if name else []
    return flask.jsonify({kind: items, 'links': {
        'self': '%s/v3/%s' % (common.base_url(), kind), 'next': None,
        'previous': None}})
