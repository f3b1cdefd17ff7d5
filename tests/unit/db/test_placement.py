"""Placement in our database: capacity, the generation compare-and-swap,
nested and sharing providers, and the helpers of forced moves (Nova spec
"Remove force flag from live-migrate and evacuate")."""
import threading
import uuid

import testtools

from nova_moves.db import api as db_api
from nova_moves import exception
from tests.unit import fixtures as nm_fixtures

FLAVOR = {'vcpus': 1, 'memory_mb': 1024, 'root_gb': 10}


class PlacementTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.Database())

    def test_capacity_counts_reserved_and_ratios(self):
        nm_fixtures.node('h1', vcpus=2, memory_mb=4096,
                         reserved_host_memory_mb=1024, cpu_ratio=2.0)
        rp = nm_fixtures.providers()['h1']
        # VCPU capacity (2 - 0) * 2.0 = 4; MEMORY_MB 4096 - 1024 = 3072.
        db_api.allocations_replace('a', {rp: {'VCPU': 4, 'MEMORY_MB': 3072}})
        exc = self.assertRaises(exception.AllocationFailed,
                                db_api.allocations_replace, 'b',
                                {rp: {'VCPU': 1}})
        self.assertIn('VCPU', str(exc))
        self.assertEqual([], db_api.allocation_candidates({'VCPU': 1}))
        # Replacing a consumer's own allocation frees what it held first.
        db_api.allocations_replace('a', {rp: {'VCPU': 3, 'MEMORY_MB': 3072}})
        db_api.allocations_replace('b', {rp: {'VCPU': 1}})

    def test_candidates_and_unfit_reasons(self):
        nm_fixtures.node('small', memory_mb=1024)
        nm_fixtures.node('big', memory_mb=8192)
        resources = db_api.resources_from_flavor(dict(FLAVOR,
                                                      memory_mb=2048))
        self.assertEqual({'VCPU': 1, 'MEMORY_MB': 2048, 'DISK_GB': 10},
                         resources)
        hosts = [c['host'] for c in db_api.allocation_candidates(resources)]
        self.assertEqual(['big'], hosts)
        self.assertEqual(['MEMORY_MB: requested 2048, free 1024 on small'],
                         db_api.explain_unfit(resources, 'small'))
        self.assertEqual(['host nowhere has no resource provider'],
                         db_api.explain_unfit(resources, 'nowhere'))

    def test_every_write_bumps_the_generation(self):
        nm_fixtures.node('h1')
        before = db_api.provider_usages()['h1']['generation']
        rp = nm_fixtures.providers()['h1']
        db_api.allocations_replace('a', {rp: {'VCPU': 1}})
        db_api.allocations_move('a', 'b')
        db_api.allocations_delete('b')
        self.assertEqual(before + 3,
                         db_api.provider_usages()['h1']['generation'])

    def test_stale_generation_is_a_conflict(self):
        nm_fixtures.node('h1')
        usages = db_api.provider_usages()['h1']
        with db_api._session() as session:
            rp_id = session.scalars(db_api.sa.select(
                db_api.models.ResourceProvider.id).where(
                    db_api.models.ResourceProvider.name == 'h1')).one()
            self.assertFalse(db_api._bump_generations(
                session, {rp_id: usages['generation'] - 1}))
            self.assertTrue(db_api._bump_generations(
                session, {rp_id: usages['generation']}))

    def test_cas_retry_gives_up_with_concurrent_update(self):
        calls = []

        @db_api._with_cas_retry
        def always_conflicts(consumer):
            calls.append(consumer)
            raise db_api._GenerationConflict()

        self.assertRaises(exception.ConcurrentUpdate, always_conflicts, 'c')
        self.assertEqual(db_api._CAS_RETRIES, len(calls))

    def test_concurrent_claims_never_overcommit(self):
        nm_fixtures.node('h1', vcpus=5, memory_mb=100000)
        rp = nm_fixtures.providers()['h1']
        won, lost = [], []

        def claim(i):
            try:
                db_api.allocations_replace('c%d' % i, {rp: {'VCPU': 1}})
                won.append(i)
            except exception.AllocationFailed:
                lost.append(i)

        threads = [threading.Thread(target=claim, args=(i,))
                   for i in range(12)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual((5, 7), (len(won), len(lost)))
        self.assertEqual(5, db_api.provider_usages()['h1']['usages']['VCPU'])

    def test_nested_disk_provider(self):
        nm_fixtures.node('h1', disk_provider='nested')
        rps = nm_fixtures.providers()
        resources = db_api.resources_from_flavor(FLAVOR)
        [candidate] = db_api.allocation_candidates(resources)
        self.assertEqual({rps['h1']: {'VCPU': 1, 'MEMORY_MB': 1024},
                          rps['h1_disk']: {'DISK_GB': 10}},
                         candidate['allocations'])
        db_api.allocations_replace('vm', candidate['allocations'])
        self.assertFalse(db_api.allocation_is_single_root('vm'))
        # The root alone has no DISK_GB: a forced move cannot copy it.
        self.assertIsNone(db_api.root_only_candidate(resources, 'h1'))
        self.assertEqual(
            {rps['h1']: {'VCPU': 1, 'MEMORY_MB': 1024}},
            db_api.root_only_candidate({'VCPU': 1, 'MEMORY_MB': 1024}, 'h1'))
        # Dropping the source half only touches that host's tree.
        self.assertTrue(db_api.allocations_delete('vm', root_host='h1'))
        self.assertEqual({}, db_api.allocations_get('vm'))

    def test_sharing_provider_serves_both_hosts(self):
        nm_fixtures.node('h1', disk_provider='sharing:agg1', disk_gb=15)
        nm_fixtures.node('h2', disk_provider='sharing:agg1', disk_gb=15)
        rps = nm_fixtures.providers()
        resources = db_api.resources_from_flavor(FLAVOR)
        candidates = {c['host']: c for c in
                      db_api.allocation_candidates(resources)}
        self.assertEqual({'h1', 'h2'}, set(candidates))  # never agg1 itself
        self.assertEqual({'DISK_GB': 10},
                         candidates['h1']['allocations'][rps['agg1']])
        db_api.allocations_replace('vm1', candidates['h1']['allocations'])
        self.assertFalse(db_api.allocation_is_single_root('vm1'))
        # The shared disk is used up for h2 as well.
        self.assertEqual([], db_api.allocation_candidates(resources))
        self.assertIn('DISK_GB', db_api.explain_unfit(resources, 'h2')[0])

    def test_single_root(self):
        nm_fixtures.node('h1')
        rp = nm_fixtures.providers()['h1']
        db_api.allocations_replace('vm', {rp: {'VCPU': 1, 'DISK_GB': 1}})
        self.assertTrue(db_api.allocation_is_single_root('vm'))
        self.assertFalse(db_api.allocation_is_single_root('nobody'))
        self.assertIsNone(db_api.root_only_candidate({'VCPU': 99}, 'h1'))
        self.assertIsNone(db_api.root_only_candidate({'VCPU': 1}, 'nope'))

    def test_move_hands_over_atomically(self):
        nm_fixtures.node('h1')
        rp = nm_fixtures.providers()['h1']
        db_api.allocations_replace('server', {rp: {'VCPU': 2}})
        db_api.allocations_move('server', 'migration')
        self.assertEqual({}, db_api.allocations_get('server'))
        self.assertEqual({rp: {'VCPU': 2}},
                         db_api.allocations_get('migration'))

    def test_orphaned_allocations(self):
        nm_fixtures.node('h1')
        rp = nm_fixtures.providers()['h1']
        flavor = nm_fixtures.flavor()
        server = db_api.instance_create({
            'display_name': 'vm', 'user_id': 'u', 'project_id': 'p',
            'vm_state': 'active', 'flavor': flavor})
        moving = db_api.migration_create({
            'instance_uuid': server['uuid'], 'migration_type': 'migration',
            'status': 'finished'})
        done = db_api.migration_create({
            'instance_uuid': server['uuid'], 'migration_type': 'migration',
            'status': 'confirmed'})
        leak = str(uuid.uuid4())
        for consumer in (server['uuid'], moving['uuid'], done['uuid'], leak):
            db_api.allocations_replace(consumer, {rp: {'VCPU': 1}})
        self.assertEqual({done['uuid'], leak},
                         set(db_api.allocations_orphaned()))
        db_api.instance_destroy(server['uuid'])
        self.assertIn(server['uuid'], db_api.allocations_orphaned())
