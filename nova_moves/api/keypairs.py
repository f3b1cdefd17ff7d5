"""os-keypairs: a user's key pairs, as Nova serves them.

2.2 adds ``type`` (ssh or x509) and answers create 201 and delete 204
(200 and 202 before); 2.10 lets an admin name another ``user_id``
(body on create, query on the others; Nova's rule is admin or the
user itself); 2.35 pages the list by name (``limit``, ``marker``);
2.75 refuses unknown query parameters; 2.92 requires ``public_key``
(no more generated keys) and allows ``@`` and ``.`` in names. A key
pair counts against the ``key_pairs`` quota of the caller's project,
per user as Nova counts it. A server keeps the public key it booted
with (servers.py), so deleting the key pair changes no server.
"""

import flask

from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves.api import input_guard
from nova_moves.api import keypair_crypto
from nova_moves.api import microversion
from nova_moves.api import quota_rules
from nova_moves.api import validation
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import timeutil

POLICY = 'os_compute_api:os-keypairs:%s'
# Nova's keypair_name_special_chars(_v292): printable, no leading or
# trailing blank, and only these characters.
NAME = {'type': 'string', 'minLength': 1, 'maxLength': 255,
        'pattern': r'^(?! )[_\- a-zA-Z0-9]+(?<! )$'}
NAME_292 = dict(NAME, pattern=r'^(?! )[_\-@. a-zA-Z0-9]+(?<! )$')


def _create_schema(version):
    props = {'name': NAME_292 if version >= '2.92' else NAME,
             'public_key': {'type': 'string'}}
    if version >= '2.2':
        props['type'] = {'type': 'string', 'enum': list(keypair_crypto.TYPES)}
    if version >= '2.10':
        props['user_id'] = {'type': 'string'}
    return {'type': 'object', 'additionalProperties': False,
            'required': ['keypair'],
            'properties': {'keypair': {
                'type': 'object', 'additionalProperties': False,
                'required': ['name', 'public_key'] if version >= '2.92'
                else ['name'],
                'properties': props}}}


def _v(text):
    return microversion.APIVersion(text)


def _query(allowed):
    """The caller's ``user_id`` query (2.10, admin by the policy); from
    2.75 any parameter not in ``allowed`` is a 400, as Nova's query
    schemas."""
    version = api_req.version()
    args = flask.request.args
    if version >= '2.75':
        input_guard.refuse_unknown_query(args,
                                         set(allowed) | {'user_id'})
    user_id = args.get('user_id') if version >= '2.10' else None
    return user_id or api_req.context().user_id


def view(keypair, version, show=False):
    body = {'name': keypair['name'], 'public_key': keypair['public_key'],
            'fingerprint': keypair['fingerprint']}
    if version >= '2.2':
        body['type'] = keypair['type']
    if show:
        # Nova shows its soft-delete columns, never set on a live row.
        body.update({'user_id': keypair['user_id'], 'id': keypair['id'],
                     'created_at': timeutil.api_time(keypair['created_at']),
                     'updated_at': None, 'deleted': False,
                     'deleted_at': None})
    return body


# The key is kept in a TEXT column, which holds 65535 bytes on MySQL (a
# key with a longer comment was a 400 there only): bounded everywhere.
PUBLIC_KEY_BYTES = 65535


@validation.schema(_create_schema(_v('2.1')), max_version='2.1')
@validation.schema(_create_schema(_v('2.2')), '2.2', '2.9')
@validation.schema(_create_schema(_v('2.10')), '2.10', '2.91')
@validation.schema(_create_schema(_v('2.92')), min_version='2.92')
def create():
    ctxt = api_req.context()
    version = api_req.version()
    params = validation.body()['keypair']
    user_id = params.get('user_id') or ctxt.user_id
    api_req.authorize(POLICY % 'create', {'user_id': user_id})
    key_type = params.get('type', keypair_crypto.SSH)
    private_key = None
    if 'public_key' in params:
        public_key = params['public_key']
        if len(public_key.encode('utf-8')) > PUBLIC_KEY_BYTES:
            raise exception.ValidationError(
                detail="Invalid input for field 'keypair/public_key': it "
                       "is longer than %d bytes in UTF-8." % PUBLIC_KEY_BYTES)
        fingerprint = keypair_crypto.fingerprint(public_key, key_type)
    else:
        # Only below 2.92: the schema requires public_key from there.
        private_key, public_key, fingerprint = keypair_crypto.generate(
            user_id, key_type)
    allowed = quota_rules.limits(ctxt.project_id)['key_pairs']
    keypair = db_api.key_pair_create(
        {'name': params['name'], 'user_id': user_id, 'type': key_type,
         'public_key': public_key, 'fingerprint': fingerprint}, allowed)
    body = view(keypair, version)
    body['user_id'] = user_id
    if private_key is not None:
        body['private_key'] = private_key
    response = flask.jsonify({'keypair': body})
    response.status_code = 201 if version >= '2.2' else 200
    return response


def index():
    version = api_req.version()
    paged = version >= '2.35'
    user_id = _query(('limit', 'marker') if paged else ())
    api_req.authorize(POLICY % 'index', {'user_id': user_id})
    if paged:
        keypairs, limit = common.page(
            lambda limit, marker: db_api.key_pair_get_all(
                user_id, limit=limit, marker=marker))
    else:
        keypairs, limit = db_api.key_pair_get_all(user_id), None
    # Unpaged (before 2.35) limit is None: no link.
    return common.list_body(
        'keypairs', [{'keypair': view(k, version)} for k in keypairs],
        keypairs, limit, 'os-keypairs', key=lambda k: k['name'])


def show(keypair_name):
    user_id = _query(())
    api_req.authorize(POLICY % 'show', {'user_id': user_id})
    keypair = db_api.key_pair_get(user_id, keypair_name)
    return flask.jsonify({'keypair': view(keypair, api_req.version(),
                                          show=True)})


def delete(keypair_name):
    user_id = _query(())
    api_req.authorize(POLICY % 'delete', {'user_id': user_id})
    db_api.key_pair_destroy(user_id, keypair_name)
    if api_req.version() >= '2.2':
        return common.no_content()
    return common.accepted()

