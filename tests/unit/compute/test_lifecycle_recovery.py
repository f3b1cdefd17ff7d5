"""The lifecycle table's guard and recovery on the compute side, in
process (the conductor's database proxy on SQLite, the fake hypervisor):
a message out of turn touches neither the guest nor the server (issue
37), and a restarted host settles every lifecycle task_state it finds
(issue 36) as its row says, without an operator."""
from nova_moves.db import api as db_api
from nova_moves import states
from nova_moves import timeutil
from tests.unit.compute import lifecycle_base


class LifecycleRecoveryTest(lifecycle_base.LifecycleComputeTestCase):

    def state(self, uuid):
        row = db_api.instance_get(uuid)
        guest = self.compute.driver._record(uuid)
        return (row['vm_state'], row['task_state'],
                guest and guest['power'])

    # -- issue 37: the guard before the guest --------------------------------
    def test_messages_out_of_turn_change_nothing(self):
        active = self.server(states.ACTIVE, None)
        stopped = self.server(states.STOPPED, None, power='shutdown')
        paused = self.server(states.PAUSED, None, power='paused')
        for method in ('stop_instance', 'pause_instance',
                       'suspend_instance', 'shelve_instance',
                       'shelve_offload_instance', 'unshelve_instance'):
            getattr(self.compute, method)(self.ctxt, active)
        self.compute.reboot_instance(self.ctxt, stopped, 'HARD')
        self.compute.rebuild_instance_same_host(self.ctxt, stopped, 'fake2')
        for method in ('start_instance', 'resume_instance',
                       'unpause_instance'):
            getattr(self.compute, method)(self.ctxt, stopped)
        self.compute.unpause_instance(self.ctxt, active)
        self.compute.resume_instance(self.ctxt, paused)
        self.assertEqual((states.ACTIVE, None, 'running'),
                         self.state(active))
        self.assertEqual((states.STOPPED, None, 'shutdown'),
                         self.state(stopped))
        self.assertEqual((states.PAUSED, None, 'paused'),
                         self.state(paused))
        self.assertEqual('h1', db_api.instance_get(active)['host'])

    def test_a_copy_while_one_runs_is_dropped(self):
        uuid = self.server(states.ACTIVE, states.POWERING_OFF)
        endpoint = self.manager.lifecycle
        endpoint._running.add((uuid, 'os-stop'))
        self.compute.stop_instance(self.ctxt, uuid)
        self.assertEqual((states.ACTIVE, states.POWERING_OFF, 'running'),
                         self.state(uuid))
        endpoint._running.clear()
        self.compute.stop_instance(self.ctxt, uuid)
        self.assertEqual((states.STOPPED, None, 'shutdown'),
                         self.state(uuid))

    # -- issue 36: a restarted host settles what it was doing ---------------
    def test_restart_settles_every_lifecycle_task_state(self):
        # (vm_state, task_state, guest power when the host died) ->
        # (vm_state, task_state, guest power) after the restart.
        cases = {
            (states.ACTIVE, states.PAUSING, 'running'):
                (states.ACTIVE, None, 'running'),
            (states.ACTIVE, states.PAUSING, 'paused'):
                (states.PAUSED, None, 'paused'),
            (states.SUSPENDED, states.RESUMING, 'suspended'):
                (states.SUSPENDED, None, 'suspended'),
            (states.ACTIVE, states.REBOOTING, 'running'):
                (states.ACTIVE, None, 'running'),
            (states.ACTIVE, states.REBOOT_STARTED, 'shutdown'):
                (states.ACTIVE, None, 'running'),
            (states.STOPPED, states.REBOOT_STARTED_HARD, None):
                (states.ACTIVE, None, 'running'),
            (states.ACTIVE, states.POWERING_OFF, 'running'):
                (states.STOPPED, None, 'shutdown'),
            (states.STOPPED, states.POWERING_ON, 'shutdown'):
                (states.ACTIVE, None, 'running'),
            (states.ACTIVE, states.SHELVING, 'running'):
                (states.SHELVED_OFFLOADED, None, None),
            (states.SHELVED, states.SHELVING_OFFLOADING, 'shutdown'):
                (states.SHELVED_OFFLOADED, None, None),
            (states.SHELVED, states.UNSHELVING, 'shutdown'):
                (states.ACTIVE, None, 'running'),
            (states.SHELVED_OFFLOADED, states.UNSHELVING, None):
                (states.ACTIVE, None, 'running'),
            (states.ACTIVE, states.REBUILDING, 'running'):
                (states.ACTIVE, None, 'running'),
            (states.STOPPED, states.REBUILD_SPAWNING, None):
                (states.STOPPED, None, 'shutdown'),
            # Rescue and unrescue are redone (the driver is re-entrant).
            (states.ACTIVE, states.RESCUING, 'running'):
                (states.RESCUED, None, 'running'),
            (states.STOPPED, states.RESCUING, 'shutdown'):
                (states.RESCUED, None, 'running'),
            (states.RESCUED, states.UNRESCUING, 'running'):
                (states.ACTIVE, None, 'running'),
            # A boot: its request is gone; ERROR (Nova's).
            (states.BUILDING, states.SPAWNING, None):
                (states.ERROR, None, None),
        }
        servers = {case: self.server(*case) for case in cases}
        recovery = self.manager.lifecycle_recovery
        recovery.started = timeutil.utcnow()  # restarted after the claims
        settled = []
        recover = recovery.recover
        self.patch(recovery, 'recover', lambda ctxt, instance: settled.append(
            recover(ctxt, instance)))
        recovery.run(self.ctxt)
        recovery.run_deferred(self.ctxt)  # the boot, once serving
        # Each says it settled the server (and closed its event).
        self.assertEqual([True] * len(cases), settled)
        got = {case: self.state(uuid) for case, uuid in servers.items()}
        self.assertEqual(cases, got)
        offloaded = servers[(states.ACTIVE, states.SHELVING, 'running')]
        self.assertIsNone(db_api.instance_get(offloaded)['host'])

    def test_restart_leaves_an_evacuation_to_its_own_recovery(self):
        uuid = self.server(states.ACTIVE, states.REBUILDING)
        db_api.migration_create({
            'instance_uuid': uuid, 'migration_type': states.EVACUATION,
            'status': states.M_PRE_MIGRATING, 'source_compute': 'h1',
            'dest_compute': 'h2', 'source_node': 'h1', 'dest_node': 'h2'})
        self.manager.lifecycle_recovery.started = timeutil.utcnow()
        self.manager.lifecycle_recovery.run(self.ctxt)
        self.assertEqual((states.ACTIVE, states.REBUILDING, 'running'),
                         self.state(uuid))

    def test_a_claim_made_since_the_start_is_left_to_its_message(self):
        """A boot sent to a host still running init_host (back in its
        membership group) is not a boot a dead process left."""
        recovery = self.manager.lifecycle_recovery
        recovery.started = timeutil.utcnow()
        uuid = self.server(states.BUILDING, states.SPAWNING, None)
        recovery.run(self.ctxt)
        self.assertEqual((states.BUILDING, states.SPAWNING, None),
                         self.state(uuid))
        recovery.started = timeutil.utcnow()
        recovery.run(self.ctxt)
        # Not before its queued cast had its chance: once serving.
        self.assertEqual((states.BUILDING, states.SPAWNING, None),
                         self.state(uuid))
        recovery.run_deferred(self.ctxt)
        self.assertEqual((states.ERROR, None, None), self.state(uuid))

    def test_a_boot_taken_up_by_its_queued_cast_is_not_undone(self):
        recovery = self.manager.lifecycle_recovery
        uuid = self.server(states.BUILDING, states.SPAWNING, None)
        recovery.started = timeutil.utcnow()
        recovery.run(self.ctxt)
        recovery.in_flight.enter(uuid)  # its build handler runs
        recovery.run_deferred(self.ctxt)
        recovery.in_flight.leave(uuid)
        self.assertEqual((states.BUILDING, states.SPAWNING, None),
                         self.state(uuid))
