"""A move whose start cast still waits for the broker is kept alive: the
stuck-move sweep does not roll it back while the API holds its request
(issue 37: 16 of 80 clients got 202 for a move already rolled back)."""
import datetime
import threading
import time

import fixtures
import sqlalchemy as sa
import testtools

from nova_moves.api import move_sending
from nova_moves.conductor import recovery
from nova_moves.db import api as db_api
from nova_moves.db import models
from nova_moves import states
from tests.unit import fixtures as nm_fixtures


def _age(uuid, seconds):
    with db_api._session() as session:
        session.execute(sa.update(models.Instance).where(
            models.Instance.uuid == uuid).values(
            updated_at=db_api.utcnow() - datetime.timedelta(
                seconds=seconds)))


class MoveSendingTest(nm_fixtures.TwoHostsTestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.Override('stuck_move_timeout', 2))

    def test_sweep_spares_a_move_being_sent(self):
        uuid = self.boot_on_h1(states.RESIZE_PREP)
        _age(uuid, 1.5)
        with move_sending.Keeper().sending(uuid, states.RESIZE_PREP):
            time.sleep(1.2)  # the cast waits for the broker
            self.assertEqual([], recovery.recover_interrupted_moves())
        self.assertEqual(states.RESIZE_PREP,
                         db_api.instance_get(uuid)['task_state'])
        # Not being sent (its conductor died): rolled back as before.
        _age(uuid, 3)
        self.assertEqual([uuid], recovery.recover_interrupted_moves())
        self.assertIsNone(db_api.instance_get(uuid)['task_state'])

    def test_keep_alive_is_guarded(self):
        uuid = self.boot_on_h1(None)
        self.assertFalse(db_api.move_keep_alive(uuid, states.RESIZE_PREP))
        uuid = self.boot_on_h1(states.MIGRATING)
        migration = {'uuid': 'nope', 'status': states.M_ACCEPTED}
        self.assertTrue(db_api.move_keep_alive(uuid, states.MIGRATING,
                                               migration))


class KeeperTest(testtools.TestCase):
    """One thread per app for every start being sent (not one per
    request), touching each start an interval after it began and every
    interval after, until it ends or its move moved on."""

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.Override('stuck_move_timeout', 2))
        self.touched = []
        self.moved_on = set()

        def keep_alive(uuid, task_state, migration=None):
            self.touched.append(uuid)
            return uuid not in self.moved_on
        self.useFixture(fixtures.MockPatchObject(
            db_api, 'move_keep_alive', side_effect=keep_alive))

    def test_every_start_kept_by_one_thread(self):
        keeper = move_sending.Keeper()
        before = threading.active_count()
        with keeper.sending('a', states.RESIZE_PREP), \
                keeper.sending('b', states.RESIZE_PREP):
            self.assertEqual(before + 1, threading.active_count())
            time.sleep(0.2)
            self.assertEqual([], self.touched)  # not due yet (0.5 s)
            time.sleep(1.1)  # due at 0.5 and 1.0
        self.assertEqual(['a', 'a', 'b', 'b'], sorted(self.touched))
        time.sleep(0.6)
        self.assertEqual(4, len(self.touched))  # ended: no more

    def test_a_move_that_moved_on_is_left_alone(self):
        self.moved_on.add('a')
        with move_sending.Keeper().sending('a', states.RESIZE_PREP):
            time.sleep(1.3)
        self.assertEqual(['a'], self.touched)

    def test_idle_thread_ends_and_comes_back(self):
        self.useFixture(fixtures.MockPatchObject(move_sending, 'IDLE_EXIT',
                                                 0.3))
        keeper = move_sending.Keeper()
        with keeper.sending('a', states.RESIZE_PREP):
            pass
        thread = keeper._thread
        thread.join(5)
        self.assertFalse(thread.is_alive())
        self.assertIsNone(keeper._thread)
        with keeper.sending('b', states.RESIZE_PREP):
            time.sleep(0.7)
        self.assertEqual(['b'], self.touched)
