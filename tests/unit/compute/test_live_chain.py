"""Chained live-migration steps (compute RPC 1.6, conductor compute_db
1.5), two in-process computes on a real database: the source makes no
conductor call between the conductor's cast and the destination's
take-over, the destination one at the end of pre_live_migration and two
in post_live_migration_at_destination; the statuses, phases and events
are those of the unchained path; a duplicate of the source's cast is
refused by the destination's guard and changes nothing."""
import oslo_messaging as messaging

from nova_moves.compute import manager as compute_manager
from nova_moves.conductor import db_proxy
from nova_moves.db import api as db_api
from nova_moves.db import phases
from nova_moves import exception
from nova_moves import states
from tests.unit.compute import served
from tests.unit.compute import steps_base


class CountingConductor:
    """The conductor's compute_db endpoint at 1.5, counting the calls
    one compute makes."""

    def __init__(self, chain=True):
        self.proxy = db_proxy.ComputeDBProxy()
        self.chain = chain
        self.calls = []

    def can_chain_live_steps(self):
        return self.chain

    def can_chain_steps(self):
        return True

    def can_record_whole_steps(self):
        return True

    def can_record_whole_events(self):
        return True

    def __getattr__(self, name):
        method = getattr(self.proxy, name)

        def call(*args, **kwargs):
            self.calls.append(name)
            if name == 'move_advance':  # what ConductorDBAPI drops < 1.5
                if not self.chain:
                    kwargs.pop('passed_phases', None)
            try:
                return method(*args, **kwargs)
            except messaging.ExpectedException as exc:
                # What the RPC layer raises at the caller.
                raise exc.exc_info[1]
        return call


class Router:
    """compute_rpcapi for in-process computes: a call or cast runs the
    named host's handler at once."""

    def __init__(self):
        self.computes = {}
        self.sent = []

    def can_chain_live_steps(self):
        return True

    def __getattr__(self, method):
        def send(ctxt, host, instance_uuid, *args, **kwargs):
            self.sent.append((method, host, sorted(kwargs)))
            handler = getattr(self.computes[host], method)
            if method == 'pre_live_migration':
                migration_uuid, migrate_data = args
                return handler(ctxt, instance_uuid=instance_uuid,
                               migration_uuid=migration_uuid,
                               migrate_data=migrate_data, **kwargs)
            if method == 'post_live_migration_at_destination':
                return handler(ctxt, instance_uuid=instance_uuid,
                               migration_uuid=args[0], **kwargs)
            if method == 'check_can_live_migrate_source':
                return handler(ctxt, instance_uuid=instance_uuid,
                               dest_check_data=args[0], **kwargs)
            return None  # rollback casts: nothing to roll back here
        return send


class LiveChainTest(steps_base.StepTestCase):

    def setUp(self):
        super().setUp()
        rows = db_api.move_start(
            self.server, states.MIGRATING, [states.ACTIVE],
            'live-migration', self.ctxt.request_id, 'u', 'p',
            migration={'migration_type': states.LIVE_MIGRATION,
                       'status': states.M_QUEUED, 'source_compute': 'h1',
                       'source_node': 'h1', 'dest_compute': 'h2',
                       'dest_node': 'h2', 'old_flavor_id': '1',
                       'new_flavor_id': '1'})
        self.migration = rows['migration']['uuid']

    def _stack(self, chain=True):
        router = Router()
        for host in ('h1', 'h2'):
            compute = served.Served(compute_manager.ComputeManager(
                host, conductor=CountingConductor(chain),
                compute_api=router))
            router.computes[host] = compute
        router.computes['h1'].driver.spawn(self.server, self.flavor)
        return router

    def _migrate(self, router, chained=True):
        router.computes['h1'].live_migration(
            self.ctxt, instance_uuid=self.server, dest='h2',
            migration_uuid=self.migration, chained=chained,
            migrate_data={'flavor': self.flavor, 'block_migration': False})

    def _events(self):
        action = db_api.action_get_by_request_id(self.server,
                                                 self.ctxt.request_id)
        return sorted((e['event'], e['result'], e['host'])
                      for e in db_api.action_events_get(action['id']))

    def _done(self, router):
        migration = db_api.migration_get(self.migration)
        self.assertEqual(states.M_COMPLETED, migration['status'])
        self.assertEqual(['queued', 'preparing', 'running',
                          'post-migrating', 'completed'],
                         [p['phase'] for p in phases.view(
                             migration['phases'])])
        server = db_api.instance_get(self.server)
        self.assertEqual(('h2', None), (server['host'],
                                        server['task_state']))
        self.assertFalse(router.computes['h1'].driver.has_guest(self.server))
        self.assertTrue(router.computes['h2'].driver.has_guest(self.server))
        self.assertEqual(
            [('compute_live_migration', 'Success', 'h1'),
             ('compute_post_live_migration_at_destination', 'Success', 'h2'),
             ('compute_pre_live_migration', 'Success', 'h2')],
            self._events())
        return migration

    def test_chained_source_makes_no_conductor_call(self):
        router = self._stack()
        self._migrate(router)
        migration = self._done(router)
        self.assertEqual([], router.computes['h1'].conductor.calls)
        self.assertEqual(['move_advance'] * 3,
                         router.computes['h2'].conductor.calls)
        # The transfer's totals and its end rode on the destination's.
        self.assertEqual(512 * 1024 * 1024, migration['memory_total'])
        self.assertEqual(0, migration['memory_remaining'])

    def test_unchained_path_writes_the_same(self):
        router = self._stack()
        self._migrate(router, chained=False)
        self._done(router)
        self.assertGreater(len(router.computes['h1'].conductor.calls), 3)

    def test_older_conductor_writes_preparing_on_its_own(self):
        router = self._stack(chain=False)
        self._migrate(router)
        self._done(router)
        self.assertEqual(['move_advance'] * 4,
                         router.computes['h2'].conductor.calls)

    def test_duplicate_cast_is_refused_by_the_destination(self):
        router = self._stack()
        self._migrate(router)
        before = (db_api.migration_get(self.migration),
                  db_api.instance_get(self.server), self._events())
        self._migrate(router)  # the same cast delivered again
        self.assertEqual(before, (db_api.migration_get(self.migration),
                                  db_api.instance_get(self.server),
                                  self._events()))
        self.assertTrue(router.computes['h2'].driver.has_guest(self.server))

    def test_stale_pre_live_migration_raises_conflict(self):
        router = self._stack()
        self._migrate(router)
        self.assertRaises(
            exception.MoveConflict,
            router.computes['h2'].pre_live_migration, self.ctxt,
            instance_uuid=self.server, migration_uuid=self.migration,
            migrate_data={}, source='h1', progress={})

    def test_checks_with_facts_make_no_conductor_call(self):
        router = self._stack()
        answer = router.computes['h2'].check_can_live_migrate_destination(
            self.ctxt, instance_uuid=self.server, block_migration=False,
            migration_uuid=self.migration, report_events=True,
            facts={'instance': db_api.instance_get(self.server),
                   'memory_mb_used': 0})
        self.assertEqual('h1', answer['source_host'])
        self.assertEqual(
            ['compute_check_can_live_migrate_source',
             'compute_check_can_live_migrate_destination'],
            [e['name'] for e in answer['_events']])
        for host in ('h1', 'h2'):
            self.assertEqual([], router.computes[host].conductor.calls)
