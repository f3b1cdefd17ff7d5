"""A move whose start cast still waits for the broker is kept alive: the
stuck-move sweep does not roll it back while the API holds its request
(issue 37: 16 of 80 clients got 202 for a move already rolled back)."""
import datetime
import time

import sqlalchemy as sa

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
        with move_sending.sending(uuid, states.RESIZE_PREP):
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
