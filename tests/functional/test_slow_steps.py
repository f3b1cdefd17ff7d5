"""A move step that is only slow is not rolled back (issue 17, #2).

The destination's fake hypervisor takes longer than the step's timeout
([DEFAULT] stuck_move_timeout, 3 s here). Before it re-sends or rolls
back a step, the conductors' sweep asks the host that holds it
(move_step_status, a short call); a step still running is left to
finish, and the move completes with its allocations where they belong.
Without the question the sweep re-sent the step, then rolled the move
back while the slow step still ran, and the late step's end met a
rolled-back move."""
from tests.functional import base

SLOW = 10  # seconds, beyond the 3 s step timeout


class SlowStepTest(base.StackTestCase):
    COMPUTES = 2
    EXTRA_CONF = {'DEFAULT': {'stuck_move_timeout': 3}}

    def _slow(self, host, operation):
        self.admin.set_faults(host, [], {operation: SLOW})
        self.addCleanup(self.admin.set_faults, host, [], {})

    def _migrate_and_confirm(self, name):
        server = self.boot(name, host='compute1')
        self.admin.action(server['id'], {'migrate': None}, version='2.56',
                          expect=202)
        # ACTIVE with no task_state: rolled back.
        moved = self.admin.wait_for_status(
            server['id'], ['VERIFY_RESIZE', 'ERROR', 'ACTIVE'],
            timeout=SLOW * 4)
        self.assertEqual('VERIFY_RESIZE', moved['status'])
        self.assertEqual('compute2', moved['OS-EXT-SRV-ATTR:host'])
        [migration] = self.admin.migrations(instance_uuid=server['id'])
        self.assertEqual('finished', migration['status'])
        self.admin.action(server['id'], {'confirmResize': None},
                          expect=204)
        done = self.admin.wait_for_status(server['id'], 'ACTIVE')
        self.assertEqual('compute2', done['OS-EXT-SRV-ATTR:host'])
        self.assertNotIn(server['id'], self.local_guests('compute1'))

    def test_slow_prep_resize_completes(self):
        self._slow('compute2', 'prep_resize')
        self._migrate_and_confirm('slow-prep')

    def test_slow_resize_instance_completes(self):
        self._slow('compute1', 'migrate_disk_and_power_off')
        self._migrate_and_confirm('slow-disk')
