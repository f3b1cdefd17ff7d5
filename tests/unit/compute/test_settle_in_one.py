"""confirm_resize in one conductor call (compute RPC 1.8): the caller
that set the migration confirming sends what the source needs, the
source destroys only the copy the move left behind (the hypervisor's
mark) and writes the end in one guarded call. A late or repeated
confirm destroys nothing and writes nothing."""
from nova_moves.db import api as db_api
from nova_moves import states
from tests.unit.compute import test_chained_steps as chained

CONFIRM = {'dest': 'h2', 'vm_state': states.ACTIVE}


class ConfirmInOneTest(chained.ChainedStack):

    def _migrated(self):
        router = self._migrate(chain=True)
        db_api.migration_update(self.migration['uuid'],
                                {'status': states.M_CONFIRMING},
                                expected_status=[states.M_FINISHED])
        return router, router.computes['h1']

    def test_one_call_destroys_the_marked_copy(self):
        router, source = self._migrated()
        self.assertEqual(self.migration['uuid'],
                         source.driver.left_by(self.server))
        before = len(source.conductor.advances)
        source.confirm_resize(self.ctxt, self.server, self.migration['uuid'],
                              confirm=CONFIRM)
        self.assertEqual(1, len(source.conductor.advances) - before)
        self.assertFalse(source.driver.has_guest(self.server))
        self.assertEqual(states.M_CONFIRMED, db_api.migration_get(
            self.migration['uuid'])['status'])
        server = db_api.instance_get(self.server)
        self.assertEqual(('h2', states.ACTIVE, None),
                         (server['host'], server['vm_state'],
                          server['task_state']))
        self.assertIn(('compute_confirm_resize', 'Success', 'h1'),
                      self._events())
        self.assertEqual({}, db_api.allocations_get(self.migration['uuid']))

    def test_a_late_confirm_spares_a_copy_that_came_back(self):
        router, source = self._migrated()
        source.confirm_resize(self.ctxt, self.server, self.migration['uuid'],
                              confirm=CONFIRM)
        # The server came back to h1 later (another move's new copy).
        source.driver.spawn(self.server, self.flavor)
        self.assertIsNone(source.driver.left_by(self.server))
        events = self._events()
        source.confirm_resize(self.ctxt, self.server, self.migration['uuid'],
                              confirm=CONFIRM)
        self.assertTrue(source.driver.has_guest(self.server))
        self.assertEqual(events, self._events())

    def test_a_copy_without_the_mark_takes_the_guarded_start(self):
        router, source = self._migrated()
        # A guest of a release before the mark: the start call guards.
        guest = source.driver._guests[self.server]
        del guest['left_by']
        before = len(source.conductor.advances)
        source.confirm_resize(self.ctxt, self.server, self.migration['uuid'],
                              confirm=CONFIRM)
        self.assertEqual(2, len(source.conductor.advances) - before)
        self.assertFalse(source.driver.has_guest(self.server))
        self.assertEqual(states.M_CONFIRMED, db_api.migration_get(
            self.migration['uuid'])['status'])


class RevertInOneTest(chained.ChainedStack):
    """revert_resize makes no call and finish_revert_resize one: both
    steps' ends in one transaction."""

    def _reverting(self):
        router = self._migrate(chain=True)
        db_api.migration_update(self.migration['uuid'],
                                {'status': states.M_REVERTING},
                                expected_status=[states.M_FINISHED])
        db_api.instance_update(self.server,
                               {'task_state': states.RESIZE_REVERTING})
        return router

    def _revert(self, router):
        router.computes['h2'].revert_resize(
            self.ctxt, self.server, self.migration['uuid'], revert={
                'source': 'h1', 'source_node': 'h1', 'flavor': self.flavor,
                'vm_state': states.ACTIVE})

    def test_one_call_in_all(self):
        router = self._reverting()
        before = self._calls(router)
        self.assertEqual(self.migration['uuid'], router.computes[
            'h2'].driver.left_by(self.server, 'arrived_by'))
        self._revert(router)
        after = self._calls(router)
        self.assertEqual({'h1': 1, 'h2': 0},
                         {h: after[h] - before[h] for h in after})
        self.assertFalse(router.computes['h2'].driver.has_guest(self.server))
        self.assertIsNone(router.computes['h1'].driver.left_by(self.server))
        self.assertEqual(states.M_REVERTED, db_api.migration_get(
            self.migration['uuid'])['status'])
        server = db_api.instance_get(self.server)
        self.assertEqual(('h1', states.ACTIVE, None, None),
                         (server['host'], server['vm_state'],
                          server['task_state'], server['old_flavor']))
        events = self._events()
        self.assertIn(('compute_revert_resize', 'Success', 'h2'), events)
        self.assertIn(('compute_finish_revert_resize', 'Success', 'h1'),
                      events)
        self.assertEqual({}, db_api.allocations_get(self.migration['uuid']))

    def test_a_repeated_revert_touches_no_guest(self):
        router = self._reverting()
        self._revert(router)
        # The server moves to h2 again later: a late revert of the first
        # move must not destroy that copy, nor restart anything on h1.
        router.computes['h2'].driver.spawn(self.server, self.flavor)
        events = self._events()
        self._revert(router)
        self.assertTrue(router.computes['h2'].driver.has_guest(self.server))
        self.assertEqual(events, self._events())
