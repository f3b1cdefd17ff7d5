"""Real guests moved by the real processes ([compute] driver = qemu):
the guest's own counter (``beat N <uptime>`` on its serial console, N
kept on its disk) shows what each move did to it."""
import time

from tests.functional import qemu_base


class QemuMovesTest(qemu_base.QemuStackTestCase):

    def test_live_migration_moves_the_running_guest(self):
        server = self.boot_guest(host='qemu1')
        before = self.wait_for_beat(server['id'], 'qemu1', above=2)
        self.admin.action(server['id'], {'os-migrateLive': {
            'host': 'qemu2', 'block_migration': 'auto'}}, version='2.30',
            expect=202)
        moved = self.admin.wait_for(
            lambda: (lambda s: s if s['OS-EXT-SRV-ATTR:host'] == 'qemu2' and
                     s['OS-EXT-STS:task_state'] is None else None)(
                self.admin.server(server['id'])), timeout=120,
            what='the live migration')
        self.assertEqual('ACTIVE', moved['status'])
        migration = [m for m in self.admin.migrations(
            instance_uuid=server['id'])][0]
        self.assertEqual('completed', migration['status'])
        # The same guest goes on counting on the destination: no reboot
        # (its uptime went on), N continued.
        after = self.wait_for_beat(server['id'], 'qemu2', above=before[0])
        first_there = qemu_base.qemu_guests.beats(
            self.console(server['id'], 'qemu2'))[0]
        self.assertGreater(first_there[0], before[0] - 1)
        self.assertGreater(first_there[1], before[1])
        self.assertGreater(after[1], before[1])
        self.assert_one_process(server['id'])
        self.assertEqual('', self.console(server['id'], 'qemu1'))

    def test_cold_migrate_and_confirm_continue_from_the_disk(self):
        server = self.boot_guest(host='qemu1')
        before = self.wait_for_beat(server['id'], 'qemu1', above=2)
        self.admin.action(server['id'], {'migrate': {'host': 'qemu2'}},
                          version='2.56', expect=202)
        resized = self.admin.wait_for_status(server['id'], 'VERIFY_RESIZE',
                                             timeout=120)
        self.assertEqual('qemu2', resized['OS-EXT-SRV-ATTR:host'])
        # A new boot (uptime from 0) from the copied disk: N continues.
        first = self.wait_for_beat(server['id'], 'qemu2', above=0)
        self.assertGreater(first[0], before[0])
        self.assertLess(first[1], before[1] + 60)
        self.assert_one_process(server['id'])
        self.admin.action(server['id'], {'confirmResize': None},
                          expect=204)
        self.admin.wait_for_status(server['id'], 'ACTIVE', timeout=60)
        self.admin.wait_for(
            lambda: self.console(server['id'], 'qemu1') == '', timeout=30,
            what='the source copy removed')
        self.assert_one_process(server['id'])

    def test_pause_suspend_and_stop(self):
        server = self.boot_guest(host='qemu2')
        sid = server['id']
        self.wait_for_beat(sid, 'qemu2', above=1)
        self.admin.action(sid, {'pause': None}, expect=202)
        self.admin.wait_for_status(sid, 'PAUSED')
        paused_at = self.wait_for_beat(sid, 'qemu2')
        time.sleep(3)
        self.assertEqual(paused_at, self.wait_for_beat(sid, 'qemu2'))
        self.admin.action(sid, {'unpause': None}, expect=202)
        self.admin.wait_for_status(sid, 'ACTIVE')
        self.wait_for_beat(sid, 'qemu2', above=paused_at[0])
        # Suspend saves the guest's state to a file; resume goes on from
        # it: the same boot (uptime continues).
        self.admin.action(sid, {'suspend': None}, expect=202)
        self.admin.wait_for_status(sid, 'SUSPENDED', timeout=60)
        self.assertEqual(0, qemu_base.qemu_guests.qemu_processes().get(
            sid, 0))
        suspended_at = self.wait_for_beat(sid, 'qemu2')
        self.admin.action(sid, {'resume': None}, expect=202)
        self.admin.wait_for_status(sid, 'ACTIVE', timeout=60)
        resumed = self.wait_for_beat(sid, 'qemu2', above=suspended_at[0])
        self.assertGreater(resumed[1], suspended_at[1])
        # Stop (ACPI power-down) and start: a new boot from the disk.
        self.admin.action(sid, {'os-stop': None}, expect=202)
        self.admin.wait_for_status(sid, 'SHUTOFF', timeout=60)
        self.assertEqual(0, qemu_base.qemu_guests.qemu_processes().get(
            sid, 0))
        stopped_at = self.wait_for_beat(sid, 'qemu2')
        self.admin.action(sid, {'os-start': None}, expect=202)
        self.admin.wait_for_status(sid, 'ACTIVE', timeout=60)
        again = self.wait_for_beat(sid, 'qemu2', above=stopped_at[0])
        self.assertLess(again[1], stopped_at[1])
        self.assert_one_process(sid)

    def test_agent_restart_reattaches_to_its_guests(self):
        server = self.boot_guest(host='qemu1')
        sid = server['id']
        before = self.wait_for_beat(sid, 'qemu1', above=1)
        self.stack.kill('qemu1')
        # Its guest runs on without the agent (as under libvirt).
        self.wait_for_beat(sid, 'qemu1', above=before[0] + 1)
        self.stack.restart('qemu1')
        self.stack.wait_until_ready(60)
        self.admin.action(sid, {'pause': None}, expect=202)
        self.admin.wait_for_status(sid, 'PAUSED', timeout=60)
        self.admin.action(sid, {'unpause': None}, expect=202)
        self.admin.wait_for_status(sid, 'ACTIVE', timeout=60)
        self.assert_one_process(sid)
