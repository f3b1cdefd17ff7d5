"""OpenAPI operations and schemas of os-keypairs (openapi_operations.py
merges them)."""
from nova_moves.api.openapi_schemas import (
    INT, LINKS, SCHEMAS, STR, f, obj, ref, wrap)


def _ok(schema, description='OK'):
    return {'description': description,
            'content': {'application/json': {'schema': schema}}}


_TYPE = {'type': 'string', 'enum': ['ssh', 'x509']}
SCHEMAS['KeypairBrief'] = obj({
    'name': STR, 'public_key': STR, 'fingerprint': STR,
    'type': f(_TYPE, since='2.2')})
SCHEMAS['Keypair'] = obj(dict(
    SCHEMAS['KeypairBrief']['properties'], user_id=STR, id=INT,
    created_at=STR, updated_at={'type': 'null'}, deleted={'type': 'boolean'},
    deleted_at={'type': 'null'}))
SCHEMAS['KeypairCreated'] = obj(dict(
    SCHEMAS['KeypairBrief']['properties'], user_id=STR,
    private_key=f(STR, until='2.91', optional=True)))
_USER = ['user_id']
OPERATIONS = {
    'keypairs_index': (
        "List the caller's key pairs (user_id: another user's, admin, "
        '2.10; paged by name from 2.35).', _USER + ['limit', 'marker'],
        {'200': _ok(obj({
            'keypairs': {'type': 'array', 'items': wrap(
                'keypair', ref('KeypairBrief'))},
            'keypairs_links': f(LINKS, since='2.35', optional=True)}))}),
    'keypairs_create': (
        'Import a public key (ssh, or x509 from 2.2); below 2.92 without '
        'public_key a key pair is generated and private_key returned. 200 '
        'below 2.2, 201 from it; 409 for a name the user has, 403 past '
        'the key_pairs quota.', [],
        {'200': _ok(wrap('keypair', ref('KeypairCreated'))),
         '201': _ok(wrap('keypair', ref('KeypairCreated')), 'Created')}),
    'keypairs_show': ('Show a key pair.', _USER,
                      {'200': _ok(wrap('keypair', ref('Keypair')))}),
    'keypairs_delete': ('Delete a key pair (202 below 2.2, 204 from it).',
                        _USER, {'202': {'description': 'Deleted (2.1)'},
                                '204': {'description': 'Deleted'}}),
}

__all__ = ['OPERATIONS']
