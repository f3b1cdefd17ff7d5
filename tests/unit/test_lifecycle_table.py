"""The lifecycle table (nova_moves/moves/lifecycle.py) against the code
it drives, as test_move_tables.py walks the move tables: every row has
its compute handler, its API rule and a recovery its host can run;
every lifecycle handler is a row; every task_state a row names is
found by the sweep and by a restarted host; the API's rules are the
rows'."""
import inspect

import testtools

from nova_moves.api import lifecycle as api_lifecycle
from nova_moves.api import power as api_power
from nova_moves.api import rebuild as api_rebuild
from nova_moves.compute import lifecycle as compute_lifecycle
from nova_moves.compute import lifecycle_recovery
from nova_moves.compute import rpcapi as compute_rpcapi
from nova_moves.compute import shelve as compute_shelve
from nova_moves.conductor import lifecycle_sweep
from nova_moves.moves import lifecycle as lc_table
from nova_moves import states

ENDPOINTS = (compute_lifecycle.LifecycleEndpoint,
             compute_shelve.ShelveEndpoint)
# Handlers of LifecycleEndpoint that are no lifecycle action's (delete
# is not a row: the API removes the record itself).
NOT_ROWS = {'terminate_instance'}
STATE_NAMES = {v for k, v in vars(states).items() if isinstance(v, str)}


def _handlers():
    return {name for cls in ENDPOINTS
            for name, _ in inspect.getmembers(cls, inspect.isfunction)
            if not name.startswith('_') and name in vars(cls)}


class LifecycleTableTest(testtools.TestCase):

    def test_every_row_has_its_handler_and_client(self):
        handlers = _handlers()
        for row in lc_table.ACTIONS:
            self.assertIn(row.method, handlers, row.name)
            self.assertTrue(hasattr(compute_rpcapi.ComputeAPI, row.method),
                            row.name)

    def test_every_handler_is_a_row(self):
        methods = {row.method for row in lc_table.ACTIONS}
        self.assertEqual(set(), _handlers() - methods - NOT_ROWS)

    def test_rows_name_known_states(self):
        for row in lc_table.ACTIONS + (lc_table.GUEST_STOPPED,
                                      lc_table.CHANGE_PASSWORD):
            for name in row.vm_states + tuple(
                    t for t in row.takes_over if t is not None):
                self.assertIn(name, STATE_NAMES, row.name)
            for name in (row.task, row.started):
                self.assertTrue(name is None or name in STATE_NAMES,
                                row.name)
            self.assertTrue(row.vm_state in STATE_NAMES or
                            row.vm_state == lc_table.FROM_GUEST, row.name)
            self.assertIn(row.recovery, (lc_table.REDO, lc_table.SETTLE,
                                         lc_table.UNDO, None), row.name)
            if row.recovery == lc_table.UNDO:
                self.assertNotEqual(lc_table.GIVE_BACK, row.on_failure)

    def test_every_redo_has_its_handler_on_restart(self):
        recovery = lifecycle_recovery.LifecycleRecovery.__init__
        source = inspect.getsource(recovery)
        for row in lc_table.ACTIONS:
            if row.recovery == lc_table.REDO:
                self.assertIn("'%s'" % row.name, source, row.name)

    def test_every_task_state_is_found(self):
        for row in lc_table.ACTIONS:
            for task in lc_table.accepts(row.name):
                self.assertIn(task, lc_table.TASK_STATES)
                found, _what = lc_table.recovery_of(task)
                self.assertEqual(row.method, found.method, task)
                self.assertTrue(lifecycle_sweep.same_host(task))
        # A move's task_state is no lifecycle action's.
        self.assertIsNone(lc_table.recovery_of(states.RESIZE_PREP))
        self.assertFalse(lifecycle_sweep.same_host(states.MIGRATING))

    def test_the_api_rules_are_the_rows(self):
        for key, (_policy, vm_states, task, method) in \
                api_lifecycle.RULES.items():
            row = lc_table.row(key)
            self.assertEqual((row.vm_states, row.task, row.method),
                             (vm_states, task, method))
        for key, (_policy, vm_states, task, _action, method) in \
                api_power._ACTIONS.items():
            row = lc_table.row(key)
            self.assertEqual((list(row.vm_states), row.task, row.method),
                             (vm_states, task, method))
        self.assertEqual(lc_table.row('rebuild').task, api_rebuild.TASK_STATE)

    def test_end_and_failure_values(self):
        self.assertEqual(
            {'task_state': None, 'vm_state': states.PAUSED,
             'power_state': states.POWER_PAUSED},
            lc_table.end_values('pause'))
        self.assertEqual(states.STOPPED,
                         lc_table.end_values('rebuild', 'shutdown')[
                             'vm_state'])
        self.assertEqual(states.SHELVING_OFFLOADING,
                         lc_table.end_values('shelve', offload=True)[
                             'task_state'])
        self.assertIsNone(lc_table.end_values('shelveOffload')['host'])
        self.assertEqual({'task_state': None},
                         lc_table.failed_values('os-stop'))
        self.assertEqual(states.ERROR,
                         lc_table.failed_values('rebuild')['vm_state'])
        self.assertEqual(
            {'task_state': None, 'vm_state': states.PAUSED,
             'power_state': states.POWER_PAUSED},
            lc_table.settle_values(states.POWER_PAUSED, states.ACTIVE))
