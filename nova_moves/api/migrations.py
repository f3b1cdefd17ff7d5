"""GET /os-migrations: every migration, Nova's fields and filters
per microversion (2.23 type and links, 2.59 uuid and paging, 2.66
changes-before, 2.80 user and project).

Policies as Nova 32.0.0: a project manager lists their own project's
migrations (``project_id`` must name it), without the host fields;
admins list any project's, with hosts."""
import functools
import re

import flask

from nova_moves.api import cell_lists
from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves.api import extensions
from nova_moves.api import input_guard
from nova_moves.api import views
from nova_moves.db import api as db_api
from nova_moves.db import phases
from nova_moves import exception
from nova_moves import states
from nova_moves import timeutil

RULE = 'os_compute_api:os-migrations:index'


def instance_type_id(value):
    """Nova's old/new_instance_type_id: the flavor's internal integer id.
    Rows written before nova_moves matched that hold the public flavorid
    instead: look those up (None once the flavor is gone)."""
    if value in (None, ''):
        return None
    if re.fullmatch('[0-9]{1,10}', str(value)):  # '²'.isdigit() too
        return int(value)
    try:
        return db_api.flavor_get(value)['id']
    except exception.FlavorNotFound:
        return None


def view(migration, version, with_phases=False):
    body = {'id': migration['id'],
            'created_at': timeutil.api_time(migration['created_at']),
            'updated_at': timeutil.api_time(migration['updated_at']),
            'dest_compute': migration['dest_compute'],
            'dest_host': migration['dest_host'],
            'dest_node': migration['dest_node'],
            'instance_uuid': migration['instance_uuid'],
            'new_instance_type_id': instance_type_id(
                migration['new_flavor_id']),
            'old_instance_type_id': instance_type_id(
                migration['old_flavor_id']),
            'source_compute': migration['source_compute'],
            'source_node': migration['source_node'],
            'status': migration['status']}
    if version >= '2.23':
        body['migration_type'] = migration['migration_type']
        if (migration['migration_type'] == states.LIVE_MIGRATION and
                migration['status'] in states.LIVE_MIGRATION_IN_FLIGHT):
            body['links'] = common.links(
                'servers/%s/migrations' % migration['instance_uuid'],
                migration['id'])
    if version >= '2.59':
        body['uuid'] = migration['uuid']
    if version >= '2.80':
        body['user_id'] = migration['user_id']
        body['project_id'] = migration['project_id']
    if with_phases:
        body['phases'] = phases.view(migration.get('phases'))
    return body


def show(migration_id):
    """GET /os-migrations/{id} (id or uuid): a nova_moves addition, Nova
    has no such route. Any migration, with its phases."""
    api_req.authorize(RULE)
    # 404 when unknown (in every cell).
    _cell, migration = cell_lists.find(db_api.migration_get, migration_id)
    if migration['project_id'] != api_req.context().project_id and \
            not api_req.can(RULE + ':all_projects'):
        # Another project's: not there, for this caller.
        raise exception.MigrationNotFound(migration_id=migration_id)
    body = view(migration, api_req.version(), with_phases=True)
    if not api_req.can(RULE + ':host'):
        views.hide_hosts(body)
    return flask.jsonify({'migration': body})


def index():
    api_req.authorize(RULE)
    version = api_req.version()
    args = flask.request.args
    ctxt = api_req.context()
    # As Nova: no project_id, or another project's, needs all_projects.
    own_project = args.get('project_id') == ctxt.project_id
    if not own_project:
        api_req.authorize(RULE + ':all_projects')
    with_hosts = api_req.can(RULE + ':host')
    filters = {'instance_uuid': args.get('instance_uuid'),
               'host': args.get('host'),
               'source_compute': args.get('source_compute'),
               'status': args.get('status'),
               'migration_type': args.get('migration_type')}
    if version >= '2.59':
        filters['changes_since'] = common.time_arg('changes-since')
    if version >= '2.66':
        filters['changes_before'] = common.time_arg('changes-before')
        if filters['changes_since'] and filters['changes_before'] and \
                filters['changes_since'] > filters['changes_before']:
            raise exception.ValidationError(
                detail='The value of changes-since must be less than or '
                       'equal to changes-before.')
    if version >= '2.80':
        filters['user_id'] = args.get('user_id')
        filters['project_id'] = args.get('project_id')
    if own_project:
        # Whatever the microversion: never another project's rows.
        filters['project_id'] = ctxt.project_id
    targets = cell_lists.targets()
    if targets is not None:
        migrations, limit = _across_cells(targets, filters,
                                          version >= '2.59')
    elif version >= '2.59':
        fetch = functools.partial(db_api.migration_get_all, **filters)
        # Nova pages (and caps at max_limit) from 2.59 only.
        migrations, limit = common.page(fetch)
    else:
        migrations, limit = db_api.migration_get_all(**filters), None
    with_phases = extensions.requested(extensions.PHASES)
    shown = [view(m, version, with_phases) for m in migrations]
    if not with_hosts:
        for migration in shown:
            views.hide_hosts(migration)
    return common.list_body('migrations', shown, migrations, limit,
                            'os-migrations',
                            key=lambda migration: migration['uuid'])


def _cell_rows(cell, filters, limit, after):
    # A cross-cell move's migration is in both cells: listed once.
    return db_api.migration_get_all(limit=limit, after=after,
                                    skip_hidden_copies=True, **filters)


def _across_cells(targets, filters, paged):
    """Every cell's migrations, read in parallel and merged in Nova's
    order (api/cell_lists.merge_order); from 2.59 one page of them, the
    marker found in its cell and applied to every cell by its values. A
    down cell's are left out (or 500, by [api]
    list_records_by_skipping_down_cells)."""
    limit = after = None
    if paged:
        limit, marker = common.limit_and_marker()
        if marker:
            try:
                _cell, found = cell_lists.find(db_api.migration_get, marker)
            except exception.NotFound:
                raise exception.MarkerNotFound(
                    marker=input_guard.excerpt(marker))
            after = cell_lists.sort_values(found)
    results, down = cell_lists.scatter(
        targets, _cell_rows, filters, limit and max(limit, 1), after)
    cell_lists.skip_or_fail(down)
    merged = cell_lists.merge_order(
        [m for rows in results.values() for m in rows])
    return (merged[:limit] if paged else merged), limit
