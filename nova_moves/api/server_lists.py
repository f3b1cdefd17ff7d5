"""GET /servers and /servers/detail across cells (Nova's
compute/instance_list.py over multi_cell_list): each cell is read in
parallel (api/cell_lists.scatter) in the request's order (sort_key /
sort_dir, api/server_sort; by default Nova's: created_at newest first,
then id, then uuid, the one key unique across cells and always the
last), the pages merged in the same order, and the marker, found in its
own cell through its instance mapping, applied to every cell by its
values of the order's keys (db/keyset).

A cell that does not answer: from 2.69, and for a list filtered by
nothing but the project, its live servers are listed from their
instance mappings as Nova's partial records (status UNKNOWN), after the
other cells' servers; a marker naming one of them pages on among them.
Otherwise [api] list_records_by_skipping_down_cells leaves them out (or
fails the request, 500)."""
from nova_moves.api import cell_lists
from nova_moves.api import common
from nova_moves.api import request as api_req
from nova_moves.api import views
from nova_moves.db import api as db_api
from nova_moves.db import keyset
from nova_moves.db import mappings
from nova_moves import exception
from nova_moves.api import input_guard
from nova_moves import states


def paged(instances, partials):
    """What the next link pages by: the servers, then the partial
    records (their mappings) of a down cell's."""
    return list(instances) + [{'uuid': p['instance_uuid']} for p in partials]


def _rows(cell, query, limit, after, matchers, order):
    if matchers:
        return [i for i in db_api.instance_get_all(order=order, **query)
                if all(match(i) for match in matchers)]
    return db_api.instance_get_all(limit=limit, after=after, order=order,
                                   **query)


def _marker_values(targets, marker, order):
    """(the marker's sort values, None) or (None, its mapping) when its
    cell is down; MarkerNotFound when it is nowhere."""
    mapping = mappings.instance_mapping_get(marker)
    cell = next((c for c in targets if mapping is not None
                 and c.uuid == mapping['cell_uuid']), None)
    if cell is None:
        raise exception.MarkerNotFound(marker=input_guard.excerpt(marker))

    def get(cell):
        try:
            return db_api.instance_get(marker, read_deleted=True)
        except exception.InstanceNotFound:
            raise exception.MarkerNotFound(
                marker=input_guard.excerpt(marker))

    found, down = cell_lists.scatter([cell], get)
    if down:
        return None, mapping
    return cell_lists.sort_values(found[cell.uuid], order), None


def _partials_after(partials, marker):
    if marker is None:
        return partials
    for index, mapping in enumerate(partials):
        if mapping['instance_uuid'] == marker:
            return partials[index + 1:]
    raise exception.MarkerNotFound(marker=input_guard.excerpt(marker))


def page(targets, query, matchers, partial_ok, order=keyset.DEFAULT_ORDER):
    """One page of the servers of every cell: (instances, partial
    records' mappings, limit, {instance uuid: cell uuid}). ``query``:
    instance_get_all's filters; ``matchers``: the filters applied in
    Python (server_index._matchers); ``partial_ok``: the request is filtered
    by nothing but its project, so a down cell's servers can be listed
    as partial records (from 2.69); ``order``: the request's sort
    (db/server_order.order), each cell read and the pages merged in it."""
    limit, marker = common.limit_and_marker()
    partial = partial_ok and cell_lists.cell_down_support(api_req.version())
    after, marker_mapping = None, None
    if marker and not matchers:
        after, marker_mapping = _marker_values(targets, marker, order)
    results, down = cell_lists.scatter(
        targets, _rows, query, max(limit, 1), after, matchers, order)
    cell_of = {}
    instances = []
    for cell_uuid, rows in results.items():
        for row in rows:
            cell_of[row['uuid']] = cell_uuid
        instances += rows
    instances = cell_lists.merge_order(instances, order)
    partials = []
    if down and partial:
        ids = cell_lists.cell_ids()
        partials = mappings.instance_mappings_in_cells(
            [ids[u] for u in down if u in ids], query.get('project_id'))
    elif down:
        cell_lists.skip_or_fail(down)
    if marker_mapping is not None:
        # The marker is a down cell's server: the other cells' servers
        # were all listed before the partial records.
        if not partial:
            raise exception.MarkerNotFound(
                marker=input_guard.excerpt(marker))
        return [], _partials_after(partials, marker)[:limit], limit, {}
    if matchers and marker:
        try:
            instances = common._after_marker(instances, lambda i: i['uuid'],
                                             marker)
        except exception.MarkerNotFound:
            if not partials:
                raise exception.MarkerNotFound(
                    marker=input_guard.excerpt(marker))
            return [], _partials_after(partials, marker)[:limit], limit, {}
    instances = instances[:limit]
    partials = partials[:limit - len(instances)]
    return instances, partials, limit, cell_of


def render_details(instances):
    """The detail views of ``instances`` (all of this cell, or of the
    one targeted): their metadata, tags and hosts' services read once
    for the page."""
    uuids = [i['uuid'] for i in instances]
    metadata = db_api.instance_metadata_get_many(uuids)
    # One read of the page's tags, not one per server.
    tags = (db_api.instance_tags_get_many(uuids)
            if api_req.version() >= '2.26' else {})
    views.prefetch_compute_services(i['host'] for i in instances)
    return [views.server_detail(
        i, db_api.instance_fault_get_latest(i['uuid'])
        if i['vm_state'] == states.ERROR else None,
        metadata=metadata.get(i['uuid'], {}),
        tags=tags.get(i['uuid'], [])) for i in instances]


def _render_cell(cell, groups):
    group = groups[cell.uuid]
    return {i['uuid']: view for i, view in zip(group, render_details(group))}


def details(targets, instances, cell_of):
    """The detail views of ``instances``, each rendered in its cell (its
    metadata, fault, tags and host's service are there): the views, in
    order, and those of a cell that stopped answering in between as
    partial records (2.69) or left out."""
    groups = {}
    for instance in instances:
        groups.setdefault(cell_of[instance['uuid']], []).append(instance)
    results, down = cell_lists.scatter(
        [c for c in targets if c.uuid in groups], _render_cell, groups)
    if down and not cell_lists.cell_down_support(api_req.version()):
        cell_lists.skip_or_fail(down)
    views_ = {}
    for rendered in results.values():
        views_.update(rendered)
    body = []
    for instance in instances:
        if instance['uuid'] in views_:
            body.append(views_[instance['uuid']])
        elif cell_of[instance['uuid']] in down and \
                cell_lists.cell_down_support(api_req.version()):
            body.append(cell_lists.partial_server_detail(
                {'instance_uuid': instance['uuid'],
                 'project_id': instance['project_id'],
                 'created_at': instance['created_at']}))
    return body
