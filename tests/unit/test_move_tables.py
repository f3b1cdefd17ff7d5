"""The step tables (nova_moves/moves) against the code they drive: every
step has a handler, every move handler a step (or is a control of a
running step), every re-sendable step a way to re-send it, and what is
derived from the tables is what the database and the API expect."""
import inspect

import testtools

from nova_moves.compute import cross_cell as cross_cell_compute
from nova_moves.compute import evacuate
from nova_moves.compute import live_migration
from nova_moves.compute import manager as compute_manager
from nova_moves.compute import resize
from nova_moves.compute import resize_recovery
from nova_moves.compute import resize_settle
from nova_moves.compute import rpcapi as compute_rpcapi
from nova_moves.conductor import manager as conductor_manager
from nova_moves.conductor import steps as conductor_steps
from nova_moves import moves
from nova_moves.moves import cold
from nova_moves.moves import cross_cell
from nova_moves.moves import evacuate as evac_table
from nova_moves.moves import live
from nova_moves import states

# The endpoints of each move kind, whose public methods are its
# handlers, and the class that runs its steps no message starts (start-up
# recovery).
ENDPOINTS = ((cold, (resize.ResizeEndpoint,
                     resize_settle.ResizeSettleEndpoint),
              resize_recovery.ResizeRecovery),
             (live, (live_migration.LiveMigrationEndpoint,),
              live_migration.LiveRecovery),
             (evac_table, (evacuate.EvacuateEndpoint,),
              evacuate.EvacuationCleanup),
             # Its steps are a conductor's calls; no start-up class.
             (cross_cell, (cross_cell_compute.CrossCellEndpoint,),
              cross_cell_compute.CrossCellEndpoint))

ALL_STATUSES = {v for k, v in vars(states).items() if k.startswith('M_')}
ALL_TASKS = {v for k, v in vars(states).items()
             if isinstance(v, str) and not k.startswith('M_')}


def _public_methods(classes):
    return {name for cls in classes
            for name, _ in inspect.getmembers(cls, inspect.isfunction)
            if not name.startswith('_') and name in vars(cls)}


class MoveTablesTest(testtools.TestCase):

    def test_every_step_has_a_handler(self):
        for kind in moves.KINDS:
            for step in kind.STEPS:
                if step.host == moves.CONDUCTOR:
                    name = step.name.split('.', 1)[1]
                    self.assertTrue(
                        hasattr(conductor_manager.ConductorManager, name),
                        step.name)
                    continue
                # A step a message starts is served by its kind's
                # endpoint; one no message starts ('_' names) runs there
                # or in its kind's start-up class.
                endpoints, local = [(e, r) for k, e, r in ENDPOINTS
                                    if k is kind][0]
                owners = endpoints if not step.name.startswith('_') \
                    else endpoints + (local,)
                self.assertTrue(any(
                    callable(getattr(owner, step.name, None))
                    for owner in owners), step.name)

    def test_every_kind_has_its_endpoint(self):
        served = {type(e) for e in compute_manager.ComputeManager(
            'h1').endpoints()}
        self.assertLessEqual({e for _, es, _ in ENDPOINTS for e in es},
                             served)
        self.assertEqual(len(moves.KINDS), len(ENDPOINTS))

    def test_every_handler_has_a_step(self):
        for kind, endpoint, _ in ENDPOINTS:
            names = {s.name for s in kind.STEPS} | set(kind.CONTROLS)
            self.assertEqual(set(), _public_methods(endpoint) - names,
                             kind.__name__)
            # Controls are real handlers too.
            self.assertEqual(set(), set(kind.CONTROLS) - _public_methods(
                endpoint), kind.__name__)

    def test_every_resent_step_can_be_resent(self):
        for kind in moves.KINDS:
            for step in kind.STEPS:
                if step.sweep != moves.RESEND:
                    continue
                self.assertIn(step.name, conductor_steps._RESEND)
                self.assertTrue(hasattr(compute_rpcapi.ComputeAPI,
                                        step.name), step.name)
        resent = {s.name for k in moves.KINDS for s in k.STEPS
                  if s.sweep == moves.RESEND}
        self.assertEqual(resent, set(conductor_steps._RESEND))

    def test_tables_name_known_states_and_actions(self):
        for kind in moves.KINDS:
            names = [s.name for s in kind.STEPS]
            self.assertEqual(len(names), len(set(names)))
            for step in kind.STEPS:
                self.assertIn(step.host, (moves.SOURCE, moves.DEST,
                                          moves.CONDUCTOR))
                self.assertIn(step.sweep, (moves.RESEND, moves.ASK,
                                           moves.ROLL_BACK, moves.REDRIVE,
                                           None))
                self.assertIn(step.restart, (moves.RESTART_UNDO,
                                             moves.RESTART_REDO, None))
                self.assertIn(step.allocations, (
                    None, 'park_source', 'drop_source', 'return_source',
                    'drop_dest', 'claim'))
                for guard in step.guards():
                    self.assertLessEqual(set(guard.status), ALL_STATUSES)
                    self.assertIn(guard.to_status,
                                  ALL_STATUSES | {moves.KEEP})
                    # (None,): only a server without a task_state.
                    self.assertLessEqual(set(guard.task or ()),
                                         ALL_TASKS | {None})
                    self.assertIn(guard.to_task,
                                  ALL_TASKS | {moves.KEEP, None})

    def test_every_step_is_found_where_it_runs(self):
        """The sweep and a restart find each compute step from the state
        its start writes (the step's table is consistent)."""
        for kind in moves.KINDS:
            if not kind.TYPES:
                continue  # cross_cell: tests/unit/test_cross_cell_table.py
            kind_type = kind.TYPES[0]
            for step in kind.STEPS:
                if step.host == moves.CONDUCTOR:
                    continue
                guard = step.start or step.end
                status = guard.status[0] if guard.to_status == moves.KEEP \
                    or guard is step.end else guard.to_status
                task = guard.task[0] if guard.task else None
                if guard is step.start and guard.to_task != moves.KEEP:
                    task = guard.to_task
                found = moves.sweep_step(
                    kind_type, status, task,
                    done=lambda name: name == 'conductor' or (
                        step.after is not None and name == step.after))
                self.assertIsNotNone(found, step.name)
                self.assertEqual(step.name, found.name)

    def test_derived_sets(self):
        self.assertEqual(
            set(states.RESIZE_TASK_STATES) | {states.RESIZE_REVERTING},
            set(moves.MOVE_TASK_STATES[states.MIGRATION]))
        self.assertEqual((states.MIGRATING,),
                         moves.MOVE_TASK_STATES[states.LIVE_MIGRATION])
        self.assertEqual({states.REBUILDING, states.REBUILD_SPAWNING},
                         set(moves.MOVE_TASK_STATES[states.EVACUATION]))
        self.assertEqual(
            {states.M_ACCEPTED, states.M_QUEUED, states.M_PREPARING,
             states.M_RUNNING, states.M_PRE_MIGRATING, states.M_MIGRATING,
             states.M_POST_MIGRATING, states.M_FINISHED,
             states.M_CONFIRMING, states.M_REVERTING},
            set(moves.UNSETTLED))
        self.assertFalse(set(moves.UNSETTLED) &
                         set(states.MIGRATION_TERMINAL_STATUSES))
        # The sweep's input: what its compute steps accept; not the
        # API's 'accepted' (a conductor's row is found by task_state),
        # nor a parked or user-awaited status.
        self.assertEqual(
            {states.M_QUEUED, states.M_PREPARING, states.M_RUNNING,
             states.M_PRE_MIGRATING, states.M_MIGRATING,
             states.M_POST_MIGRATING, states.M_CONFIRMING,
             states.M_REVERTING}, set(moves.SWEPT))

    def test_every_undo_is_a_field_of_its_row(self):
        """A restart rolls a RESTART_UNDO row back with the row's own
        undo (a cold step without one is a failure here, not finish_resize's
        undo); a live migration's restart rolls back every status of the
        source's run. The sweep's clean-up after an undo is a compute
        RPC method on the host the row names."""
        for kind, _, local in ENDPOINTS:
            run = moves.step_named(live, 'live_migration').undo_statuses()
            for step in kind.STEPS:
                if step.cleanup is not None:
                    role, method = step.cleanup
                    self.assertIn(role, (moves.SOURCE, moves.DEST))
                    self.assertTrue(hasattr(compute_rpcapi.ComputeAPI,
                                            method), step.name)
                if step.restart != moves.RESTART_UNDO:
                    self.assertIsNone(step.undo, step.name)
                    continue
                if kind is live:
                    self.assertLessEqual(set(step.undo_statuses()),
                                         set(run), step.name)
                    continue
                self.assertIsNotNone(step.undo, step.name)
                self.assertTrue(callable(getattr(local, step.undo, None)),
                                step.name)

    def test_restart_of_the_cold_steps(self):
        both = (moves.SOURCE, moves.DEST)

        def chose(name):  # the conductor's part done; a revert's dest not
            return name == 'conductor'

        cases = [
            ((states.M_PRE_MIGRATING, states.RESIZE_PREP), None),
            ((states.M_MIGRATING, states.RESIZE_MIGRATING),
             'resize_instance'),
            ((states.M_POST_MIGRATING, states.RESIZE_MIGRATED), None),
            ((states.M_POST_MIGRATING, states.RESIZE_FINISH),
             'finish_resize'),
            ((states.M_CONFIRMING, None), 'confirm_resize'),
            ((states.M_REVERTING, states.RESIZE_REVERTING),
             'revert_resize'),
        ]
        for (status, task), expected in cases:
            found = moves.restart_step(states.MIGRATION, status, task, both,
                                       chose)
            self.assertEqual(expected, found and found.name, (status, task))
        found = moves.restart_step(states.MIGRATION, states.M_REVERTING,
                                   states.RESIZE_REVERTING, (moves.SOURCE,),
                                   lambda name: True)
        self.assertEqual('finish_revert_resize', found.name)

    def test_api_status_of_every_move_task_state(self):
        for task_states in moves.MOVE_TASK_STATES.values():
            for task in task_states:
                self.assertIsNotNone(
                    moves.shown_status(states.ACTIVE, task), task)
        self.assertEqual('REVERT_RESIZE', moves.shown_status(
            states.RESIZED, states.RESIZE_REVERTING))
        self.assertIsNone(moves.shown_status(states.ERROR,
                                             states.MIGRATING))
