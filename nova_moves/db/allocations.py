"""Placement writes: allocations per consumer, with provider
generation compare-and-swap."""
import time

from oslo_db import exception as db_exc
import sqlalchemy as sa

from nova_moves.db import models
from nova_moves import exception
from nova_moves import states
from nova_moves.db.candidates import _capacity, _load_placement
from nova_moves.db.session import _session, _tx


_CAS_RETRIES = 20

# The statements every move step runs, built once (building a statement
# costs more CPU than executing it).
_bp = sa.bindparam
_PROVIDERS = models.ResourceProvider.__table__
_CONSUMERS = models.Consumer.__table__
_ALLOCATIONS = models.Allocation.__table__
_ALLOCATIONS_OF = (
    sa.select(_PROVIDERS.c.uuid, _ALLOCATIONS.c.resource_class,
              _ALLOCATIONS.c.used)
    .join(_PROVIDERS, _PROVIDERS.c.id == _ALLOCATIONS.c.resource_provider_id)
    .where(_ALLOCATIONS.c.consumer_id == _bp('b_consumer')))
_TOUCH_PROVIDER = _PROVIDERS.update().where(
    _PROVIDERS.c.id == _bp('b_id')).values(
    generation=_PROVIDERS.c.generation + 1)
_BUMP_CONSUMER = _CONSUMERS.update().where(
    _CONSUMERS.c.uuid == _bp('b_uuid')).values(
    generation=_CONSUMERS.c.generation + 1)
_BUMP_CONSUMER_RETURNING = _BUMP_CONSUMER.returning(_CONSUMERS.c.generation)
_BUMP_CONSUMER_CAS = _BUMP_CONSUMER.where(
    _CONSUMERS.c.generation == _bp('b_generation'))
_CONSUMER_GENERATION = sa.select(_CONSUMERS.c.generation).where(
    _CONSUMERS.c.uuid == _bp('b_uuid'))
_NEW_CONSUMER = _CONSUMERS.insert().values(uuid=_bp('v_uuid'), generation=1)
_HOLDINGS = sa.select(
    _ALLOCATIONS.c.consumer_id, _ALLOCATIONS.c.resource_provider_id).where(
    _ALLOCATIONS.c.consumer_id.in_(_bp('b_consumers', expanding=True)))
_DROP_CONSUMER = _ALLOCATIONS.delete().where(
    _ALLOCATIONS.c.consumer_id == _bp('b_consumer'))
_HAND_OVER = _ALLOCATIONS.update().where(
    _ALLOCATIONS.c.consumer_id == _bp('b_from')).values(
    consumer_id=_bp('v_to'))
_ROWS_OF = sa.select(_ALLOCATIONS.c.id,
                     _ALLOCATIONS.c.resource_provider_id).where(
    _ALLOCATIONS.c.consumer_id == _bp('b_consumer'))
_DROP_ROWS = _ALLOCATIONS.delete().where(
    _ALLOCATIONS.c.id.in_(_bp('b_ids', expanding=True)))
_HELD = sa.select(
    _ALLOCATIONS.c.id, _ALLOCATIONS.c.resource_provider_id,
    _ALLOCATIONS.c.resource_class, _ALLOCATIONS.c.used).where(
    _ALLOCATIONS.c.consumer_id.in_(_bp('b_consumers', expanding=True)))
_PROVIDER_IDS = sa.select(_PROVIDERS.c.id).where(
    _PROVIDERS.c.uuid.in_(_bp('b_uuids', expanding=True)))
_NEW_ALLOCATION = _ALLOCATIONS.insert().values(
    resource_provider_id=_bp('v_rp'), consumer_id=_bp('v_consumer'),
    resource_class=_bp('v_rc'), used=_bp('v_used'))
_PROVIDER_CAS = _PROVIDERS.update().where(
    _PROVIDERS.c.id == _bp('b_id'),
    _PROVIDERS.c.generation == _bp('b_generation')).values(
    generation=_bp('v_generation'))


def allocations_get(consumer_id):
    """{provider_uuid: {resource_class: used}} held by a consumer."""
    with _tx(writer=False) as session:
        return _allocations_of(session, consumer_id)


def _allocations_of(session, consumer_id):
    result = {}
    for rp_uuid, rc, used in session.execute(_ALLOCATIONS_OF,
                                             {'b_consumer': consumer_id}):
        result.setdefault(rp_uuid, {})[rc] = used
    return result


def _bump_generations(session, providers):
    """Compare-and-swap the generation of every touched provider; False if
    any changed since we read it (a concurrent writer won). Providers are
    bumped in id order so two writers lock rows in the same order (fewer
    deadlocks on MySQL/PostgreSQL)."""
    for rp_id, generation in sorted(providers.items()):
        result = session.execute(_PROVIDER_CAS, {
            'b_id': rp_id, 'b_generation': generation,
            'v_generation': generation + 1})
        if result.rowcount != 1:
            return False
    return True


class _GenerationConflict(Exception):
    pass


def _touch_generations(session, provider_ids):
    """Move the generation of providers whose usage this transaction only
    lowers or hands from one consumer to another: nothing read can have
    gone stale (no capacity is checked), so an increment, not a
    compare-and-swap. Readers still see the change; on PostgreSQL and
    MySQL a concurrent writer waits for the row instead of losing its
    CAS and retrying the whole transaction."""
    for rp_id in sorted(set(provider_ids)):
        session.execute(_TOUCH_PROVIDER, {'b_id': rp_id})


def _with_cas_retry(fn):
    def wrapper(*args, **kwargs):
        for attempt in range(_CAS_RETRIES):
            try:
                return fn(*args, **kwargs)
            except (_GenerationConflict, db_exc.DBDeadlock,
                    db_exc.DBDuplicateEntry):
                time.sleep(0.005 * (attempt + 1))
        raise exception.ConcurrentUpdate(uuid=args[0] if args else '?')
    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def _bump_consumers(session, consumers, expected=None, new=(),
                    generations=None):
    """Bump the generation of every consumer whose allocations this
    transaction writes; a consumer with an ``expected`` generation must
    still have it (ConsumerGenerationConflict otherwise: placement 1.28).
    ``new``: consumers this transaction created (a migration's uuid):
    inserted without trying an update first. ``generations``: a dict
    given the bumped consumers' new generations where the database
    returns them from the update (PostgreSQL, SQLite)."""
    expected = expected or {}
    for consumer in sorted(set(consumers)):
        want = expected.get(consumer)
        if consumer in new:
            session.execute(_NEW_CONSUMER, {'v_uuid': consumer})
            continue
        if want is None and generations is not None and \
                session.dialect.update_returning:
            result = session.execute(_BUMP_CONSUMER_RETURNING,
                                     {'b_uuid': consumer})
            generation = result.scalar()
            if generation is not None:
                generations[consumer] = generation
                continue
        elif want is None:
            result = session.execute(_BUMP_CONSUMER, {'b_uuid': consumer})
        else:
            result = session.execute(_BUMP_CONSUMER_CAS, {
                'b_uuid': consumer, 'b_generation': want})
        if result.rowcount == 1:
            continue
        if want is not None:
            current = session.execute(_CONSUMER_GENERATION,
                                      {'b_uuid': consumer}).scalar()
            raise exception.ConsumerGenerationConflict(
                consumer=consumer, expected=want, actual=current)
        # A new consumer (a concurrent insert of the same one fails on
        # the unique key and the caller's CAS retry runs again).
        session.execute(_NEW_CONSUMER, {'v_uuid': consumer})


def consumer_generation_get(consumer_id):
    """The consumer's generation now (None: never held anything)."""
    with _tx(writer=False) as session:
        return session.execute(_CONSUMER_GENERATION,
                               {'b_uuid': consumer_id}).scalar()


def consumer_generations_all():
    """{consumer: generation} for the invariant checks."""
    table = models.Consumer.__table__
    with _tx(writer=False) as session:
        return dict(session.execute(sa.select(table.c.uuid,
                                              table.c.generation)).all())


def _replace_in(session, consumer_id, allocations, from_consumer=None,
                consumer_generation=None, old=None):
    """allocations_replace inside the caller's transaction (``old``: what
    the consumers hold, when the caller read it)."""
    if old is None:
        old = session.execute(_HELD, {'b_consumers': [consumer_id] + (
            [from_consumer] if from_consumer else [])}).all()
    # Only the providers this claim touches: the ones asked for and
    # the ones the consumers hold now.
    wanted = set(session.scalars(_PROVIDER_IDS,
                                 {'b_uuids': list(allocations)}))
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
    _bump_consumers(session, [consumer_id] + (
        [from_consumer] if from_consumer else []),
        {consumer_id: consumer_generation})
    if old:
        session.execute(_DROP_ROWS, {'b_ids': [a.id for a in old]})
    rows = [{'v_rp': by_uuid[rp_uuid].id, 'v_consumer': consumer_id,
             'v_rc': rc, 'v_used': amount}
            for rp_uuid, resources in allocations.items()
            for rc, amount in resources.items()]
    if rows:
        session.execute(_NEW_ALLOCATION, rows)
    if not _bump_generations(session, generations):
        raise _GenerationConflict()


def allocations_replace(consumer_id, allocations, from_consumer=None,
                        consumer_generation=None, checked=None):
    """Set what ``consumer_id`` holds to ``allocations`` (placement's PUT
    /allocations), checking capacity for every increase. With
    ``from_consumer``, that consumer's allocations are dropped in the same
    transaction (an atomic hand-over). With ``consumer_generation``, the
    consumer must still be at that generation (a claim for a move that
    was rolled back meanwhile fails with ConsumerGenerationConflict).
    Raises AllocationFailed when a provider cannot fit the request.

    ``checked``: {provider uuid: (id, generation)} of root providers
    whose capacity the caller checked at those generations (the
    scheduler's view): when the consumer holds nothing, the claim writes
    without reading placement again, as placement's allocation
    candidates do, and a provider moved since is a lost CAS, after which
    the claim is checked against the database as without ``checked``."""
    if checked and from_consumer is None:
        try:
            with _tx() as session:
                if _claim_checked(session, consumer_id, allocations,
                                  consumer_generation, checked):
                    return True
        except (_GenerationConflict, db_exc.DBDeadlock,
                db_exc.DBDuplicateEntry):
            pass
    return _replace(consumer_id, allocations, from_consumer,
                    consumer_generation)


def _claim_checked(session, consumer_id, allocations, consumer_generation,
                   checked):
    """allocations_replace's claim at the generations its caller checked
    the capacity at; the full check instead (same transaction) when the
    consumer holds something or ``checked`` misses a provider."""
    old = session.execute(_HELD, {'b_consumers': [consumer_id]}).all()
    if old or not allocations or not set(allocations) <= set(checked):
        _replace_in(session, consumer_id, allocations,
                    consumer_generation=consumer_generation, old=old)
        return True
    _bump_consumers(session, [consumer_id],
                    {consumer_id: consumer_generation})
    session.execute(_NEW_ALLOCATION, [
        {'v_rp': checked[rp_uuid][0], 'v_consumer': consumer_id,
         'v_rc': rc, 'v_used': amount}
        for rp_uuid, resources in allocations.items()
        for rc, amount in resources.items()])
    if not _bump_generations(session, {checked[rp_uuid][0]:
                                       checked[rp_uuid][1]
                                       for rp_uuid in allocations}):
        raise _GenerationConflict()
    return True


@_with_cas_retry
def _replace(consumer_id, allocations, from_consumer, consumer_generation):
    with _tx() as session:
        _replace_in(session, consumer_id, allocations, from_consumer,
                    consumer_generation)
    return True



def _move_in(session, from_consumer, to_consumer, to_is_new=False,
             read_back=True, generations=None):
    """allocations_move inside the caller's transaction; {} when
    ``from_consumer`` held nothing (then nothing changes). Core
    statements: one UPDATE hands every row over. ``to_is_new``: the
    receiving consumer was created by this transaction; ``read_back``
    False: return True instead of what moved (one read fewer);
    ``generations``: see _bump_consumers."""
    rows = session.execute(_HOLDINGS, {
        'b_consumers': [from_consumer, to_consumer]}).all()
    if not any(r.consumer_id == from_consumer for r in rows):
        return {}
    if any(r.consumer_id == to_consumer for r in rows):
        session.execute(_DROP_CONSUMER, {'b_consumer': to_consumer})
    session.execute(_HAND_OVER, {'b_from': from_consumer,
                                 'v_to': to_consumer})
    _bump_consumers(session, [from_consumer, to_consumer],
                    new=(to_consumer,) if to_is_new else (),
                    generations=generations)
    _touch_generations(session, [r.resource_provider_id for r in rows])
    return _allocations_of(session, to_consumer) if read_back else True


@_with_cas_retry
def allocations_move(from_consumer, to_consumer):
    """Hand everything ``from_consumer`` holds to ``to_consumer``, which
    must hold nothing. Returns what moved."""
    with _tx() as session:
        return _move_in(session, from_consumer, to_consumer)


def _delete_in(session, consumer_id, root_host=None, retire=False):
    if root_host is None:
        rows = session.execute(_ROWS_OF, {'b_consumer': consumer_id}).all()
    else:
        table, providers = _ALLOCATIONS, _PROVIDERS
        root = sa.select(providers.c.id).where(
            providers.c.name == root_host).scalar_subquery()
        rows = session.execute(
            sa.select(table.c.id, table.c.resource_provider_id).where(
                table.c.consumer_id == consumer_id,
                table.c.resource_provider_id.in_(
                    sa.select(providers.c.id).where(
                        providers.c.root_provider_id == root)))).all()
    if not rows:
        if retire:
            # Nothing held yet, but a claim may still be on its way
            # (a boot's scheduler call): it states the old generation.
            session.execute(_BUMP_CONSUMER, {'b_uuid': consumer_id})
        return False
    session.execute(_DROP_ROWS, {'b_ids': [r.id for r in rows]})
    _bump_consumers(session, [consumer_id])
    _touch_generations(session, [r.resource_provider_id for r in rows])
    return True


@_with_cas_retry
def allocations_delete(consumer_id, root_host=None, retire=False):
    """Drop what a consumer holds; with ``root_host`` only its allocations
    in that host's provider tree (the source half after an evacuation).
    With ``retire``, the consumer's generation moves even when it held
    nothing, so a claim stating the generation read before (a failed or
    deleted boot's late scheduler claim) is refused."""
    with _tx() as session:
        return _delete_in(session, consumer_id, root_host, retire)


@_with_cas_retry
def consumer_ensure(consumer_id):
    """The consumer's generation, recording it (holding nothing) if it
    is new: a boot's claim states it like a move's claim does."""
    with _tx() as session:
        generation = session.execute(_CONSUMER_GENERATION,
                                     {'b_uuid': consumer_id}).scalar()
        if generation is None:
            # A concurrent insert fails on the unique key: retried.
            session.execute(_NEW_CONSUMER, {'v_uuid': consumer_id})
            generation = 1
        return generation


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


def allocation_is_single_root(consumer_id):
    """A forced move can only copy an allocation served by one root
    provider alone (no nested child, no sharing provider), as Nova's spec
    "Remove force flag from live-migrate and evacuate" says."""
    with _session(writer=False) as session:
        rows = session.execute(
            sa.select(models.ResourceProvider.id,
                      models.ResourceProvider.root_provider_id)
            .join(models.Allocation, models.Allocation.resource_provider_id
                  == models.ResourceProvider.id)
            .where(models.Allocation.consumer_id == consumer_id)
            .distinct()).all()
    return len(rows) == 1 and rows[0][0] == rows[0][1]


def allocations_orphaned():
    """Allocations whose consumer is neither a live (not deleted) server
    nor a migration still in progress: {consumer: {provider_uuid: {rc:
    used}}}. Every flow writes its server or migration row before it
    allocates, so a consumer without either is a leak."""
    with _session(writer=False) as session:
        live = set(session.scalars(sa.select(models.Instance.uuid).where(
            models.Instance.deleted == 0)))
        moving = set(session.scalars(sa.select(models.Migration.uuid).where(
            models.Migration.status.not_in(
                states.MIGRATION_TERMINAL_STATUSES))))
    return {consumer: allocations for consumer, allocations in
            allocations_all().items() if consumer not in live | moving}


def allocation_root_hosts(consumer_id):
    """{root provider name (the host): root provider uuid} of the
    providers ``consumer_id`` holds allocations on."""
    root = sa.orm.aliased(models.ResourceProvider)
    with _session(writer=False) as session:
        rows = session.execute(
            sa.select(root.name, root.uuid)
            .join(models.ResourceProvider,
                  models.ResourceProvider.root_provider_id == root.id)
            .join(models.Allocation, models.Allocation.resource_provider_id
                  == models.ResourceProvider.id)
            .where(models.Allocation.consumer_id == consumer_id)
            .distinct()).all()
    return dict(rows)
