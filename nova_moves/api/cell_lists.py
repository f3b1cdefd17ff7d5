"""The API's lists across cells: Nova's scatter-gather
(nova/context.py scatter_gather_cells) and, for a cell that does not
answer, Nova's 2.69 partial records.

A one-cell deployment never scatters: with ``[api_database] connection``
unset, or fewer than two cells besides cell0, ``targets()`` is None and
every list reads this process's own database as before, at no extra
cost (the cell mappings are those api/cell_routing caches for 10 s).

Each cell is read in a thread of its own inside ``cells.target(cell)``
(a context variable does not follow work into a thread, so the request's
context -- flask's request and g -- is copied into each), at most
``[DEFAULT] cell_worker_thread_pool_size`` at once, and waited for at
most CELL_TIMEOUT seconds (Nova's 60). A cell whose read raised or timed
out is *down*: its result is left out and its uuid returned in the down
set. The threads are the call's own, not a shared pool: a cell hanging
holds none of the other requests' reads.

For the per-server routing (GET /servers/{id} of a server in a down
cell): ``is_cell_failure(exc)`` says whether an exception of a read in a
cell means the cell is down, and ``partial_server_show(mapping)`` is the
2.69 record to answer with (``cell_down_support(version)`` says whether
the request's microversion takes it)."""
import concurrent.futures
import contextvars
import time

import flask
from oslo_db import exception as db_exc
from oslo_log import log as logging
import sqlalchemy as sa

from nova_moves.api import cell_routing
from nova_moves.api import common
from nova_moves.api import request as api_req
from nova_moves.api import views
from nova_moves import cells
from nova_moves import conf
from nova_moves.db import keyset
from nova_moves.db import mappings
from nova_moves.db import request_specs
from nova_moves.db import server_order
from nova_moves import exception
from nova_moves import timeutil

CONF = conf.CONF
LOG = logging.getLogger(__name__)

# Nova's nova.context.CELL_TIMEOUT: seconds a list waits for a cell.
CELL_TIMEOUT = 60
# Nova's PARTIAL_CONSTRUCT_FOR_CELL_DOWN_MIN_VERSION.
PARTIAL_VERSION = '2.69'
UNKNOWN = 'UNKNOWN'


def reset_cache():
    """Read the cell mappings again at the next list (tests, and right
    after a change)."""
    cell_routing.forget_cells()


def cell_mappings():
    """The cell mappings (dicts of db/mappings, by id), from the per-
    server routing's cache (api/cell_routing: at most 10 s old); None
    without [api_database] connection."""
    if not cell_routing.enabled():
        return None
    return sorted(cell_routing.cell_mappings().values(),
                  key=lambda mapping: mapping['id'])


def targets(include_cell0=False):
    """The cells a list reads, as cells.Cell (cell0 last, with
    ``include_cell0``: Nova lists its servers); None in a one-cell
    deployment, where the list reads this process's database alone."""
    found = cell_mappings()
    if found is None:
        return None
    real = [m for m in found if not mappings.is_cell0(m)]
    if len(real) < 2:
        return None
    chosen = real + ([m for m in found if mappings.is_cell0(m)]
                     if include_cell0 else [])
    return [cells.Cell.from_mapping(m) for m in chosen]


def server_targets(project_id):
    """The cells a servers list reads: every cell and cell0 (targets),
    or with [api] instance_list_per_project_cells and a project, those
    where the project has servers."""
    targets_ = targets(include_cell0=True)
    if targets_ is None or not project_id or \
            not CONF.api.instance_list_per_project_cells:
        return targets_
    ids = cell_ids()
    wanted = mappings.cell_ids_of_project(project_id)
    return [cell for cell in targets_ if ids.get(cell.uuid) in wanted]


def cell_ids():
    """{cell uuid: the mapping's integer id} of the cached mappings."""
    return {m['uuid']: m['id'] for m in cell_mappings() or ()}


def is_cell_failure(exc):
    """Whether ``exc``, raised by a read inside cells.target(cell), means
    the cell's database cannot be reached (down, refusing, timing out)
    rather than a bad request."""
    return isinstance(exc, (sa.exc.OperationalError, sa.exc.InterfaceError,
                            sa.exc.TimeoutError, db_exc.DBConnectionError,
                            concurrent.futures.TimeoutError,
                            # SQLite: a database file that cannot be made
                            # (ConnectionError, TimeoutError are OSErrors).
                            OSError))


def scatter(targets_, fn, *args, **kwargs):
    """``fn(cell, *args, **kwargs)`` in each cell of ``targets_``, in
    parallel, inside cells.target(cell) and the request's context.
    Returns ({cell uuid: result}, {uuid of each cell that did not
    answer}); every exception of a cell but the API's own errors (which
    are raised) counts as that cell down (Nova's
    raised_exception_sentinel), logged."""
    results, down = {}, set()
    if not targets_:
        return results, down

    def run(cell):
        with cells.target(cell):
            return fn(cell, *args, **kwargs)

    pool = concurrent.futures.ThreadPoolExecutor(
        max_workers=min(CONF.cell_worker_thread_pool_size, len(targets_)),
        thread_name_prefix='cell-list')
    try:
        futures = {cell.uuid: pool.submit(contextvars.copy_context().run,
                                          run, cell) for cell in targets_}
        deadline = time.monotonic() + CELL_TIMEOUT
        for cell_uuid, future in futures.items():
            try:
                results[cell_uuid] = future.result(
                    timeout=max(0.0, deadline - time.monotonic()))
            except exception.NovaMovesException:
                raise  # the request's own error (a 4xx), not the cell's
            except concurrent.futures.TimeoutError:
                LOG.warning('Timed out waiting for response from cell %s',
                            cell_uuid)
                down.add(cell_uuid)
            except Exception as exc:
                # An unreachable database is said in one line (every list
                # meets it while the cell is down); anything else with
                # its traceback.
                LOG.warning('Cell %s failed to answer a list: %s',
                            cell_uuid, exc,
                            exc_info=not is_cell_failure(exc))
                down.add(cell_uuid)
    finally:
        # A hung cell's thread ends with its read; nobody waits for it.
        pool.shutdown(wait=False, cancel_futures=True)
    return results, down


def merge_order(items, order=keyset.DEFAULT_ORDER):
    """Nova's order of a list merged across cells (its Instance and
    Migration sort contexts): by default created_at newest first, then
    id, then the uuid, the one key unique across cells; a servers list
    sorted by its sort_key/sort_dir in ``order`` (db/server_order)."""
    return server_order.sort(items, order)


def sort_values(record, order=keyset.DEFAULT_ORDER):
    """A record's values of merge_order's keys (db/keyset.after)."""
    return server_order.values(record, order)


def cell_down_support(version):
    return version >= PARTIAL_VERSION


def skip_or_fail(down):
    """Below 2.69 (or a list without partial records): the down cells'
    records are left out ([api] list_records_by_skipping_down_cells, the
    default), or the request fails with 500."""
    if down and not CONF.api.list_records_by_skipping_down_cells:
        raise exception.CellNotResponding(cell_uuid=sorted(down)[0])
    for cell_uuid in sorted(down):
        LOG.warning('Cell %s is not responding: its records are left out '
                    'of the list', cell_uuid)


# Nova's 2.69 partial records

def partial_server_brief(mapping):
    """GET /servers: a down cell's server."""
    return {'id': mapping['instance_uuid'], 'status': UNKNOWN,
            'links': common.links('servers', mapping['instance_uuid'])}


def partial_server_detail(mapping):
    """GET /servers/detail: a down cell's server."""
    return dict(partial_server_brief(mapping),
                tenant_id=mapping['project_id'],
                created=timeutil.api_time_z(mapping['created_at']))


def partial_server_show(mapping, version='2.69', spec=None):
    """GET /servers/{id} (2.69+) of a server whose cell is down, from its
    instance mapping (``mappings.instance_mapping_get``) and its request
    spec (``request_specs.get``), as Nova's _show_from_down_cell: the
    flavor and image in the request's microversion's shape, the zone
    asked for at boot (else UNKNOWN). A server with no spec (booted
    before the API database had them) has neither flavor nor image and
    the zone UNKNOWN. The power state is NOSTATE (0) and, from 2.71, no
    server groups (they are in the cell's database)."""
    server_id = mapping['instance_uuid']
    body = {'id': server_id, 'status': UNKNOWN,
            'tenant_id': mapping['project_id'],
            'user_id': mapping['user_id'],
            'created': timeutil.api_time_z(mapping['created_at']),
            'links': common.links('servers', server_id),
            'OS-EXT-AZ:availability_zone': UNKNOWN,
            'OS-EXT-STS:power_state': 0}
    if spec:
        body.update({
            'image': views.image_in_server(spec.get('image_id'), version),
            'flavor': views.flavor_in_server(spec['flavor'], version),
            'OS-EXT-AZ:availability_zone':
                spec.get('availability_zone') or UNKNOWN,
            'user_id': spec.get('user_id') or mapping['user_id']})
    if version >= '2.71':
        body['server_groups'] = []
    return body


def show_or_partial(server_id, show, *args):
    """GET /servers/{id} (routed into the server's cell by app.py):
    ``show(*args)``, or from 2.69, when the server's cell does not answer,
    Nova's partial record from its instance mapping, to its project or an
    admin (404 to anyone else). Below 2.69 the error stands (500)."""
    try:
        return show(*args)
    except Exception as exc:
        if not (cell_routing.enabled() and is_cell_failure(exc) and
                cell_down_support(api_req.version())):
            raise
        LOG.warning('Cell of server %s is not responding: partial record '
                    '(%s)', server_id, exc)
    mapping = mappings.instance_mapping_get(server_id)
    ctxt = api_req.context()
    if mapping is None or (not ctxt.is_admin and
                           mapping['project_id'] != ctxt.project_id):
        raise exception.InstanceNotFound(instance_id=server_id)
    api_req.authorize('os_compute_api:servers:show',
                      {'project_id': mapping['project_id']})
    return flask.jsonify({'server': partial_server_show(
        mapping, api_req.version(), request_specs.get(server_id))})


def partial_service(host_mapping):
    """GET /os-services (2.69+): a down cell's compute service, from its
    host mapping."""
    return {'binary': 'nova-compute', 'host': host_mapping['host'],
            'status': UNKNOWN}


# Lists whose items stay in cell order (services, hypervisors, hosts)

def _call(cell, fn, args, kwargs):
    return fn(*args, **kwargs)


def gather(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``'s items from every cell, concatenated in
    cell order, each paired with its cells.Cell: ([(cell, item)], {down
    cell uuids}). In a one-cell deployment fn runs here alone, each item
    paired with None. A down cell is left out (skip_or_fail is the
    caller's, which may list partial records instead)."""
    targets_ = targets()
    if targets_ is None:
        return [(None, item) for item in fn(*args, **kwargs)], set()
    results, down = scatter(targets_, _call, fn, args, kwargs)
    return [(cell, item) for cell in targets_ if cell.uuid in results
            for item in results[cell.uuid]], down


def gather_or_skip(fn, *args, **kwargs):
    """gather, the down cells' items left out (or 500, by the option)."""
    pairs, down = gather(fn, *args, **kwargs)
    skip_or_fail(down)
    return pairs


def _render_group(cell, render, groups):
    return render([item for _, item in groups[cell.uuid]])


def render_in_cells(pairs, render):
    """``render(items)`` (a list of as many results) of each cell's items
    of ``pairs``, run in that cell, in parallel: the results in the
    order of ``pairs``. A cell that stops answering in between has its
    items left out (or 500, by the option)."""
    if all(cell is None for cell, _ in pairs):
        return render([item for _, item in pairs])
    groups, order = {}, []
    for cell, item in pairs:
        if cell.uuid not in groups:
            groups[cell.uuid] = []
            order.append(cell)
        groups[cell.uuid].append((cell, item))
    results, down = scatter(order, _render_group, render, groups)
    skip_or_fail(down)
    rendered = {uuid: iter(items) for uuid, items in results.items()}
    return [next(rendered[cell.uuid]) for cell, _ in pairs
            if cell.uuid in rendered]


def find(fn, *args, **kwargs):
    """(cell, ``fn(*args, **kwargs)``) of the first cell where it finds
    something (a NotFound in a cell is nothing there): per-record
    requests by an id the API database does not map (a service, a
    hypervisor). (None, result) in a one-cell deployment, where fn runs
    here alone and raises what it raises. NotFound when no cell has it;
    CellNotResponding (500) when a down cell might have it and
    list_records_by_skipping_down_cells is False."""
    targets_ = targets()
    if targets_ is None:
        return None, fn(*args, **kwargs)

    def look(cell, fn, args, kwargs):
        try:
            return fn(*args, **kwargs)
        except exception.NotFound as exc:
            return exc

    results, down = scatter(targets_, look, fn, args, kwargs)
    missing = None
    for cell in targets_:
        result = results.get(cell.uuid)
        if isinstance(result, exception.NotFound):
            missing = result
        elif cell.uuid in results and result not in (None, []):
            return cell, result
    skip_or_fail(down)
    raise missing or exception.NotFound('Not found in any cell.')


def in_cell(cell, fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` inside cells.target(cell) (None: here)."""
    with cells.target(cell):
        return fn(*args, **kwargs)
