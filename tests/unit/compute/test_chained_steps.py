"""Chained cold-move steps (compute RPC 1.5, conductor 1.4): each host
writes the previous step's end in its own step's one call, so prep_resize
makes no conductor call and resize_instance one; a stale chained message
is still refused by the next host's guard before it touches a guest."""
import testtools

from nova_moves import context as nm_context
from nova_moves.db import api as db_api
from nova_moves import states
from tests.unit.compute import test_prep_resize_step as prep_test
from tests.unit import fixtures as nm_fixtures


class ChainingConductor(prep_test.RecordingConductor):

    def __init__(self, chain):
        super().__init__(whole_steps=True)
        self.chain = chain

    def can_chain_steps(self):
        return self.chain


class Router:
    """compute_rpcapi for in-process computes: a cast runs the handler
    of the named host at once."""

    def __init__(self, chain):
        self.computes = {}
        self.chain = chain
        self.sent = []

    def can_chain_steps(self):
        return self.chain

    def __getattr__(self, method):
        def cast(ctxt, host, instance_uuid, migration_uuid, **kwargs):
            self.sent.append((method, host))
            getattr(self.computes[host], method)(
                ctxt, instance_uuid=instance_uuid,
                migration_uuid=migration_uuid, **kwargs)
        return cast


class ChainedStepsTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.Database())
        self.useFixture(nm_fixtures.FakeHosts())
        self.ctxt = nm_context.RequestContext(user_id='u', project_id='p')
        self.flavor = nm_fixtures.flavor()
        self.server = db_api.instance_create({
            'display_name': 'vm', 'project_id': 'p', 'user_id': 'u',
            'host': 'h1', 'node': 'h1', 'flavor': self.flavor,
            'vm_state': states.ACTIVE, 'power_state': 1,
            'task_state': states.RESIZE_PREP})['uuid']
        self.action = db_api.action_start(self.server, 'migrate',
                                          self.ctxt.request_id, 'u', 'p')
        self.migration = db_api.migration_start(self.server, {
            'instance_uuid': self.server, 'migration_type': 'migration',
            'status': states.M_PRE_MIGRATING, 'source_compute': 'h1',
            'source_node': 'h1', 'dest_compute': 'h2', 'dest_node': 'h2',
            'old_flavor_id': '1', 'new_flavor_id': '1'}, self.flavor,
            self.flavor)

    def _events(self):
        return [(e['event'], e['result'], e['host'])
                for e in db_api.action_events_get(self.action['id'])]

    def _stack(self, chain):
        router = Router(chain)
        for host in ('h1', 'h2'):
            compute = prep_test.compute_manager.ComputeManager(host)
            compute.conductor = ChainingConductor(chain)
            compute.compute_rpcapi = router
            router.computes[host] = compute
        router.computes['h1'].driver.spawn(self.server, self.flavor)
        return router

    def _migrate(self, chain):
        router = self._stack(chain)
        router.computes['h2'].prep_resize(
            self.ctxt, self.server, self.migration['uuid'], self.flavor, {},
            [], source='h1')
        return router

    def _calls(self, router):
        return {h: len(c.conductor.advances)
                for h, c in router.computes.items()}

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

