"""The concurrency gate on a real (SQLite) database: admission within the
cluster and per-host limits, queued moves started in order when a slot
frees up, a move from a free host not held up by a full one, and the
waiting migration's status."""
import json
import threading
from unittest import mock
import uuid

import testtools

from nova_moves.conductor import admission
from nova_moves.db import api as db_api
from nova_moves import conf
from nova_moves import exception
from nova_moves import states
from tests.unit import fixtures as nm_fixtures

CONF = conf.CONF


class MoveQueueTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.Database())

    def _migration(self, source, status=states.M_ACCEPTED):
        return db_api.migration_create({
            'uuid': str(uuid.uuid4()), 'instance_uuid': str(uuid.uuid4()),
            'migration_type': states.LIVE_MIGRATION, 'status': status,
            'source_compute': source})

    def _enter(self, migration, cluster=3, host=2):
        return db_api.move_queue_enter(
            migration['uuid'], migration['instance_uuid'],
            migration['source_compute'], 'live', {'kwargs': {}},
            migration['status'], cluster, host, 'c1')

    def _status(self, migration):
        return db_api.migration_get(migration['uuid'])['status']

    def test_limits_queue_then_admit_in_order(self):
        a = [self._migration('h1') for _ in range(3)]
        b = [self._migration('h2') for _ in range(2)]
        self.assertTrue(self._enter(a[0])['admitted'])
        self.assertTrue(self._enter(a[1])['admitted'])
        # h1 is full (2 per host): queued, its migration says so.
        self.assertFalse(self._enter(a[2])['admitted'])
        self.assertEqual(states.M_QUEUED, self._status(a[2]))
        self.assertEqual({a[2]['uuid']}, db_api.move_queue_waiting())
        # h2 is free: not held up by h1's queue, until the cluster is full.
        self.assertTrue(self._enter(b[0])['admitted'])
        self.assertFalse(self._enter(b[1])['admitted'])
        self.assertEqual([], db_api.move_queue_admit(3, 2, 'c2'))
        # a[0] completes: its slot goes to the oldest queued move that fits.
        db_api.migration_update(a[0]['uuid'],
                                {'status': states.M_COMPLETED})
        admitted = db_api.move_queue_admit(3, 2, 'c2')
        self.assertEqual([a[2]['uuid']],
                         [r['migration_uuid'] for r in admitted])
        self.assertEqual('c2', admitted[0]['admitted_by'])
        # Back to the status the flow expects, with its request.
        self.assertEqual(states.M_ACCEPTED, self._status(a[2]))
        self.assertIn('kwargs', admitted[0]['request'])
        rows = {r['migration_uuid']: r for r in db_api.move_queue_get_all()}
        self.assertEqual('released', rows[a[0]['uuid']]['state'])
        self.assertIsNotNone(rows[a[0]['uuid']]['released_at'])

    def test_repeated_delivery_is_not_queued_twice(self):
        migration = self._migration('h1')
        self.assertTrue(self._enter(migration)['admitted'])
        self.assertTrue(self._enter(migration)['admitted'])
        self.assertEqual(1, len(db_api.move_queue_get_all()))

    def test_moved_on_migration_is_a_conflict_and_writes_nothing(self):
        for _ in range(2):
            self._enter(self._migration('h1'))
        stale = self._migration('h1')
        db_api.migration_update(stale['uuid'], {'status': states.M_ERROR})
        self.assertRaises(exception.MoveConflict, self._enter, stale)
        self.assertEqual(2, len(db_api.move_queue_get_all()))

    def test_a_cancelled_waiting_move_is_dropped(self):
        for _ in range(2):
            self._enter(self._migration('h1'))
        waiting = self._migration('h1')
        self.assertFalse(self._enter(waiting)['admitted'])
        db_api.migration_update(waiting['uuid'],
                                {'status': states.M_CANCELLED})
        self.assertEqual([], db_api.move_queue_admit(10, 10, 'c1'))
        rows = {r['migration_uuid']: r for r in db_api.move_queue_get_all()}
        self.assertEqual('released', rows[waiting['uuid']]['state'])

    def test_a_pass_told_moves_wait_admits_the_same(self):
        # ``waiting`` only skips the read before the locked pass.
        a = [self._migration('h1') for _ in range(3)]
        for migration in a:
            self._enter(migration)
        self.assertEqual([], db_api.move_queue_admit(3, 2, 'c2',
                                                     waiting=True))
        db_api.migration_update(a[0]['uuid'],
                                {'status': states.M_COMPLETED})
        self.assertEqual([a[2]['uuid']], [
            r['migration_uuid'] for r in db_api.move_queue_admit(
                3, 2, 'c2', waiting=True)])
        self.assertEqual([], db_api.move_queue_admit(3, 2, 'c2',
                                                     waiting=True))

    def test_a_full_cluster_decides_without_reading_the_queue(self):
        # The decision reads the slots held, not the moves waiting: its
        # cost does not grow with the queue.
        for _ in range(6):
            self._enter(self._migration('h1'), cluster=2, host=2)
        statements = self.useFixture(nm_fixtures.Statements())
        self.assertFalse(self._enter(self._migration('h2'), cluster=2,
                                     host=2)['admitted'])
        self.assertEqual([], db_api.move_queue_admit(2, 2, 'c1',
                                                     waiting=True))
        self.assertNotIn('queued', [
            v for _, params in statements.starting('SELECT')
            for v in params])

    def test_a_free_host_is_found_past_a_page_of_full_ones(self):
        first, other = self._migration('h1'), self._migration('h2')
        self._enter(first, cluster=2, host=1)
        self._enter(other, cluster=2, host=1)
        waiting = [self._migration('h1') for _ in range(20)]
        for migration in waiting:
            self._enter(migration, cluster=2, host=1)
        last = self._migration('h2')
        self.assertFalse(self._enter(last, cluster=2, host=1)['admitted'])
        db_api.migration_update(other['uuid'],
                                {'status': states.M_COMPLETED})
        self.assertEqual([last['uuid']], [
            r['migration_uuid'] for r in db_api.move_queue_admit(2, 1,
                                                                 'c1')])
        self.assertEqual({m['uuid'] for m in waiting},
                         db_api.move_queue_waiting())


class GateHintTest(testtools.TestCase):
    """The gate tells its next pass that moves wait once it queued one or
    its last pass admitted one; a pass that admitted nothing reads first
    again."""

    def test_the_hint_follows_the_passes(self):
        gate = admission.Gate(run=mock.Mock())
        self.addCleanup(gate.stop)
        with mock.patch.object(admission.db_api, 'move_queue_admit',
                               return_value=[]) as admit:
            gate.tick()
            self.assertFalse(admit.call_args.kwargs['waiting'])
            gate.entered({'admitted': False, 'others': []}, 'm', 'i')
            gate.tick()
            self.assertTrue(admit.call_args.kwargs['waiting'])
            gate.tick()
            self.assertFalse(admit.call_args.kwargs['waiting'])


class _Pool:
    """An executor that keeps what it is given until run_all()."""

    def __init__(self):
        self.submitted = []

    def submit(self, fn, *args):
        self.submitted.append((fn, args))

    def run_all(self):
        while self.submitted:
            fn, args = self.submitted.pop(0)
            fn(*args)

    def shutdown(self, wait=True):
        pass


class GateWakeTest(testtools.TestCase):
    """A settled move's wake asks the pool for one pass, which runs the
    first move it admits itself: one thread hand-off per admitted move."""

    def setUp(self):
        super().setUp()
        self.ran = []
        self.gate = admission.Gate(run=lambda *args: self.ran.append(
            (args[3], threading.current_thread())))
        self.addCleanup(self.gate.stop)
        self.gate._pool = self.pool = _Pool()
        request = json.dumps({'context': {'request_id': 'req-1'},
                              'kwargs': {}})
        self.rows = [{'kind': 'cold', 'migration_uuid': 'm%d' % i,
                      'instance_uuid': 'i%d' % i, 'request': request}
                     for i in range(2)]

    def test_the_pass_runs_its_first_move_itself(self):
        with mock.patch.object(admission.db_api, 'move_queue_admit',
                               return_value=self.rows) as admit:
            self.gate.wake()
            self.assertEqual(1, len(self.pool.submitted))
            fn, args = self.pool.submitted.pop(0)
            fn(*args)
        admit.assert_called_once()
        # m0 ran in the pass's thread, at once; m1 waits for a worker.
        self.assertEqual([('m0', threading.current_thread())], self.ran)
        self.pool.run_all()
        self.assertEqual(['m0', 'm1'], [m for m, _ in self.ran])

    def test_wakes_before_the_pass_starts_share_it(self):
        with mock.patch.object(admission.db_api, 'move_queue_admit',
                               return_value=[]) as admit:
            self.gate.wake()
            self.gate.wake()
            self.assertEqual(1, len(self.pool.submitted))
            self.pool.run_all()
            self.assertEqual(1, admit.call_count)
            # Once it started, a wake may have freed a slot it missed.
            self.gate.wake()
            self.pool.run_all()
        self.assertEqual(2, admit.call_count)

    def test_the_poll_waits_a_full_interval_after_any_pass(self):
        # Other conductors' moves settle too: the gate thread polls, but
        # not on top of woken passes.
        self.gate._last_pass -= 10 * CONF.conductor.queue_poll_interval
        self.assertEqual(0.0, self.gate._due())
        with mock.patch.object(admission.db_api, 'move_queue_admit',
                               return_value=[]):
            self.gate.wake()
            self.pool.run_all()
        self.assertGreater(self.gate._due(),
                           0.5 * CONF.conductor.queue_poll_interval)
