"""Chained cold-move steps (compute RPC 1.5, conductor 1.4): each host
writes the previous step's end in its own step's one call, so prep_resize
makes no conductor call and resize_instance one; a stale chained message
is still refused by the next host's guard before it touches a guest."""
import testtools

from nova_moves.compute import manager as compute_manager
from nova_moves.compute import rpcapi as compute_rpcapi
from nova_moves.db import api as db_api
from nova_moves import states
from tests.unit.compute import test_build_fake_transport as fake_transport
from tests.unit.compute import served
from tests.unit.compute import steps_base
from tests.unit import fixtures as nm_fixtures


class ChainingConductor(steps_base.RecordingConductor):

    def __init__(self, chain):
        super().__init__(whole_steps=True)
        self.chain = chain

    def can_chain_steps(self):
        return self.chain


class Router:
    """compute_rpcapi for in-process computes: a cast runs the handler
    of the named host at once."""

    def __init__(self, chain, chain_revert=None):
        self.computes = {}
        self.chain = chain
        self.chain_revert = chain if chain_revert is None else chain_revert
        self.sent = []

    def can_chain_steps(self):
        return self.chain

    def can_chain_revert(self):
        return self.chain_revert

    def __getattr__(self, method):
        def cast(ctxt, host, instance_uuid, migration_uuid, **kwargs):
            self.sent.append((method, host))
            getattr(self.computes[host], method)(
                ctxt, instance_uuid=instance_uuid,
                migration_uuid=migration_uuid, **kwargs)
        return cast


class ChainedStack(steps_base.ColdStepTestCase):
    """Two in-process computes whose casts run at once (no tests)."""

    def _stack(self, chain, chain_revert=None):
        router = Router(chain, chain_revert)
        for host in ('h1', 'h2'):
            compute = served.Served(compute_manager.ComputeManager(
                host, conductor=ChainingConductor(chain),
                compute_api=router))
            router.computes[host] = compute
        router.computes['h1'].driver.spawn(self.server, self.flavor)
        return router

    def _migrate(self, chain, chain_revert=None):
        router = self._stack(chain, chain_revert)
        router.computes['h2'].prep_resize(
            self.ctxt, self.server, self.migration['uuid'], self.flavor, {},
            [], source='h1')
        return router

    def _calls(self, router):
        return {h: len(c.conductor.advances)
                for h, c in router.computes.items()}


class ChainedStepsTest(ChainedStack):

    def test_chained_one_call_per_step(self):
        router = self._migrate(chain=True)
        # prep_resize none, resize_instance one, finish_resize two.
        self.assertEqual({'h1': 1, 'h2': 2}, self._calls(router))
        self.assertEqual(['resize_instance', 'finish_resize'],
                         [m for m, _ in router.sent])
        migration = db_api.migration_get(self.migration['uuid'])
        self.assertEqual(states.M_FINISHED, migration['status'])
        server = db_api.instance_get(self.server)
        self.assertEqual(('h2', 'h2', states.RESIZED, None),
                         (server['host'], server['node'],
                          server['vm_state'], server['task_state']))
        self.assertEqual(
            [('compute_finish_resize', 'Success', 'h2'),
             ('compute_prep_resize', 'Success', 'h2'),
             ('compute_resize_instance', 'Success', 'h1')],
            sorted(self._events()))

    def test_unchained_two_calls_per_step(self):
        router = self._migrate(chain=False)
        self.assertEqual({'h1': 2, 'h2': 3}, self._calls(router))
        self.assertEqual(states.M_FINISHED, db_api.migration_get(
            self.migration['uuid'])['status'])

    def test_stale_chained_prep_does_not_touch_the_source(self):
        """A prep_resize of a destination the move no longer names (it was
        rescheduled) reaches the source, whose guard refuses it: the old
        copy keeps running."""
        db_api.move_advance(self.migration['uuid'],
                            status=[states.M_PRE_MIGRATING],
                            values={'dest_compute': 'h3', 'dest_node': 'h3'})
        router = self._migrate(chain=True)
        self.assertEqual(['resize_instance'], [m for m, _ in router.sent])
        self.assertEqual('running', router.computes['h1'].driver.guests()[
            self.server]['power'])
        self.assertEqual(states.M_PRE_MIGRATING, db_api.migration_get(
            self.migration['uuid'])['status'])



class ChainedRevertTest(ChainedStepsTest):
    """The revert chained (compute RPC 1.7): revert_resize makes only its
    start call (its guard, before the new copy goes), finish_revert_resize
    writes its end (event, destination claim dropped) in its start."""

    def setUp(self):
        super().setUp()
        nm_fixtures.node('h1')
        nm_fixtures.node('h2')
        self.rps = nm_fixtures.providers()

    def _revert(self, router):
        """What the API's revertResize writes, then its cast; the claims
        as a finished move leaves them (the server's on the destination,
        the migration's on the source)."""
        db_api.allocations_replace(self.server, {self.rps['h2']: {'VCPU': 1}})
        db_api.allocations_replace(self.migration['uuid'],
                                   {self.rps['h1']: {'VCPU': 1}})
        db_api.instance_update(self.server,
                               {'task_state': states.RESIZE_REVERTING},
                               expected_task_state=[None])
        db_api.migration_update(self.migration['uuid'],
                                {'status': states.M_REVERTING},
                                expected_status=[states.M_FINISHED])
        before = self._calls(router)
        del router.sent[:]
        router.computes['h2'].revert_resize(
            self.ctxt, instance_uuid=self.server,
            migration_uuid=self.migration['uuid'])
        after = self._calls(router)
        return {h: after[h] - before[h] for h in after}

    def _assert_reverted(self, router):
        self.assertEqual(states.M_REVERTED, db_api.migration_get(
            self.migration['uuid'])['status'])
        server = db_api.instance_get(self.server)
        self.assertEqual(('h1', 'h1', states.ACTIVE, None),
                         (server['host'], server['node'],
                          server['vm_state'], server['task_state']))
        self.assertEqual([self.server],
                         list(router.computes['h1'].driver.guests()))
        self.assertEqual({}, router.computes['h2'].driver.guests())
        allocations = db_api.allocations_get(self.server)
        self.assertEqual({self.rps['h1']}, set(allocations), allocations)
        self.assertEqual({}, db_api.allocations_get(self.migration['uuid']))
        events = self._events()
        self.assertIn(('compute_revert_resize', 'Success', 'h2'), events)
        self.assertIn(('compute_finish_revert_resize', 'Success', 'h1'),
                      events)

    def test_chained_revert_three_calls(self):
        router = self._migrate(chain=True)
        # revert_resize its start only, finish_revert_resize two (its
        # start writes revert_resize's end).
        self.assertEqual({'h1': 2, 'h2': 1}, self._revert(router))
        self.assertEqual(['finish_revert_resize'],
                         [m for m, _ in router.sent])
        self._assert_reverted(router)

    def test_capped_below_1_7_revert_unchained(self):
        """[upgrade_levels] compute below 1.7: the destination writes its
        end itself (two calls), as before."""
        router = self._migrate(chain=True, chain_revert=False)
        self.assertEqual({'h1': 2, 'h2': 2}, self._revert(router))
        self._assert_reverted(router)

    def test_stale_chained_revert_does_not_touch_the_source(self):
        """A chained finish_revert_resize of a revert that is over (a
        duplicate) is refused by the source's guard: no second spawn, no
        claim dropped."""
        router = self._migrate(chain=True)
        self._revert(router)
        spawned = []
        h1 = router.computes['h1']
        h1.driver.spawn = lambda *a, **k: spawned.append(a)
        h1.finish_revert_resize(self.ctxt, instance_uuid=self.server,
                                migration_uuid=self.migration['uuid'],
                                reverted={'dest': 'h2'})
        self.assertEqual([], spawned)
        self._assert_reverted(router)


class RevertCapTest(testtools.TestCase):
    """[upgrade_levels] compute below 1.7 (a compute of the previous
    release may run the source): the destination does not chain."""

    def test_cap(self):
        self.useFixture(fake_transport.FakeTransport())
        for cap, chains in ((None, True), ('1.7', True), ('1.6', False),
                            ('1.5', False)):
            with nm_fixtures.Override('compute', cap, 'upgrade_levels'):
                api = compute_rpcapi.ComputeAPI()
                self.assertEqual(chains, api.can_chain_revert(), cap)
