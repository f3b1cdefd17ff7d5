"""Server tags (2.26): /servers/{id}/tags[/{tag}], as Nova's: a tag is
1-60 characters without '/' or ',', a server has at most 50 of them
(more: 400); below 2.26 the routes do not exist (404)."""
from urllib import parse

import flask

from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves.api import guards
from nova_moves.api import input_guard
from nova_moves.api import validation
from nova_moves.db import api as db_api
from nova_moves import exception

MAX_TAGS = 50
MIN_VERSION = '2.26'
TAG = {'type': 'string', 'minLength': 1, 'maxLength': 60,
       'pattern': '^[^,/]*$'}
_UPDATE_ALL_SCHEMA = {'type': 'object', 'required': ['tags'],
                      'additionalProperties': False,
                      'properties': {'tags': {'type': 'array',
                                              'items': TAG}}}


def _instance(server_id, action):
    if api_req.version() < MIN_VERSION:
        raise exception.NotFound()
    instance = common.get_instance(
        server_id, 'os_compute_api:os-server-tags:%s' % action)
    if action not in ('index', 'show'):
        guards.check_not_locked(instance)
    return instance


def _check_tag(tag):
    if not 1 <= len(tag) <= 60 or '/' in tag or ',' in tag:
        raise exception.ValidationError(
            detail="Invalid tag %s: a tag is 1 to 60 characters, without "
                   "'/' or ','." % input_guard.excerpt(tag))


def index(server_id):
    instance = _instance(server_id, 'index')
    return flask.jsonify({'tags': db_api.instance_tags_get(
        instance['uuid'])})


def show(server_id, tag):
    instance = _instance(server_id, 'show')
    if tag not in db_api.instance_tags_get(instance['uuid']):
        raise exception.NotFound('Tag %s could not be found.'
                                 % input_guard.excerpt(tag))
    return flask.Response(status=204)


@validation.schema(_UPDATE_ALL_SCHEMA, min_version=MIN_VERSION)
def update_all(server_id):
    """PUT /tags: replace them all."""
    instance = _instance(server_id, 'update_all')
    tags = validation.body()['tags']
    if len(set(tags)) > MAX_TAGS:
        raise exception.ValidationError(
            detail='The number of tags exceeded the per-server limit %d'
            % MAX_TAGS)
    return flask.jsonify({'tags': db_api.instance_tags_set(
        instance['uuid'], tags)})


@validation.unvalidated('the tag is in the path; no body is read')
def update(server_id, tag):
    """PUT /tags/{tag}: 201 with its Location when added, 204 when the
    server had it already."""
    instance = _instance(server_id, 'update')
    _check_tag(tag)
    if not db_api.instance_tag_add(instance['uuid'], tag, MAX_TAGS):
        return flask.Response(status=204)
    response = flask.Response(status=201)
    # Quoted: a header carries latin-1 only, a tag any character.
    response.headers['Location'] = '%s/v2.1/servers/%s/tags/%s' % (
        common.base_url(), instance['uuid'], parse.quote(tag, safe=''))
    return response


def delete(server_id, tag):
    instance = _instance(server_id, 'delete')
    try:
        db_api.instance_tag_delete(instance['uuid'], tag)
    except exception.NotFound:
        raise exception.NotFound('Tag %s could not be found.'
                                 % input_guard.excerpt(tag))
    return flask.Response(status=204)


def delete_all(server_id):
    instance = _instance(server_id, 'delete_all')
    db_api.instance_tags_set(instance['uuid'], [])
    return flask.Response(status=204)
