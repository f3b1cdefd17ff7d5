"""The one way into the database. Functions take and return plain dicts so
results can cross RPC unchanged; every write that must not race uses a
compare-and-swap in its WHERE clause, never a read-then-write."""
import contextlib
import datetime
import fcntl
import os
import json
import threading
import time
import uuid as uuidlib

from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import engines
from oslo_log import log as logging
import sqlalchemy as sa
from sqlalchemy import orm

from nova_moves import conf
from nova_moves.db import models
from nova_moves import exception

CONF = conf.CONF
LOG = logging.getLogger(__name__)

RESOURCE_CLASSES = ('VCPU', 'MEMORY_MB', 'DISK_GB')
_CAS_RETRIES = 20


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


# ---------------------------------------------------------------------------
# engine and transactions

class _Engines:
    """Engines built on first use from [database] connection."""
    lock = threading.Lock()
    writer = None
    reader = None
    url = None


def _configure_sqlite(engine, immediate):
    @sa.event.listens_for(engine, 'connect')
    def _on_connect(dbapi_conn, _record):
        # Let SQLAlchemy, not pysqlite, decide when transactions begin.
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        cursor.execute('PRAGMA journal_mode=WAL')
        cursor.execute('PRAGMA busy_timeout=60000')
        cursor.execute('PRAGMA synchronous=NORMAL')
        cursor.close()

    @sa.event.listens_for(engine, 'begin')
    def _on_begin(conn):
        # A deferred transaction that reads and then writes fails at once
        # with SQLITE_BUSY when another process wrote in between; taking the
        # write lock up front makes writers queue on busy_timeout instead.
        if not immediate:
            conn.exec_driver_sql('BEGIN')
            return
        _fair_write_lock(conn, True)
        try:
            conn.exec_driver_sql('BEGIN IMMEDIATE')
        except Exception:
            _fair_write_lock(conn, False)
            raise

    if immediate and engine.url.database not in (None, '', ':memory:'):
        _add_fair_write_lock(engine, engine.url.database + '.writelock')


def _add_fair_write_lock(engine, lock_path):
    """SQLite's busy handler polls with a growing sleep (up to 100 ms), so
    under many concurrent writers an early waiter keeps losing the write
    lock to newcomers and waits seconds (the API's 202 waited up to 4 s
    behind conductor and compute writes). Writers first queue on a
    blocking flock of a lock file next to the database: the kernel wakes
    a waiter as soon as the holder commits, and nobody sleeps-and-polls.
    One open file per connection, so threads of one process queue too."""

    @sa.event.listens_for(engine, 'connect')
    def _open_lock(dbapi_conn, record):
        record.info['write_lock'] = open(lock_path, 'a+')

    @sa.event.listens_for(engine, 'close')
    def _close_lock(dbapi_conn, record):
        lock = record.info.pop('write_lock', None)
        if lock is not None:
            lock.close()

    @sa.event.listens_for(engine, 'commit')
    def _after_commit(conn):
        _fair_write_lock(conn, False)

    @sa.event.listens_for(engine, 'rollback')
    def _after_rollback(conn):
        _fair_write_lock(conn, False)


def _fair_write_lock(conn, take):
    lock = conn.connection.info.get('write_lock')
    if lock is None:
        return
    fcntl.flock(lock.fileno(), fcntl.LOCK_EX if take else fcntl.LOCK_UN)


def _make_engine(url, immediate):
    if url.startswith('sqlite'):
        path = sa.engine.make_url(url).database
        if path and path != ':memory:':
            # The embedded default lives under state_path: create it.
            os.makedirs(os.path.dirname(os.path.abspath(path)),
                        exist_ok=True)
        # oslo.db emits its own plain BEGIN for SQLite; we need IMMEDIATE
        # for writers, so SQLite engines are built here.
        engine = sa.create_engine(
            url, connect_args={'timeout': 60, 'check_same_thread': False},
            pool_size=CONF.database.max_pool_size or 5,
            max_overflow=CONF.database.max_overflow or 10)
        _configure_sqlite(engine, immediate)
        return engine
    return engines.create_engine(
        url, max_pool_size=CONF.database.max_pool_size,
        max_overflow=CONF.database.max_overflow,
        pool_timeout=CONF.database.pool_timeout,
        connection_recycle_time=CONF.database.connection_recycle_time,
        max_retries=CONF.database.max_retries)


def get_engine(writer=True):
    url = CONF.database.connection
    with _Engines.lock:
        if _Engines.writer is None or _Engines.url != url:
            _Engines.url = url
            _Engines.writer = _make_engine(url, immediate=True)
            if url.startswith('sqlite'):
                _Engines.reader = _make_engine(url, immediate=False)
            else:
                _Engines.reader = _Engines.writer
    return _Engines.writer if writer else _Engines.reader


def dispose_engines():
    with _Engines.lock:
        for engine in {_Engines.writer, _Engines.reader} - {None}:
            engine.dispose()
        _Engines.writer = _Engines.reader = _Engines.url = None


@contextlib.contextmanager
def _session(writer=True):
    session = orm.Session(bind=get_engine(writer), expire_on_commit=False)
    try:
        with session.begin():
            yield session
    finally:
        session.close()


def _retry_on_deadlock(fn):
    def wrapper(*args, **kwargs):
        for attempt in range(10):
            try:
                return fn(*args, **kwargs)
            except db_exc.DBDeadlock:
                if attempt == 9:
                    raise
                time.sleep(0.01 * (attempt + 1))
    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def _to_dict(row):
    if row is None:
        return None
    values = {}
    for column in row.__table__.columns:
        value = getattr(row, column.name)
        if isinstance(value, datetime.datetime):
            value = value.isoformat()
        values[column.name] = value
    return values


def _row_dict(row):
    """A Core result row as _to_dict would give its ORM object."""
    return {key: value.isoformat() if isinstance(value, datetime.datetime)
            else value for key, value in row._mapping.items()}


def _parse_time(value):
    if value is None or isinstance(value, datetime.datetime):
        return value
    return datetime.datetime.fromisoformat(value)


def _get_by_id_or_uuid(model, ident, not_found):
    """A row by integer id or by uuid, as a dict; ``not_found()`` raises."""
    with _session(writer=False) as session:
        column = model.id if str(ident).isdigit() else model.uuid
        row = session.scalars(sa.select(model).where(column == ident)).first()
        if row is None:
            raise not_found()
        return _to_dict(row)


# ---------------------------------------------------------------------------
# services

def service_report(host, binary, topic, availability_zone=None):
    """Create the service record if needed and mark it seen now."""
    now = utcnow()
    with _session() as session:
        result = session.execute(
            sa.update(models.Service)
            .where(models.Service.host == host,
                   models.Service.binary == binary)
            .values(last_seen_up=now,
                    report_count=models.Service.report_count + 1))
        if result.rowcount == 0:
            session.add(models.Service(
                uuid=str(uuidlib.uuid4()), host=host, binary=binary,
                topic=topic, last_seen_up=now, report_count=1,
                availability_zone=availability_zone))
    return service_get_by_host_and_binary(host, binary)


def service_get_all(binary=None, host=None):
    # Core rows: the scheduler reads every compute service per request.
    table = models.Service.__table__
    with _session(writer=False) as session:
        query = sa.select(table).order_by(table.c.id)
        if binary:
            query = query.where(table.c.binary == binary)
        if host:
            query = query.where(table.c.host == host)
        return [_row_dict(row) for row in session.execute(query)]


def service_get(service_id):
    """By integer id or uuid."""
    return _get_by_id_or_uuid(
        models.Service, service_id,
        lambda: exception.ServiceNotFound(service_id=service_id))


def service_get_by_host_and_binary(host, binary):
    with _session(writer=False) as session:
        row = session.scalars(sa.select(models.Service).where(
            models.Service.host == host,
            models.Service.binary == binary)).first()
        return _to_dict(row)


def service_update(service_id, values):
    service = service_get(service_id)
    with _session() as session:
        session.execute(sa.update(models.Service).where(
            models.Service.id == service['id']).values(**values))
    return service_get(service['id'])


def service_delete(service_id):
    service = service_get(service_id)
    with _session() as session:
        session.execute(sa.delete(models.Service).where(
            models.Service.id == service['id']))
    return service


def service_is_up(service):
    """Down when forced down or silent for longer than service_down_time."""
    if service['forced_down']:
        return False
    last = _parse_time(service['last_seen_up'])
    if last is None:
        return False
    age = (utcnow() - last).total_seconds()
    return abs(age) <= CONF.service_down_time


# ---------------------------------------------------------------------------
# compute nodes and resource providers

def _ensure_provider(session, name, parent=None, shares=False):
    row = session.scalars(sa.select(models.ResourceProvider).where(
        models.ResourceProvider.name == name)).first()
    if row is None:
        row = models.ResourceProvider(uuid=str(uuidlib.uuid4()), name=name,
                                      generation=0,
                                      shares_via_aggregate=shares)
        session.add(row)
        session.flush()
    row.parent_provider_id = parent.id if parent else None
    row.root_provider_id = parent.root_provider_id if parent else row.id
    row.shares_via_aggregate = shares
    return row


def _set_inventory(session, provider, resource_class, total, reserved,
                   ratio):
    inv = session.scalars(sa.select(models.Inventory).where(
        models.Inventory.resource_provider_id == provider.id,
        models.Inventory.resource_class == resource_class)).first()
    if inv is None:
        inv = models.Inventory(resource_provider_id=provider.id,
                               resource_class=resource_class)
        session.add(inv)
    inv.total = total
    inv.reserved = reserved
    inv.max_unit = total
    inv.allocation_ratio = ratio


def _drop_inventory(session, provider, resource_class):
    session.execute(sa.delete(models.Inventory).where(
        models.Inventory.resource_provider_id == provider.id,
        models.Inventory.resource_class == resource_class))


@_retry_on_deadlock
def compute_node_sync(node):
    """Create or update a compute node and its provider tree.

    ``node`` holds host, hypervisor_type, cpu_model, host_ip, vcpus,
    memory_mb, disk_gb, reserved_host_memory_mb, the three allocation
    ratios and disk_provider ('root', 'nested' or 'sharing:<name>').
    """
    host = node['host']
    with _session() as session:
        root = _ensure_provider(session, host)
        row = session.scalars(sa.select(models.ComputeNode).where(
            models.ComputeNode.host == host)).first()
        if row is None:
            row = models.ComputeNode(uuid=root.uuid, host=host)
            session.add(row)
        row.hypervisor_hostname = host
        row.hypervisor_type = node['hypervisor_type']
        row.cpu_model = node['cpu_model']
        row.host_ip = node.get('host_ip')
        row.vcpus = node['vcpus']
        row.memory_mb = node['memory_mb']
        row.local_gb = node['disk_gb']
        _set_inventory(session, root, 'VCPU', node['vcpus'], 0,
                       node['cpu_allocation_ratio'])
        _set_inventory(session, root, 'MEMORY_MB', node['memory_mb'],
                       node['reserved_host_memory_mb'],
                       node['ram_allocation_ratio'])
        layout = node.get('disk_provider') or 'root'
        ratio = node['disk_allocation_ratio']
        if layout == 'root':
            _set_inventory(session, root, 'DISK_GB', node['disk_gb'], 0,
                           ratio)
        elif layout == 'nested':
            _drop_inventory(session, root, 'DISK_GB')
            child = _ensure_provider(session, host + '_disk', parent=root)
            _set_inventory(session, child, 'DISK_GB', node['disk_gb'], 0,
                           ratio)
        elif layout.startswith('sharing:'):
            _drop_inventory(session, root, 'DISK_GB')
            name = layout.split(':', 1)[1]
            shared = _ensure_provider(session, name, shares=True)
            _set_inventory(session, shared, 'DISK_GB', node['disk_gb'], 0,
                           ratio)
            for provider in (root, shared):
                exists = session.get(models.ProviderAggregate,
                                     (provider.id, name))
                if exists is None:
                    session.add(models.ProviderAggregate(
                        resource_provider_id=provider.id,
                        aggregate_uuid=name))
        else:
            raise exception.Invalid(reason='unknown disk_provider %s' % layout)
        root.generation += 1
        session.flush()
        return _to_dict(row)


def compute_node_get_all():
    with _session(writer=False) as session:
        return [_to_dict(r) for r in session.scalars(
            sa.select(models.ComputeNode).order_by(models.ComputeNode.id))]


def compute_node_get_by_host(host):
    with _session(writer=False) as session:
        row = session.scalars(sa.select(models.ComputeNode).where(
            models.ComputeNode.host == host)).first()
        if row is None:
            raise exception.ComputeHostNotFound(host=host)
        return _to_dict(row)


def compute_node_get(node_id):
    return _get_by_id_or_uuid(
        models.ComputeNode, node_id,
        lambda: exception.ComputeHostNotFound(host=node_id))


def provider_get_all():
    with _session(writer=False) as session:
        return [_to_dict(r) for r in session.scalars(
            sa.select(models.ResourceProvider).order_by(
                models.ResourceProvider.id))]


# ---------------------------------------------------------------------------
# placement: capacity, candidates and allocations

def _capacity(inv):
    return int((inv.total - inv.reserved) * inv.allocation_ratio)


def _load_placement(session, provider_ids=None):
    """Providers, inventories, usages and aggregates keyed by provider id;
    only ``provider_ids`` when given. Plain Core rows (attribute access by
    column name), not ORM objects: at 10,000 hosts that is 40,000 rows per
    scheduling request, and building ORM objects for them dominated."""
    rp_t = models.ResourceProvider.__table__
    inv_t = models.Inventory.__table__
    alloc_t = models.Allocation.__table__
    agg_t = models.ProviderAggregate.__table__

    def only(query, column):
        if provider_ids is None:
            return query
        return query.where(column.in_(list(provider_ids)))

    rps = {rp.id: rp for rp in session.execute(
        only(sa.select(rp_t), rp_t.c.id))}
    invs = {}
    for inv in session.execute(
            only(sa.select(inv_t), inv_t.c.resource_provider_id)):
        invs.setdefault(inv.resource_provider_id, {})[inv.resource_class] = inv
    usage = {}
    for rp_id, rc, used in session.execute(
            only(sa.select(alloc_t.c.resource_provider_id,
                           alloc_t.c.resource_class,
                           sa.func.sum(alloc_t.c.used)),
                 alloc_t.c.resource_provider_id)
            .group_by(alloc_t.c.resource_provider_id,
                      alloc_t.c.resource_class)):
        usage[(rp_id, rc)] = int(used)
    aggs = {}
    for rp_id, agg in session.execute(
            only(sa.select(agg_t.c.resource_provider_id,
                           agg_t.c.aggregate_uuid),
                 agg_t.c.resource_provider_id)):
        aggs.setdefault(rp_id, set()).add(agg)
    return rps, invs, usage, aggs


def resources_from_flavor(flavor):
    resources = {'VCPU': flavor['vcpus'], 'MEMORY_MB': flavor['memory_mb']}
    disk = flavor.get('root_gb', 0) + flavor.get('ephemeral_gb', 0)
    if disk:
        resources['DISK_GB'] = disk
    return resources


def _provider_index(rps):
    """Providers grouped by root id, and the sharing providers: built once
    per request so that finding each root's providers is not a scan of
    every provider (which made scheduling quadratic in the host count)."""
    trees, sharing = {}, []
    for rp in rps.values():
        trees.setdefault(rp.root_provider_id, []).append(rp)
        if rp.shares_via_aggregate:
            sharing.append(rp)
    return trees, sharing


def _providers_for_root(root, rps, aggs, index=None):
    """The providers that may serve a root: its tree, then sharing
    providers in one of its aggregates."""
    trees, sharing_all = index or _provider_index(rps)
    tree = trees.get(root.id, [])
    if len(tree) > 1:
        tree = sorted(tree, key=lambda rp: (rp.id != root.id, rp.id))
    root_aggs = aggs.get(root.id)
    if not sharing_all or not root_aggs:
        return tree  # the common case: one provider per host, no sharing
    return tree + [rp for rp in sharing_all
                   if aggs.get(rp.id, set()) & root_aggs]


def _candidate_for_root(root, resources, rps, invs, usage, aggs, index=None):
    allocation = {}
    free = {}
    providers = _providers_for_root(root, rps, aggs, index)
    for rc, amount in resources.items():
        for rp in providers:
            inv = invs.get(rp.id, {}).get(rc)
            if inv is None:
                continue
            left = _capacity(inv) - usage.get((rp.id, rc), 0)
            if amount <= left and amount <= inv.max_unit:
                allocation.setdefault(rp.uuid, {})[rc] = amount
                free[rc] = left - amount
                break
        else:
            return None
    return {'host': root.name, 'root_uuid': root.uuid,
            'allocations': allocation, 'free': free}


def allocation_candidates(resources, hosts=None):
    """Hosts (root providers) able to fit ``resources`` now, each with the
    allocation request that would claim them."""
    with _session(writer=False) as session:
        rps, invs, usage, aggs = _load_placement(session)
    candidates = []
    index = _provider_index(rps)
    for rp in rps.values():
        if rp.root_provider_id != rp.id or rp.shares_via_aggregate:
            continue
        if hosts is not None and rp.name not in hosts:
            continue
        candidate = _candidate_for_root(rp, resources, rps, invs, usage, aggs,
                                        index)
        if candidate:
            candidates.append(candidate)
    return candidates


def explain_unfit(resources, host):
    """Why ``host`` cannot fit ``resources``: a list of reasons."""
    with _session(writer=False) as session:
        rps, invs, usage, aggs = _load_placement(session)
    root = next((rp for rp in rps.values() if rp.name == host
                 and rp.root_provider_id == rp.id), None)
    if root is None:
        return ['host %s has no resource provider' % host]
    reasons = []
    for rc, amount in resources.items():
        best = 0
        for rp in _providers_for_root(root, rps, aggs):
            inv = invs.get(rp.id, {}).get(rc)
            if inv is not None:
                best = max(best, _capacity(inv) - usage.get((rp.id, rc), 0))
        if amount > best:
            reasons.append('%s: requested %d, free %d on %s'
                           % (rc, amount, best, host))
    return reasons


def allocations_get(consumer_id):
    """{provider_uuid: {resource_class: used}} held by a consumer."""
    with _session(writer=False) as session:
        return _allocations_of(session, consumer_id)


def _allocations_of(session, consumer_id):
    result = {}
    for rp_uuid, rc, used in session.execute(
            sa.select(models.ResourceProvider.uuid,
                      models.Allocation.resource_class,
                      models.Allocation.used)
            .join(models.ResourceProvider,
                  models.ResourceProvider.id ==
                  models.Allocation.resource_provider_id)
            .where(models.Allocation.consumer_id == consumer_id)):
        result.setdefault(rp_uuid, {})[rc] = used
    return result


def _bump_generations(session, providers):
    """Compare-and-swap the generation of every touched provider; False if
    any changed since we read it (a concurrent writer won). Providers are
    bumped in id order so two writers lock rows in the same order (fewer
    deadlocks on MySQL/PostgreSQL)."""
    for rp_id, generation in sorted(providers.items()):
        result = session.execute(
            sa.update(models.ResourceProvider)
            .where(models.ResourceProvider.id == rp_id,
                   models.ResourceProvider.generation == generation)
            .values(generation=generation + 1))
        if result.rowcount != 1:
            return False
    return True


class _GenerationConflict(Exception):
    pass


def _with_cas_retry(fn):
    def wrapper(*args, **kwargs):
        for attempt in range(_CAS_RETRIES):
            try:
                return fn(*args, **kwargs)
            except (_GenerationConflict, db_exc.DBDeadlock):
                time.sleep(0.005 * (attempt + 1))
        raise exception.ConcurrentUpdate(uuid=args[0] if args else '?')
    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


@_with_cas_retry
def allocations_replace(consumer_id, allocations, from_consumer=None):
    """Set what ``consumer_id`` holds to ``allocations`` (placement's PUT
    /allocations), checking capacity for every increase. With
    ``from_consumer``, that consumer's allocations are dropped in the same
    transaction (an atomic hand-over). Raises AllocationFailed when a
    provider cannot fit the request."""
    with _session() as session:
        old = session.scalars(sa.select(models.Allocation).where(
            models.Allocation.consumer_id.in_(
                [consumer_id] + ([from_consumer] if from_consumer else []))
        )).all()
        # Only the providers this claim touches: the ones asked for and
        # the ones the consumers hold now.
        wanted = set(session.scalars(
            sa.select(models.ResourceProvider.id).where(
                models.ResourceProvider.uuid.in_(list(allocations)))))
        rps, invs, usage, _aggs = _load_placement(
            session, wanted | {a.resource_provider_id for a in old})
        by_uuid = {rp.uuid: rp for rp in rps.values()}
        touched = {a.resource_provider_id for a in old}
        freed = {}
        for a in old:
            key = (a.resource_provider_id, a.resource_class)
            freed[key] = freed.get(key, 0) + a.used
        for rp_uuid, resources in allocations.items():
            rp = by_uuid.get(rp_uuid)
            if rp is None:
                raise exception.AllocationFailed(
                    consumer=consumer_id,
                    reason='resource provider %s not found' % rp_uuid)
            touched.add(rp.id)
            for rc, amount in resources.items():
                inv = invs.get(rp.id, {}).get(rc)
                if inv is None:
                    raise exception.AllocationFailed(
                        consumer=consumer_id,
                        reason='%s has no %s inventory' % (rp.name, rc))
                used = usage.get((rp.id, rc), 0) - freed.get((rp.id, rc), 0)
                if used + amount > _capacity(inv):
                    raise exception.AllocationFailed(
                        consumer=consumer_id,
                        reason='%s: requested %d, free %d on %s' % (
                            rc, amount, _capacity(inv) - used, rp.name))
        generations = {rp_id: rps[rp_id].generation for rp_id in touched}
        for a in old:
            session.delete(a)
        for rp_uuid, resources in allocations.items():
            for rc, amount in resources.items():
                session.add(models.Allocation(
                    resource_provider_id=by_uuid[rp_uuid].id,
                    consumer_id=consumer_id, resource_class=rc, used=amount))
        session.flush()
        if not _bump_generations(session, generations):
            raise _GenerationConflict()
    return True


@_with_cas_retry
def allocations_move(from_consumer, to_consumer):
    """Hand everything ``from_consumer`` holds to ``to_consumer``, which
    must hold nothing. Returns what moved."""
    with _session() as session:
        rows = session.scalars(sa.select(models.Allocation).where(
            models.Allocation.consumer_id == from_consumer)).all()
        if not rows:
            return {}
        generations = dict(session.execute(
            sa.select(models.ResourceProvider.id,
                      models.ResourceProvider.generation)
            .where(models.ResourceProvider.id.in_(
                {r.resource_provider_id for r in rows}))).all())
        session.execute(sa.delete(models.Allocation).where(
            models.Allocation.consumer_id == to_consumer))
        for row in rows:
            row.consumer_id = to_consumer
        session.flush()
        if not _bump_generations(session, generations):
            raise _GenerationConflict()
        return _allocations_of(session, to_consumer)


@_with_cas_retry
def allocations_delete(consumer_id, root_host=None):
    """Drop what a consumer holds; with ``root_host`` only its allocations
    in that host's provider tree (the source half after an evacuation)."""
    with _session() as session:
        query = sa.select(models.Allocation).where(
            models.Allocation.consumer_id == consumer_id)
        rows = session.scalars(query).all()
        if root_host is not None:
            root = session.scalars(sa.select(models.ResourceProvider).where(
                models.ResourceProvider.name == root_host)).first()
            tree = set() if root is None else set(session.scalars(
                sa.select(models.ResourceProvider.id).where(
                    models.ResourceProvider.root_provider_id == root.id)))
            rows = [r for r in rows if r.resource_provider_id in tree]
        if not rows:
            return False
        generations = dict(session.execute(
            sa.select(models.ResourceProvider.id,
                      models.ResourceProvider.generation)
            .where(models.ResourceProvider.id.in_(
                {r.resource_provider_id for r in rows}))).all())
        for row in rows:
            session.delete(row)
        session.flush()
        if not _bump_generations(session, generations):
            raise _GenerationConflict()
    return True


def allocations_all():
    """{consumer: {provider_uuid: {rc: used}}} for audits and tests."""
    with _session(writer=False) as session:
        result = {}
        for consumer, rp_uuid, rc, used in session.execute(
                sa.select(models.Allocation.consumer_id,
                          models.ResourceProvider.uuid,
                          models.Allocation.resource_class,
                          models.Allocation.used)
                .join(models.ResourceProvider,
                      models.ResourceProvider.id ==
                      models.Allocation.resource_provider_id)):
            result.setdefault(consumer, {}).setdefault(rp_uuid, {})[rc] = used
        return result


def provider_usages():
    """Per provider name: inventory capacity and usage, for os-hypervisors
    and the invariant checks."""
    with _session(writer=False) as session:
        rps, invs, usage, _aggs = _load_placement(session)
    result = {}
    for rp in rps.values():
        entry = {'uuid': rp.uuid, 'root': rps[rp.root_provider_id].name
                 if rp.root_provider_id in rps else rp.name,
                 'generation': rp.generation, 'inventories': {}, 'usages': {}}
        for rc, inv in invs.get(rp.id, {}).items():
            entry['inventories'][rc] = {
                'total': inv.total, 'reserved': inv.reserved,
                'allocation_ratio': inv.allocation_ratio,
                'capacity': _capacity(inv)}
            entry['usages'][rc] = usage.get((rp.id, rc), 0)
        result[rp.name] = entry
    return result


def allocation_is_single_root(consumer_id):
    """Seed 004: a forced move can only copy an allocation served by one
    root provider alone (no nested child, no sharing provider)."""
    with _session(writer=False) as session:
        rows = session.execute(
            sa.select(models.ResourceProvider.id,
                      models.ResourceProvider.root_provider_id)
            .join(models.Allocation, models.Allocation.resource_provider_id
                  == models.ResourceProvider.id)
            .where(models.Allocation.consumer_id == consumer_id)
            .distinct()).all()
    return len(rows) == 1 and rows[0][0] == rows[0][1]


def root_only_candidate(resources, host):
    """The allocation that claims ``resources`` on ``host``'s root provider
    alone, or None if the root lacks the inventory or room (seed 004)."""
    with _session(writer=False) as session:
        rps, invs, usage, _aggs = _load_placement(session)
    root = next((rp for rp in rps.values() if rp.name == host
                 and rp.root_provider_id == rp.id), None)
    if root is None:
        return None
    for rc, amount in resources.items():
        inv = invs.get(root.id, {}).get(rc)
        used = usage.get((root.id, rc), 0)
        if inv is None or amount > _capacity(inv) - used:
            return None
    return {root.uuid: dict(resources)}


# ---------------------------------------------------------------------------
# flavors

def flavor_create(values):
    values = dict(values)
    values.setdefault('flavorid', str(uuidlib.uuid4()))
    with _session() as session:
        row = models.Flavor(**values)
        session.add(row)
        try:
            session.flush()
        except db_exc.DBDuplicateEntry:
            raise exception.Conflict(
                reason='flavor with name %s or id %s already exists'
                % (values.get('name'), values['flavorid']))
        return _to_dict(row)


def flavor_get(flavorid):
    with _session(writer=False) as session:
        row = session.scalars(sa.select(models.Flavor).where(
            models.Flavor.flavorid == str(flavorid))).first()
        if row is None:
            raise exception.FlavorNotFound(flavor_id=flavorid)
        return _to_dict(row)


def flavor_get_all():
    with _session(writer=False) as session:
        return [_to_dict(r) for r in session.scalars(
            sa.select(models.Flavor).order_by(models.Flavor.memory_mb,
                                              models.Flavor.flavorid))]


def flavor_delete(flavorid):
    with _session() as session:
        result = session.execute(sa.delete(models.Flavor).where(
            models.Flavor.flavorid == str(flavorid)))
        if result.rowcount == 0:
            raise exception.FlavorNotFound(flavor_id=flavorid)


# ---------------------------------------------------------------------------
# instances

_JSON_FIELDS = ('flavor', 'old_flavor', 'new_flavor')


def _instance_dict(row):
    values = _to_dict(row)
    for field in _JSON_FIELDS:
        if values.get(field):
            values[field] = json.loads(values[field])
    return values


def _encode_instance_values(values):
    values = dict(values)
    for field in _JSON_FIELDS:
        if field in values and values[field] is not None:
            values[field] = json.dumps(values[field])
    for key in ('launched_at', 'terminated_at', 'deleted_at'):
        if key in values:
            values[key] = _parse_time(values[key])
    return values


def instance_create(values):
    values = _encode_instance_values(values)
    values.setdefault('uuid', str(uuidlib.uuid4()))
    with _session() as session:
        row = models.Instance(**values)
        session.add(row)
        session.flush()
        return _instance_dict(row)


def instance_get(instance_uuid, read_deleted=False):
    with _session(writer=False) as session:
        query = sa.select(models.Instance).where(
            models.Instance.uuid == instance_uuid)
        if not read_deleted:
            query = query.where(models.Instance.deleted == 0)
        row = session.scalars(query).first()
        if row is None:
            raise exception.InstanceNotFound(instance_id=instance_uuid)
        return _instance_dict(row)


def instance_get_all(project_id=None, host=None, limit=None, marker=None,
                     read_deleted=False, uuids=None):
    with _session(writer=False) as session:
        query = sa.select(models.Instance).order_by(
            models.Instance.created_at.desc(), models.Instance.id.desc())
        if not read_deleted:
            query = query.where(models.Instance.deleted == 0)
        if project_id:
            query = query.where(models.Instance.project_id == project_id)
        if host:
            query = query.where(models.Instance.host == host)
        if uuids is not None:
            query = query.where(models.Instance.uuid.in_(uuids))
        if marker:
            mrow = session.scalars(sa.select(models.Instance).where(
                models.Instance.uuid == marker)).first()
            if mrow is None:
                raise exception.Invalid(reason='marker %s not found' % marker)
            query = query.where(sa.or_(
                models.Instance.created_at < mrow.created_at,
                sa.and_(models.Instance.created_at == mrow.created_at,
                        models.Instance.id < mrow.id)))
        if limit:
            query = query.limit(limit)
        return [_instance_dict(r) for r in session.scalars(query)]


_UNSET = object()


@_retry_on_deadlock
def instance_update(instance_uuid, values, expected_task_state=_UNSET,
                    expected_vm_state=None, expected_host=None):
    """Update a server; with ``expected_task_state`` (a value or a list)
    and/or ``expected_vm_state`` (a list), only if the row still holds
    them: the compare-and-swap that makes two moves of one server race
    safely. Raises UnexpectedTaskState or InstanceInvalidState when lost."""
    values = _encode_instance_values(values)
    with _session() as session:
        query = sa.update(models.Instance).where(
            models.Instance.uuid == instance_uuid,
            models.Instance.deleted == 0)
        if expected_task_state is not _UNSET:
            expected = (list(expected_task_state)
                        if isinstance(expected_task_state, (list, tuple))
                        else [expected_task_state])
            conds = [models.Instance.task_state.in_(
                [e for e in expected if e is not None])]
            if None in expected:
                conds.append(models.Instance.task_state.is_(None))
            query = query.where(sa.or_(*conds))
        if expected_vm_state:
            query = query.where(models.Instance.vm_state.in_(
                list(expected_vm_state)))
        if expected_host is not None:
            query = query.where(models.Instance.host == expected_host)
        result = session.execute(query.values(**values))
        if result.rowcount == 1:
            row = session.scalars(sa.select(models.Instance).where(
                models.Instance.uuid == instance_uuid)).one()
            return _instance_dict(row)
    current = instance_get(instance_uuid)
    if expected_vm_state and current['vm_state'] not in expected_vm_state:
        raise exception.InstanceInvalidState(
            method='update', instance_uuid=instance_uuid, attr='vm_state',
            state=current['vm_state'])
    if expected_host is not None and current['host'] != expected_host:
        raise exception.Conflict(reason='instance %s is no longer on %s'
                                 % (instance_uuid, expected_host))
    raise exception.UnexpectedTaskState(
        instance_uuid=instance_uuid, expected=expected_task_state,
        actual=current['task_state'])


def instance_destroy(instance_uuid):
    now = utcnow()
    with _session() as session:
        row = session.scalars(sa.select(models.Instance).where(
            models.Instance.uuid == instance_uuid,
            models.Instance.deleted == 0)).first()
        if row is None:
            raise exception.InstanceNotFound(instance_id=instance_uuid)
        row.deleted = row.id
        row.deleted_at = now
        row.terminated_at = now
        row.vm_state = 'deleted'
        row.task_state = None
        return _instance_dict(row)


def instance_fault_create(instance_uuid, code, message, details=None,
                          host=None):
    with _session() as session:
        session.add(models.InstanceFault(
            instance_uuid=instance_uuid, code=code, message=message[:255],
            details=details, host=host))


def instance_fault_get_latest(instance_uuid):
    with _session(writer=False) as session:
        row = session.scalars(
            sa.select(models.InstanceFault)
            .where(models.InstanceFault.instance_uuid == instance_uuid)
            .order_by(models.InstanceFault.id.desc())).first()
        return _to_dict(row)


# ---------------------------------------------------------------------------
# instance actions and events

def action_start(instance_uuid, action, request_id, user_id, project_id):
    now = utcnow()
    with _session() as session:
        row = models.InstanceAction(
            instance_uuid=instance_uuid, action=action, request_id=request_id,
            user_id=user_id, project_id=project_id, start_time=now,
            updated_at=now)
        session.add(row)
        session.flush()
        return _to_dict(row)


def _action_for(session, instance_uuid, request_id):
    row = session.scalars(
        sa.select(models.InstanceAction)
        .where(models.InstanceAction.instance_uuid == instance_uuid,
               models.InstanceAction.request_id == request_id)
        .order_by(models.InstanceAction.id.desc())).first()
    if row is None:
        raise exception.ActionNotFound(request_id=request_id,
                                       instance_uuid=instance_uuid)
    return row


def action_get_by_request_id(instance_uuid, request_id):
    with _session(writer=False) as session:
        row = session.scalars(
            sa.select(models.InstanceAction)
            .where(models.InstanceAction.instance_uuid == instance_uuid,
                   models.InstanceAction.request_id == request_id)
            .order_by(models.InstanceAction.id.desc())).first()
        return _to_dict(row)


def actions_get(instance_uuid, limit=None, marker=None, changes_since=None,
                changes_before=None):
    with _session(writer=False) as session:
        query = (sa.select(models.InstanceAction)
                 .where(models.InstanceAction.instance_uuid == instance_uuid)
                 .order_by(models.InstanceAction.created_at.desc(),
                           models.InstanceAction.id.desc()))
        if changes_since:
            query = query.where(models.InstanceAction.updated_at >=
                                _parse_time(changes_since))
        if changes_before:
            query = query.where(models.InstanceAction.updated_at <=
                                _parse_time(changes_before))
        if marker:
            mrow = session.scalars(sa.select(models.InstanceAction).where(
                models.InstanceAction.instance_uuid == instance_uuid,
                models.InstanceAction.request_id == marker)).first()
            if mrow is None:
                raise exception.Invalid(reason='marker %s not found' % marker)
            query = query.where(models.InstanceAction.id < mrow.id)
        if limit:
            query = query.limit(limit)
        return [_to_dict(r) for r in session.scalars(query)]


def action_event_start(instance_uuid, request_id, event, host=None):
    now = utcnow()
    with _session() as session:
        action = _action_for(session, instance_uuid, request_id)
        session.add(models.InstanceActionEvent(
            action_id=action.id, event=event, start_time=now, host=host))
        action.updated_at = now


def action_event_finish(instance_uuid, request_id, event, result,
                        traceback=None, details=None):
    now = utcnow()
    with _session() as session:
        action = _action_for(session, instance_uuid, request_id)
        row = session.scalars(
            sa.select(models.InstanceActionEvent)
            .where(models.InstanceActionEvent.action_id == action.id,
                   models.InstanceActionEvent.event == event,
                   models.InstanceActionEvent.finish_time.is_(None))
            .order_by(models.InstanceActionEvent.id.desc())).first()
        if row is None:
            row = models.InstanceActionEvent(action_id=action.id, event=event,
                                             start_time=now)
            session.add(row)
        row.finish_time = now
        row.result = result
        row.traceback = traceback
        row.details = details
        action.updated_at = now
        if result == 'Error':
            action.message = 'Error'


def action_events_get(action_id):
    with _session(writer=False) as session:
        return [_to_dict(r) for r in session.scalars(
            sa.select(models.InstanceActionEvent)
            .where(models.InstanceActionEvent.action_id == action_id)
            .order_by(models.InstanceActionEvent.id))]


# ---------------------------------------------------------------------------
# migrations

def migration_create(values):
    values = dict(values)
    values.setdefault('uuid', str(uuidlib.uuid4()))
    with _session() as session:
        row = models.Migration(**values)
        session.add(row)
        session.flush()
        return _to_dict(row)


def migration_get(migration_id):
    """By integer id or uuid."""
    return _get_by_id_or_uuid(
        models.Migration, migration_id,
        lambda: exception.MigrationNotFound(migration_id=migration_id))


@_retry_on_deadlock
def migration_update(migration_id, values, expected_status=None):
    """Update a migration; with ``expected_status`` (a list) only if it is
    still in one of them, else Conflict."""
    current = migration_get(migration_id)
    with _session() as session:
        query = sa.update(models.Migration).where(
            models.Migration.id == current['id'])
        if expected_status:
            query = query.where(models.Migration.status.in_(
                list(expected_status)))
        result = session.execute(query.values(**values))
    if result.rowcount != 1:
        raise exception.Conflict(
            reason='migration %s is %s, expected %s'
            % (migration_id, migration_get(migration_id)['status'],
               expected_status))
    return migration_get(current['id'])


def migration_get_all(instance_uuid=None, host=None, status=None,
                      migration_type=None, source_compute=None,
                      user_id=None, project_id=None, changes_since=None,
                      changes_before=None, limit=None, marker=None,
                      newest_first=True):
    with _session(writer=False) as session:
        if newest_first:
            order = (models.Migration.created_at.desc(),
                     models.Migration.id.desc())
        else:
            order = (models.Migration.id,)
        query = sa.select(models.Migration).order_by(*order)
        if instance_uuid:
            query = query.where(models.Migration.instance_uuid ==
                                instance_uuid)
        if host:
            query = query.where(sa.or_(models.Migration.source_compute == host,
                                       models.Migration.dest_compute == host))
        if source_compute:
            query = query.where(models.Migration.source_compute ==
                                source_compute)
        if status:
            statuses = status if isinstance(status, (list, tuple)) \
                else [status]
            query = query.where(models.Migration.status.in_(statuses))
        if migration_type:
            query = query.where(models.Migration.migration_type ==
                                migration_type)
        if user_id:
            query = query.where(models.Migration.user_id == user_id)
        if project_id:
            query = query.where(models.Migration.project_id == project_id)
        if changes_since:
            query = query.where(models.Migration.updated_at >=
                                _parse_time(changes_since))
        if changes_before:
            query = query.where(models.Migration.updated_at <=
                                _parse_time(changes_before))
        if marker:
            mrow = session.scalars(sa.select(models.Migration).where(
                models.Migration.uuid == marker)).first()
            if mrow is None:
                raise exception.MigrationNotFound(migration_id=marker)
            query = query.where(models.Migration.id < mrow.id)
        if limit:
            query = query.limit(limit)
        return [_to_dict(r) for r in session.scalars(query)]


# --- resize and cold migrate (issue 3)

@_retry_on_deadlock
def instance_claim_with_action(instance_uuid, task_state, vm_states, action,
                               request_id, user_id, project_id):
    """The API's start of a move in one write transaction: compare-and-swap
    task_state None -> ``task_state`` (vm_state still in ``vm_states``)
    and record the instance action. One transaction instead of two halves
    the API's turns on the database write lock, which is what its 202
    latency waits on under load. Raises UnexpectedTaskState or
    InstanceInvalidState (409) when another request got there first; then
    nothing is written."""
    now = utcnow()
    with _session() as session:
        result = session.execute(
            sa.update(models.Instance)
            .where(models.Instance.uuid == instance_uuid,
                   models.Instance.deleted == 0,
                   models.Instance.task_state.is_(None),
                   models.Instance.vm_state.in_(list(vm_states)))
            .values(task_state=task_state, updated_at=now))
        if result.rowcount == 1:
            session.add(models.InstanceAction(
                instance_uuid=instance_uuid, action=action,
                request_id=request_id, user_id=user_id,
                project_id=project_id, start_time=now, updated_at=now))
            row = session.scalars(sa.select(models.Instance).where(
                models.Instance.uuid == instance_uuid)).one()
            return _instance_dict(row)
    current = instance_get(instance_uuid)
    if current['vm_state'] not in vm_states:
        raise exception.InstanceInvalidState(
            method=action, instance_uuid=instance_uuid, attr='vm_state',
            state=current['vm_state'])
    raise exception.UnexpectedTaskState(
        instance_uuid=instance_uuid, expected=[None],
        actual=current['task_state'])


# --- recovery of interrupted moves

def instance_get_all_by_task_states(task_states, updated_before):
    """Servers in one of ``task_states`` not updated since
    ``updated_before`` (a datetime): candidates for an interrupted move."""
    with _session(writer=False) as session:
        query = sa.select(models.Instance).where(
            models.Instance.deleted == 0,
            models.Instance.task_state.in_(list(task_states)),
            sa.func.coalesce(models.Instance.updated_at,
                             models.Instance.created_at) < updated_before)
        return [_instance_dict(r) for r in session.scalars(query)]


# --- placement audit (issue 7: nova-moves-manage placement audit)

# A migration in one of these holds nothing any more; any other status
# (including the parked 'finished' resize and 'done' evacuation) may still
# hold the source half.
MIGRATION_TERMINAL_STATUSES = ('confirmed', 'reverted', 'error', 'failed',
                               'completed', 'cancelled')


def allocations_orphaned():
    """Allocations whose consumer is neither a live (not deleted) server
    nor a migration still in progress: {consumer: {provider_uuid: {rc:
    used}}}. Every flow writes its server or migration row before it
    allocates, so a consumer without either is a leak."""
    with _session(writer=False) as session:
        live = set(session.scalars(sa.select(models.Instance.uuid).where(
            models.Instance.deleted == 0)))
        moving = set(session.scalars(sa.select(models.Migration.uuid).where(
            models.Migration.status.not_in(MIGRATION_TERMINAL_STATUSES))))
    return {consumer: allocations for consumer, allocations in
            allocations_all().items() if consumer not in live | moving}


@_with_cas_retry
def migration_start(instance_uuid, values, old_flavor, new_flavor,
                    expected_task_state='resize_prep'):
    """The conductor's start of a resize/cold migration, all or nothing:
    create the migration row from ``values``, record old/new flavor on
    the server (only while it still has ``expected_task_state``) and hand
    the server's current allocation to the migration's uuid. Returns the
    migration. Raises UnexpectedTaskState with nothing written."""
    values = dict(values)
    values.setdefault('uuid', str(uuidlib.uuid4()))
    with _session() as session:
        result = session.execute(
            sa.update(models.Instance)
            .where(models.Instance.uuid == instance_uuid,
                   models.Instance.deleted == 0,
                   models.Instance.task_state == expected_task_state)
            .values(**_encode_instance_values(
                {'old_flavor': old_flavor, 'new_flavor': new_flavor})))
        if result.rowcount != 1:
            raise exception.UnexpectedTaskState(
                instance_uuid=instance_uuid, expected=expected_task_state,
                actual='(changed)')
        row = models.Migration(**values)
        session.add(row)
        allocations = session.scalars(sa.select(models.Allocation).where(
            models.Allocation.consumer_id == instance_uuid)).all()
        if allocations:
            generations = dict(session.execute(
                sa.select(models.ResourceProvider.id,
                          models.ResourceProvider.generation)
                .where(models.ResourceProvider.id.in_(
                    {a.resource_provider_id for a in allocations}))).all())
            for allocation in allocations:
                allocation.consumer_id = values['uuid']
            session.flush()
            if not _bump_generations(session, generations):
                raise _GenerationConflict()
        session.flush()
        return _to_dict(row)
