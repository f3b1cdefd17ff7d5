"""Placement reads: capacity, allocation candidates, usages."""
import bisect
import datetime
import threading
import time

import sqlalchemy as sa

from nova_moves.db import models
from nova_moves.db import retry
from nova_moves.db.session import _session, _tx


RESOURCE_CLASSES = ('VCPU', 'MEMORY_MB', 'DISK_GB')


def _capacity(inv):
    return int((inv.total - inv.reserved) * inv.allocation_ratio)


def _placement_queries(only):
    """The four reads of _load_placement; with ``only``, of the providers
    in the expanding parameter b_ids."""
    rp_t = models.ResourceProvider.__table__
    inv_t = models.Inventory.__table__
    alloc_t = models.Allocation.__table__
    agg_t = models.ProviderAggregate.__table__

    def of(query, column):
        return query.where(column.in_(sa.bindparam('b_ids', expanding=True))
                           ) if only else query

    return (of(sa.select(rp_t), rp_t.c.id),
            of(sa.select(inv_t), inv_t.c.resource_provider_id),
            of(sa.select(alloc_t.c.resource_provider_id,
                         alloc_t.c.resource_class,
                         sa.func.sum(alloc_t.c.used)),
               alloc_t.c.resource_provider_id)
            .group_by(alloc_t.c.resource_provider_id,
                      alloc_t.c.resource_class),
            of(sa.select(agg_t.c.resource_provider_id,
                         agg_t.c.aggregate_uuid),
               agg_t.c.resource_provider_id))


# Built once: every scheduling request and claim runs them.
_ALL_PLACEMENT = _placement_queries(False)
_SOME_PLACEMENT = _placement_queries(True)
_RP = models.ResourceProvider.__table__
_GENERATIONS = sa.select(_RP.c.id, _RP.c.root_provider_id, _RP.c.generation,
                         _RP.c.shares_via_aggregate)
# Every write that moves a generation stamps the row it writes
# (updated_at, or created_at for a new provider), so a refresh lists only
# the providers written since the last one instead of all of them.
_GENERATIONS_SINCE = _GENERATIONS.where(sa.or_(
    _RP.c.updated_at >= sa.bindparam('b_since'),
    _RP.c.created_at >= sa.bindparam('b_since')))
# The stamps come from the writers' clocks and a transaction commits
# after it stamps: a refresh looks back this far behind its previous
# one, and lists every generation (and notices removed providers) at
# least this often, which bounds what a missed stamp can hide.
_STAMP_SLACK = datetime.timedelta(seconds=10)
_FULL_LIST_EVERY = 60.0


def _load_placement(session, provider_ids=None):
    """Providers, inventories, usages and aggregates keyed by provider id;
    only ``provider_ids`` when given. Plain Core rows (attribute access by
    column name), not ORM objects: at 10,000 hosts that is 40,000 rows per
    scheduling request, and building ORM objects for them dominated."""
    if provider_ids is None:
        queries, params = _ALL_PLACEMENT, {}
    else:
        queries, params = _SOME_PLACEMENT, {'b_ids': list(provider_ids)}
    rp_q, inv_q, usage_q, agg_q = queries
    rps = {rp.id: rp for rp in session.execute(rp_q, params)}
    invs = {}
    for inv in session.execute(inv_q, params):
        invs.setdefault(inv.resource_provider_id, {})[inv.resource_class] = inv
    usage = {}
    for rp_id, rc, used in session.execute(usage_q, params):
        usage[(rp_id, rc)] = int(used)
    aggs = {}
    for rp_id, agg in session.execute(agg_q, params):
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
    return {'host': root.name, 'root_uuid': root.uuid, 'root_id': root.id,
            'allocations': allocation, 'free': free}


def allocation_candidates(resources, hosts=None):
    """Hosts (root providers) able to fit ``resources`` now, each with the
    allocation request that would claim them."""
    with _session(writer=False) as session:
        rps, invs, usage, aggs = _load_placement(session)
    return _candidates(resources, hosts, rps, invs, usage, aggs,
                       _provider_index(rps))


class PlacementView:
    """The scheduler's in-memory copy of placement (providers,
    inventories, usages, aggregates), refreshed incrementally: each
    refresh reads only (id, root, generation) of every provider and
    reloads the providers whose generation moved. Every write that
    changes a provider's usage or inventory moves its generation (the
    claim's CAS, _touch_generations, compute_node_sync on the root), so
    an unchanged generation means unchanged rows. The view only picks
    candidates; the claim re-checks capacity and CASes generations in
    the database, so a stale view costs a retry, never an overcommit."""

    def __init__(self):
        self.rps, self.invs, self.usage, self.aggs = {}, {}, {}, {}
        self.generations = {}
        self.index = ({}, [])
        # When the last refresh started (the database stamps' clock) and
        # when the last one listed every generation (monotonic).
        self._listed_since = None
        self._listed_all_at = None
        # Roots as (-free MEMORY_MB, id), sorted: the RAM weigher's order
        # (MEMORY_MB lives on the root only), kept up to date per changed
        # root so a request walks hosts best first and stops early.
        self.by_ram, self.ram_key = [], {}
        # The RPC server's threading executor runs requests concurrently:
        # refreshes (and full scans) must not interleave.
        self._lock = threading.Lock()

    def _changed(self, session, started):
        """(providers to reload, providers gone, whether every
        generation was listed)."""
        full = self._listed_all_at is None or \
            started - self._listed_all_at >= _FULL_LIST_EVERY
        if full:
            rows = session.execute(_GENERATIONS).all()
            gone = set(self.generations) - {row.id for row in rows}
        else:
            rows = session.execute(_GENERATIONS_SINCE, {
                'b_since': self._listed_since - _STAMP_SLACK}).all()
            gone = set()
        roots = {row.root_provider_id for row in rows
                 if self.generations.get(row.id) != row.generation}
        # A child's or a sharing provider's inventory is set by the sync
        # that bumps only its host's root: reload whole trees, and the
        # (few) sharing providers whenever anything moved.
        changed = {row.id for row in rows if row.root_provider_id in roots
                   or (roots and row.shares_via_aggregate)}
        if roots:
            trees, sharing = self.index
            for root in roots:
                changed.update(rp.id for rp in trees.get(root, ()))
            changed.update(rp.id for rp in sharing)
        return changed, gone, full

    def refresh(self):
        with self._lock:
            self._refresh()

    # A class, so db/api.py's wrapping does not reach it: the scheduler's
    # refresh rides out a restarting database like every db call does
    # (it fails before changing the view, so running it again is safe).
    @retry.retrying
    def _refresh(self):
        stamp = models.utcnow()
        started = time.monotonic()
        with _tx(writer=False) as session:
            changed, gone, full = self._changed(session, started)
            if not changed and not gone:
                self._listed(stamp, started, full)
                return
            rps, invs, usage, aggs = _load_placement(session, changed)
        for rp_id in changed | gone:
            self._unindex(self.rps.get(rp_id))
            if rp_id not in rps:
                self.rps.pop(rp_id, None)
                self.generations.pop(rp_id, None)
            self.invs.pop(rp_id, None)
            self.aggs.pop(rp_id, None)
            for rc in RESOURCE_CLASSES:
                self.usage.pop((rp_id, rc), None)
        # Assigning keeps a known provider's place, new ones go last in id
        # order: candidates keep the database's order, as a full read did.
        for rp_id in sorted(rps):
            self.rps[rp_id] = rps[rp_id]
            # The generation loaded, not the one listed: a write between
            # the two reads is then seen again on the next refresh.
            self.generations[rp_id] = rps[rp_id].generation
            self._index(rps[rp_id])
        self.invs.update(invs)
        self.usage.update(usage)
        self.aggs.update(aggs)
        for rp_id in changed | gone:
            self._resort(rp_id)
        self._listed(stamp, started, full)

    # The index (_provider_index's shape) follows the changed providers
    # instead of being rebuilt from every provider on each refresh.
    def _unindex(self, rp):
        if rp is None:
            return
        trees, sharing = self.index
        tree = trees.get(rp.root_provider_id, [])
        if rp in tree:
            tree.remove(rp)
        if not tree:
            trees.pop(rp.root_provider_id, None)
        if rp in sharing:
            sharing.remove(rp)

    def _index(self, rp):
        trees, sharing = self.index
        tree = trees.setdefault(rp.root_provider_id, [])
        tree.append(rp)
        tree.sort(key=lambda p: p.id)
        if rp.shares_via_aggregate:
            sharing.append(rp)
            sharing.sort(key=lambda p: p.id)

    def _listed(self, stamp, started, full):
        self._listed_since = stamp
        if full:
            self._listed_all_at = started

    def _resort(self, rp_id):
        old = self.ram_key.pop(rp_id, None)
        if old is not None:
            del self.by_ram[bisect.bisect_left(self.by_ram, old)]
        rp = self.rps.get(rp_id)
        if rp is None or rp.root_provider_id != rp.id or \
                rp.shares_via_aggregate:
            return
        inv = self.invs.get(rp.id, {}).get('MEMORY_MB')
        free = _capacity(inv) - self.usage.get((rp.id, 'MEMORY_MB'), 0) \
            if inv is not None else 0
        self.ram_key[rp_id] = (-free, rp_id)
        bisect.insort(self.by_ram, self.ram_key[rp_id])

    def checked(self, root_id, allocations):
        """{root uuid: (id, generation)} when ``allocations`` are on
        root ``root_id`` alone, a host with no child or sharing
        provider, and fit it as the view stands now: the generation
        its claim can state instead of reading placement again
        (allocations_replace's ``checked``). None otherwise. Under the
        lock, so the generation and the usage are of one refresh."""
        with self._lock:
            rp = self.rps.get(root_id)
            if rp is None or rp.shares_via_aggregate or \
                    set(allocations) != {rp.uuid} or \
                    len(self.index[0].get(rp.id, ())) != 1:
                return None
            invs = self.invs.get(rp.id, {})
            for rc, amount in allocations[rp.uuid].items():
                inv = invs.get(rc)
                if inv is None or amount > inv.max_unit or amount > \
                        _capacity(inv) - self.usage.get((rp.id, rc), 0):
                    return None
            return {rp.uuid: (rp.id, self.generations[rp.id])}

    def most_free_ram_first(self, resources):
        """Candidates, lazily, in the order of the RAM weigher with a
        positive multiplier (most free MEMORY_MB first, ties by id)."""
        self.refresh()
        for _key, rp_id in list(self.by_ram):
            root = self.rps.get(rp_id)  # None: removed by a refresh since
            candidate = root and _candidate_for_root(
                root, resources, self.rps, self.invs, self.usage,
                self.aggs, self.index)
            if candidate:
                yield candidate

    def candidates(self, resources, hosts=None):
        with self._lock:
            self._refresh()
            return _candidates(resources, hosts, self.rps, self.invs,
                               self.usage, self.aggs, self.index)


def _candidates(resources, hosts, rps, invs, usage, aggs, index):
    candidates = []
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


def root_only_candidate(resources, host):
    """The allocation that claims ``resources`` on ``host``'s root provider
    alone, or None if the root lacks the inventory or room (Nova spec
    "Remove force flag from live-migrate and evacuate")."""
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
