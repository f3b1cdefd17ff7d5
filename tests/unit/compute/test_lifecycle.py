"""The compute side of the lifecycle actions, in process: a compute
manager whose conductor is the conductor's own database proxy (what the
RPC would reach), on SQLite, with an instant fake hypervisor. What is
checked: each handler finishes only the claim the API made; a claim
taken over meanwhile (a hard reboot, os-resetState) is left alone; a
hypervisor failure gives the task_state back with a fault."""
from nova_moves.db import api as db_api
from nova_moves import states
from tests.unit.compute import lifecycle_base


class ComputeLifecycleTest(lifecycle_base.LifecycleComputeTestCase):

    def test_pause_then_unpause(self):
        uuid = self.server(states.ACTIVE, states.PAUSING)
        self.compute.pause_instance(self.ctxt, uuid)
        row = db_api.instance_get(uuid)
        self.assertEqual((states.PAUSED, None, states.POWER_PAUSED),
                         (row['vm_state'], row['task_state'],
                          row['power_state']))
        self.assertEqual(states.POWER_PAUSED,
                         self.compute.driver.power_state(uuid))
        db_api.instance_update(uuid, {'task_state': states.UNPAUSING})
        self.compute.unpause_instance(self.ctxt, uuid)
        self.assertEqual(states.ACTIVE, db_api.instance_get(uuid)['vm_state'])

    def test_a_claim_taken_over_is_left_alone(self):
        uuid = self.server(states.ACTIVE, states.REBOOTING_HARD)
        # The pause the hard reboot took over arrives late.
        self.compute.pause_instance(self.ctxt, uuid)
        row = db_api.instance_get(uuid)
        self.assertEqual((states.ACTIVE, states.REBOOTING_HARD),
                         (row['vm_state'], row['task_state']))
        self.assertEqual(states.POWER_RUNNING,
                         self.compute.driver.power_state(uuid))

    def test_hypervisor_refusal_gives_the_task_state_back(self):
        # A resume of a guest that is not suspended: refused, with why.
        uuid = self.server(states.SUSPENDED, states.RESUMING)
        self.assertRaises(Exception, self.compute.resume_instance,
                          self.ctxt, uuid)
        row = db_api.instance_get(uuid)
        self.assertEqual((states.SUSPENDED, None),
                         (row['vm_state'], row['task_state']))
        self.assertIn('power is running',
                      db_api.instance_fault_get_latest(uuid)['message'])

    def test_hard_reboot_recreates_a_missing_guest(self):
        uuid = self.server(states.ERROR, states.REBOOTING_HARD)
        self.compute.driver.destroy(uuid)
        self.compute.reboot_instance(self.ctxt, uuid, 'HARD')
        self.assertEqual(states.ACTIVE, db_api.instance_get(uuid)['vm_state'])
        self.assertEqual(states.POWER_RUNNING,
                         self.compute.driver.power_state(uuid))

    def test_rebuild_keeps_a_stopped_server_stopped(self):
        uuid = self.server(states.STOPPED, states.REBUILDING,
                           power='shutdown')
        self.compute.rebuild_instance_same_host(self.ctxt, uuid, 'img')
        row = db_api.instance_get(uuid)
        self.assertEqual((states.STOPPED, None, states.POWER_SHUTDOWN),
                         (row['vm_state'], row['task_state'],
                          row['power_state']))
