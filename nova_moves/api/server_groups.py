"""os-server-groups: create, list, show, delete, as Nova has them.

Below 2.64 a group has ``policies`` (one of affinity, anti-affinity; the
soft ones from 2.15) and ``metadata``; from 2.64 one ``policy`` and
``rules`` ({"max_server_per_host": N}, anti-affinity only). A server
joins a group at boot (``os:scheduler_hints: {"group": UUID}``); the
scheduler honours the policy at boot and on every move
(scheduler/filters.py), and host drains move servers through it. With
several cells the members of every cell are shown (api/group_cells.py).
"""
import flask

from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves.api import group_cells
from nova_moves.api import microversion
from nova_moves.api import query
from nova_moves.api import quota_rules
from nova_moves.api import validation
from nova_moves.db import api as db_api
from nova_moves import exception

HARD = ('affinity', 'anti-affinity')
SOFT = ('soft-affinity', 'soft-anti-affinity')
_NAME = {'type': 'string', 'minLength': 1, 'maxLength': 255,
         'pattern': r'^(?![\s])[\S\s]*(?<![\s])$'}


def _create_schema(version):
    if version >= '2.64':
        group = {
            'type': 'object', 'additionalProperties': False,
            'required': ['name', 'policy'],
            'properties': {
                'name': _NAME,
                'policy': {'type': 'string', 'enum': list(HARD + SOFT)},
                'rules': {
                    'type': 'object', 'additionalProperties': False,
                    'properties': {'max_server_per_host': {
                        'type': ['integer', 'string'],
                        'pattern': '^[0-9]+$', 'minimum': 1}}}}}
    else:
        allowed = HARD + SOFT if version >= '2.15' else HARD
        group = {
            'type': 'object', 'additionalProperties': False,
            'required': ['name', 'policies'],
            'properties': {
                'name': _NAME,
                'policies': {'type': 'array', 'minItems': 1, 'maxItems': 1,
                             'uniqueItems': True,
                             'items': {'type': 'string',
                                       'enum': list(allowed)}}}}
    return {'type': 'object', 'additionalProperties': False,
            'required': ['server_group'],
            'properties': {'server_group': group}}


def view(group, version):
    body = {'id': group['uuid'], 'name': group['name'],
            'members': list(group['members'])}
    if version >= '2.64':
        body['policy'] = group['policy']
        body['rules'] = dict(group['rules'])
    else:
        body['policies'] = [group['policy']]
        body['metadata'] = {}
    if version >= '2.13':
        body['project_id'] = group['project_id']
        body['user_id'] = group['user_id']
    return body


def _rules(body):
    rules = dict(body.get('rules') or {})
    if rules and body['policy'] != 'anti-affinity':
        raise exception.ValidationError(
            detail="Only anti-affinity policy supports rules.")
    if 'max_server_per_host' in rules:
        rules['max_server_per_host'] = int(rules['max_server_per_host'])
    return rules


@validation.schema(_create_schema(microversion.APIVersion('2.1')),
                   max_version='2.14')
@validation.schema(_create_schema(microversion.APIVersion('2.15')),
                   '2.15', '2.63')
@validation.schema(_create_schema(microversion.APIVersion('2.64')),
                   min_version='2.64')
def create():
    ctxt = api_req.context()
    api_req.authorize('os_compute_api:os-server-groups:create')
    version = api_req.version()
    body = validation.body()['server_group']
    if 'policies' in body:
        body['policy'] = body['policies'][0]
    rules = _rules(body)
    allowed = quota_rules.limits(ctxt.project_id)['server_groups']
    used = db_api.server_group_count(ctxt.project_id)
    if 0 <= allowed <= used:
        raise quota_rules.QuotaExceeded(overs='server_groups', req=1,
                                        used=used, allowed=allowed)
    group = db_api.server_group_create(body['name'], body['policy'], rules,
                                       ctxt.project_id, ctxt.user_id)
    return flask.jsonify({'server_group': view(group, version)})


def _paging():
    return query.int_arg('limit'), query.int_arg('offset', 0)


def index():
    ctxt = api_req.context()
    api_req.authorize('os_compute_api:os-server-groups:index')
    project = ctxt.project_id
    if validation.to_bool(flask.request.args.get('all_projects', False)) \
            and api_req.can('os_compute_api:os-server-groups:index:'
                            'all_projects'):
        project = None
    limit, offset = _paging()
    groups = group_cells.with_all_members(db_api.server_group_get_all(
        project_id=project, limit=limit, offset=offset))
    version = api_req.version()
    return flask.jsonify({'server_groups': [view(g, version)
                                            for g in groups]})


def _visible(group_id):
    """The group if the policy lets the caller see it (Nova checks the
    rule against the group's project: another project's group is 403)."""
    group = db_api.server_group_get(group_id)
    api_req.authorize('os_compute_api:os-server-groups:show',
                      {'project_id': group['project_id']})
    return group


def show(group_id):
    group = group_cells.with_all_members([_visible(group_id)])[0]
    return flask.jsonify({'server_group': view(group, api_req.version())})


def delete(group_id):
    group = _visible(group_id)
    api_req.authorize('os_compute_api:os-server-groups:delete',
                      {'project_id': group['project_id']})
    db_api.server_group_delete(group['uuid'])
    group_cells.delete_mirrors(group['uuid'])
    return common.no_content()
