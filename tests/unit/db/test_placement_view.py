"""The scheduler's in-memory PlacementView against a full read: after
every kind of write (claims, hand-overs, deletes, new hosts, inventory
changes on nested and sharing providers) it must give the same
candidates as allocation_candidates."""
import datetime

import sqlalchemy as sa
import testtools

from nova_moves.db import api as db_api
from nova_moves.db import candidates
from nova_moves.db import models
from nova_moves.db import session as db_session
from nova_moves import exception
from tests.unit import fixtures as nm_fixtures

SMALL = {'VCPU': 1, 'MEMORY_MB': 1024, 'DISK_GB': 10}
BIG = {'VCPU': 2, 'MEMORY_MB': 3072, 'DISK_GB': 40}


class PlacementViewTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.Database())
        self.view = db_api.PlacementView()

    def assertSame(self):
        for resources in (SMALL, BIG):
            full = db_api.allocation_candidates(resources)
            self.assertEqual(full, self.view.candidates(resources))
            # The lazy walk is the RAM weigher's order of the same set.
            self.assertEqual(
                sorted(full, key=lambda c: -c['free']['MEMORY_MB']),
                list(self.view.most_free_ram_first(resources)))
        self.assertEqual(db_api.allocation_candidates(SMALL, ['h1']),
                         self.view.candidates(SMALL, ['h1']))

    def first(self, host, resources=SMALL):
        return db_api.allocation_candidates(resources, [host])[0][
            'allocations']

    def test_follows_every_write(self):
        nm_fixtures.node('h1')
        nm_fixtures.node('h2', disk_provider='nested')
        self.assertSame()
        nm_fixtures.node('h3', disk_provider='sharing:agg', disk_gb=50)
        nm_fixtures.node('h4', disk_provider='sharing:agg', disk_gb=50)
        self.assertSame()
        db_api.allocations_replace('a', self.first('h1', BIG))
        db_api.allocations_replace('b', self.first('h3', BIG))
        self.assertSame()
        self.assertEqual([], self.view.candidates(
            BIG, ['h4']))  # the sharing disk is nearly full now
        db_api.allocations_replace('c', self.first('h2'))
        db_api.allocations_move('c', 'd')
        self.assertSame()
        db_api.allocations_replace('d', self.first('h4'), from_consumer='b')
        self.assertSame()
        db_api.allocations_delete('a')
        self.assertSame()
        # Inventory grows on the nested child and the sharing provider:
        # only the hosts' roots move their generation.
        nm_fixtures.node('h2', disk_provider='nested', disk_gb=500)
        nm_fixtures.node('h3', disk_provider='sharing:agg', disk_gb=400)
        nm_fixtures.node('h1', memory_mb=512)
        self.assertSame()
        self.assertEqual(['h2', 'h3', 'h4'], [
            c['host'] for c in self.view.candidates(BIG)])

    def test_lists_only_providers_written_since(self):
        """A refresh lists only the providers stamped since the previous
        one (minus a slack): a change stamped further back (a writer's
        clock behind) stays unseen until the next listing of every
        generation, which then finds it."""
        for host in ('h1', 'h2', 'h3'):
            nm_fixtures.node(host)
        self.assertSame()
        long_ago = models.utcnow() - datetime.timedelta(minutes=5)
        rp = models.ResourceProvider.__table__
        inv = models.Inventory.__table__
        with db_session._tx() as session:
            h1 = session.execute(sa.select(rp.c.id).where(
                rp.c.name == 'h1')).scalar()
            session.execute(inv.update().where(
                inv.c.resource_provider_id == h1,
                inv.c.resource_class == 'MEMORY_MB').values(total=100))
            session.execute(rp.update().where(rp.c.id == h1).values(
                generation=rp.c.generation + 1, updated_at=long_ago,
                created_at=long_ago))
        nm_fixtures.node('h2', memory_mb=8192)  # stamped now
        self.assertEqual(['h1', 'h2', 'h3'], sorted(
            c['host'] for c in self.view.candidates(SMALL)))
        self.assertEqual(['h2'], [c['host'] for c in self.view.candidates(
            {'VCPU': 1, 'MEMORY_MB': 6000})])
        self.view._listed_all_at -= candidates._FULL_LIST_EVERY
        self.assertEqual(['h2', 'h3'], sorted(
            c['host'] for c in self.view.candidates(SMALL)))
        self.assertSame()


class CheckedClaimTest(testtools.TestCase):
    """The scheduler's claim at the generation its view checked the
    capacity at (placement's allocation candidates): no read of
    placement when the view is current, and a lost CAS checked against
    the database when it is not, never an overcommit."""

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.Database())
        self.view = db_api.PlacementView()

    def claim(self, consumer, resources=SMALL, host='h1'):
        [state] = self.view.candidates(resources, [host])
        return db_api.allocations_replace(
            consumer, state['allocations'],
            checked=self.view.checked(state['root_id'],
                                      state['allocations']))

    def test_current_view_claims_without_reading_placement(self):
        nm_fixtures.node('h1')
        self.view.refresh()
        statements = self.useFixture(nm_fixtures.Statements())
        self.claim('a')
        # The consumer's holdings, its generation, the rows and the CAS:
        # no provider, inventory or usage read.
        self.assertEqual(1, len(statements.starting('SELECT')),
                         statements.seen)
        self.assertEqual({'VCPU': 1, 'MEMORY_MB': 1024, 'DISK_GB': 10},
                         db_api.provider_usages()['h1']['usages'])

    def test_stale_view_never_overcommits(self):
        nm_fixtures.node('h1', vcpus=1)
        self.view.refresh()
        [state] = self.view.candidates(SMALL, ['h1'])
        checked = self.view.checked(state['root_id'], state['allocations'])
        # Another scheduler takes the only VCPU after this view's refresh.
        db_api.allocations_replace('other', state['allocations'])
        self.assertRaises(exception.AllocationFailed,
                          db_api.allocations_replace, 'mine',
                          state['allocations'], checked=checked)
        self.assertEqual({}, db_api.allocations_get('mine'))
        self.assertEqual(1, db_api.provider_usages()['h1']['usages']['VCPU'])

    def test_stale_view_with_room_still_claims(self):
        nm_fixtures.node('h1', vcpus=4)
        self.view.refresh()
        [state] = self.view.candidates(SMALL, ['h1'])
        checked = self.view.checked(state['root_id'], state['allocations'])
        db_api.allocations_replace('other', state['allocations'])
        db_api.allocations_replace('mine', state['allocations'],
                                   checked=checked)
        self.assertEqual(2, db_api.provider_usages()['h1']['usages']['VCPU'])

    def test_only_a_lone_root_that_still_fits(self):
        nm_fixtures.node('h1', vcpus=1)
        nm_fixtures.node('h2', disk_provider='nested')
        self.view.refresh()
        [nested] = self.view.candidates(SMALL, ['h2'])
        self.assertIsNone(self.view.checked(nested['root_id'],
                                            nested['allocations']))
        [state] = self.view.candidates(SMALL, ['h1'])
        self.assertIsNotNone(self.view.checked(state['root_id'],
                                               state['allocations']))
        db_api.allocations_replace('other', state['allocations'])
        self.view.refresh()
        self.assertIsNone(self.view.checked(state['root_id'],
                                            state['allocations']))

    def test_a_holding_consumer_is_checked_in_the_database(self):
        nm_fixtures.node('h1', vcpus=3)
        self.view.refresh()
        self.claim('a')
        self.view.refresh()
        # 'a' already holds one VCPU: replacing it frees that one first.
        self.claim('a', dict(SMALL, VCPU=2))
        self.assertEqual(2, db_api.provider_usages()['h1']['usages']['VCPU'])

    def test_consumer_generation_still_guards(self):
        nm_fixtures.node('h1')
        self.view.refresh()
        [state] = self.view.candidates(SMALL, ['h1'])
        self.assertRaises(
            exception.ConsumerGenerationConflict,
            db_api.allocations_replace, 'a', state['allocations'],
            consumer_generation=7,
            checked=self.view.checked(state['root_id'],
                                      state['allocations']))
        self.assertEqual({}, db_api.allocations_get('a'))
