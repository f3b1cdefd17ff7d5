"""Real guests moved by the real processes ([compute] driver = qemu):
the guest's own counter (``beat N <uptime>`` on its serial console, N
kept on its disk) shows what each move did to it."""
import os
import signal
import socket
import time
import uuid

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

    def test_stopped_server_moves_without_booting(self):
        sid = self.boot_guest(host='qemu1')['id']
        self.wait_for_beat(sid, 'qemu1', above=1)
        self.admin.action(sid, {'os-stop': None}, expect=202)
        self.admin.wait_for_status(sid, 'SHUTOFF', timeout=60)
        stopped_at = self.wait_for_beat(sid, 'qemu1')
        self.admin.action(sid, {'migrate': {'host': 'qemu2'}},
                          version='2.56', expect=202)
        self.admin.wait_for_status(sid, 'VERIFY_RESIZE', timeout=120)
        # The copy waits on qemu2, never started: no process, no beat.
        self.assertEqual(0, qemu_base.qemu_guests.qemu_processes().get(
            sid, 0))
        self.assertEqual([], qemu_base.qemu_guests.beats(
            self.console(sid, 'qemu2')))
        self.admin.action(sid, {'confirmResize': None}, expect=204)
        shown = self.admin.wait_for_status(sid, 'SHUTOFF', timeout=60)
        self.assertEqual('qemu2', shown['OS-EXT-SRV-ATTR:host'])
        self.admin.action(sid, {'os-start': None}, expect=202)
        self.admin.wait_for_status(sid, 'ACTIVE', timeout=60)
        self.assertGreater(self.wait_for_beat(sid, 'qemu2')[0],
                           stopped_at[0])
        self.assert_one_process(sid)

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

    def test_resize_applies_the_flavor_and_revert_restarts_the_source(self):
        server = self.boot_guest(host='qemu1')
        sid = server['id']
        before = self.wait_for_beat(sid, 'qemu1', above=2)
        bigger = self.flavor('bigger', vcpus=2, ram=384, disk=2)
        self.admin.action(sid, {'resize': {'flavorRef': bigger['id']}},
                          expect=202)
        resized = self.admin.wait_for_status(sid, 'VERIFY_RESIZE',
                                             timeout=120)
        dest = resized['OS-EXT-SRV-ATTR:host']
        self.assertEqual(['-m', '384', '-smp', '2'],
                         self.qemu_argv(sid, dest, '-m', '-smp'))
        moved = self.wait_for_beat(sid, dest)
        self.assertGreater(moved[0], before[0])
        self.admin.action(sid, {'revertResize': None}, expect=202)
        self.admin.wait_for_status(sid, 'ACTIVE', timeout=120)
        # The source's copy runs again with the old flavor, from the disk
        # it had (N from before the resize: what it did there is lost).
        self.assertEqual(['-m', '256', '-smp', '1'],
                         self.qemu_argv(sid, 'qemu1', '-m', '-smp'))
        self.wait_for_beat(sid, 'qemu1', above=before[0])
        self.assert_one_process(sid)

    def test_reboots_and_the_console_through_the_api(self):
        sid = self.boot_guest(host='qemu2')['id']
        before = self.wait_for_beat(sid, 'qemu2', above=2)
        output = self.admin.action(sid, {'os-getConsoleOutput': {
            'length': 3}}, expect=200).json()['output']
        self.assertIn('beat ', output)
        self.assertLessEqual(len(output.splitlines()), 3)
        diagnostics = self.admin.get('/servers/%s/diagnostics' % sid,
                                     version='2.48', expect=200).json()
        self.assertEqual('running', diagnostics['state'])
        self.assertEqual(1, diagnostics['num_cpus'])
        for kind in ('SOFT', 'HARD'):
            self.admin.action(sid, {'reboot': {'type': kind}}, expect=202)
            self.admin.wait_for_status(sid, 'ACTIVE', timeout=90)
            # A new boot (uptime from 0) that goes on from the disk's N.
            after = self.wait_for_beat(sid, 'qemu2', above=before[0])
            self.assertLess(after[1], before[1] + 30)
            before = after
        self.assert_one_process(sid)

    def test_rescue_boots_the_rescue_image_then_its_own_disk(self):
        sid = self.boot_guest(host='qemu1')['id']
        before = self.wait_for_beat(sid, 'qemu1', above=2)
        offset = len(self.console(sid, 'qemu1'))
        self.admin.action(sid, {'rescue': {
            'rescue_image_ref': self.image_id}}, expect=200)
        self.admin.wait_for_status(sid, 'RESCUE', timeout=90)
        argv = ' '.join(self.qemu_cmdline(sid, 'qemu1'))
        # The rescue image's new disk first, the server's own second.
        self.assertLess(argv.index('/disk.rescue,'), argv.index('/disk,'))
        # A new boot from the rescue disk: its counter starts again.
        self.admin.wait_for(lambda: qemu_base.qemu_guests.beats(
            self.console(sid, 'qemu1')[offset:]), timeout=90,
            what='the rescue boot beating')
        rescued = self.console(sid, 'qemu1')[offset:]
        self.assertIn('last=0', rescued)
        self.assertEqual(1, qemu_base.qemu_guests.beats(rescued)[0][0])
        offset = len(self.console(sid, 'qemu1'))
        self.admin.action(sid, {'unrescue': None}, expect=202)
        self.admin.wait_for_status(sid, 'ACTIVE', timeout=90)
        self.assertNotIn('disk.rescue',
                         ' '.join(self.qemu_cmdline(sid, 'qemu1')))
        # Its own disk again: the count goes on from before the rescue.
        own = self.admin.wait_for(lambda: qemu_base.qemu_guests.beats(
            self.console(sid, 'qemu1')[offset:]), timeout=90,
            what='its own disk beating')
        self.assertGreater(own[0][0], before[0])
        self.assert_one_process(sid)

    def qemu_cmdline(self, server_id, host):
        pidfile = os.path.join(qemu_base.qemu_guests.host_dir(
            self.instances_path, host), server_id, 'qemu.pid')
        with open(pidfile) as f:
            with open('/proc/%s/cmdline' % f.read().strip(), 'rb') as c:
                return c.read().decode().split('\0')

    def qemu_argv(self, server_id, host, *options):
        pidfile = os.path.join(qemu_base.qemu_guests.host_dir(
            self.instances_path, host), server_id, 'qemu.pid')
        with open(pidfile) as f:
            with open('/proc/%s/cmdline' % f.read().strip(), 'rb') as c:
                argv = c.read().decode().split('\0')
        out = []
        for option in options:
            out += [option, argv[argv.index(option) + 1]]
        return out


class QemuShelveEvacuateTest(qemu_base.QemuStackTestCase):

    def test_shelve_offload_and_unshelve_elsewhere_keep_the_disk(self):
        server = self.boot_guest(host='qemu1')
        sid = server['id']
        before = self.wait_for_beat(sid, 'qemu1', above=2)
        self.admin.action(sid, {'shelve': None}, expect=202)
        self.admin.wait_for_status(sid, 'SHELVED_OFFLOADED', timeout=90)
        self.assertEqual(0, qemu_base.qemu_guests.qemu_processes().get(
            sid, 0))
        snapshot = self.admin.get('/images/%s' % self.shelved_id(sid),
                                  expect=200).json()
        self.assertEqual('private', snapshot['visibility'])
        self.admin.action(sid, {'unshelve': {'host': 'qemu2'}},
                          version='2.91', expect=202)
        shown = self.admin.wait_for_status(sid, 'ACTIVE', timeout=90)
        self.assertEqual('qemu2', shown['OS-EXT-SRV-ATTR:host'])
        # The disk came back through the image store: N goes on.
        first = self.wait_for_beat(sid, 'qemu2')
        self.assertGreater(first[0], before[0])
        self.assert_one_process(sid)
        # The snapshot is gone once unshelved (as Nova's shelved image).
        self.admin.get('/images/%s' % self.shelved_id(sid), expect=404)

    def test_deleting_an_offloaded_server_deletes_its_snapshot(self):
        sid = self.boot_guest(host='qemu2')['id']
        self.wait_for_beat(sid, 'qemu2', above=0)
        self.admin.action(sid, {'shelve': None}, expect=202)
        self.admin.wait_for_status(sid, 'SHELVED_OFFLOADED', timeout=90)
        self.admin.get('/images/%s' % self.shelved_id(sid), expect=200)
        self.admin.delete('/servers/%s' % sid, expect=204)
        self.admin.get('/images/%s' % self.shelved_id(sid), expect=404)

    def test_evacuate_rebuilds_from_the_image_and_the_old_copy_goes(self):
        server = self.boot_guest(host='qemu1')
        sid = server['id']
        self.wait_for_beat(sid, 'qemu1', above=2)
        # The agent dies; its guest runs on (a host cut off, say).
        self.stack.kill('qemu1')
        service = [s for s in self.admin.services('nova-compute')
                   if s['host'] == 'qemu1'][0]
        self.admin.put('/os-services/%s' % service['id'],
                       {'forced_down': True}, version='2.53', expect=200)
        self.addCleanup(self.admin.put, '/os-services/%s' % service['id'],
                        {'forced_down': False}, version='2.53', expect=200)
        self.admin.action(sid, {'evacuate': {}}, version='2.68', expect=200)
        shown = self.admin.wait_for_status(sid, 'ACTIVE', timeout=90)
        self.assertEqual('qemu2', shown['OS-EXT-SRV-ATTR:host'])
        # No shared storage: a new disk from the image, counting from 1.
        first = qemu_base.qemu_guests.beats(self.console(sid, 'qemu2'))
        first = first[0] if first else self.wait_for_beat(sid, 'qemu2')
        self.assertLessEqual(first[0], 2)
        # The old host comes back and destroys its copy.
        self.stack.restart('qemu1')
        self.admin.put('/os-services/%s' % service['id'],
                       {'forced_down': False}, version='2.53', expect=200)
        self.admin.wait_for(
            lambda: qemu_base.qemu_guests.qemu_processes().get(sid) == 1,
            timeout=60, what='one QEMU process for %s' % sid)
        self.admin.wait_for(
            lambda: self.console(sid, 'qemu1') == '', timeout=30,
            what='the old copy removed')

    @staticmethod
    def shelved_id(server_id):
        from nova_moves import image_store
        return image_store.shelve_snapshot_id(server_id)


class QemuLiveControlTest(qemu_base.QemuStackTestCase):
    """A live migration slow enough to act on: 4 MiB/s for a guest that
    dirties 20 MB a second, given 12 s (its completion timeout)."""
    QEMU_CONF = {'live_migration_bandwidth': '4',
                 'live_migration_completion_timeout': '10'}
    CMDLINE = 'dirty=20'

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        files, _ = qemu_base.guest_files()
        cls.dirty_image = cls.import_image('dirty-guest', *files,
                                           cmdline=cls.CMDLINE)

    def start_live(self):
        server = self.boot_guest(host='qemu1', image=self.dirty_image)
        sid = server['id']
        self.wait_for_beat(sid, 'qemu1', above=1)
        self.admin.action(sid, {'os-migrateLive': {
            'host': 'qemu2', 'block_migration': 'auto'}}, version='2.30',
            expect=202)
        migration = self.admin.wait_for(
            lambda: [m for m in self.admin.migrations(instance_uuid=sid)
                     if m['status'] == 'running'], timeout=60,
            what='the migration running')[0]
        return sid, migration

    def assert_still_on_source(self, sid, migration, status):
        self.admin.wait_for(
            lambda: self.admin.migrations(instance_uuid=sid)[0]['status']
            == status, timeout=60, what='migration %s' % status)
        shown = self.admin.wait_for_status(sid, 'ACTIVE', timeout=60)
        self.assertEqual('qemu1', shown['OS-EXT-SRV-ATTR:host'])
        last = self.wait_for_beat(sid, 'qemu1')
        self.wait_for_beat(sid, 'qemu1', above=last[0])  # it runs on
        self.admin.wait_for(
            lambda: qemu_base.qemu_guests.qemu_processes().get(sid) == 1,
            timeout=30, what='the destination copy removed')

    def test_abort_leaves_the_guest_running_on_the_source(self):
        sid, migration = self.start_live()
        self.admin.delete('/servers/%s/migrations/%s' % (
            sid, migration['id']), version='2.24', expect=202)
        self.assert_still_on_source(sid, migration, 'cancelled')

    def test_completion_timeout_aborts(self):
        sid, migration = self.start_live()
        self.assert_still_on_source(sid, migration, 'error')

    def test_force_complete_pauses_until_it_converges(self):
        sid, migration = self.start_live()
        self.admin.post('/servers/%s/migrations/%s/action' % (
            sid, migration['id']), {'force_complete': None},
            version='2.22', expect=202)
        shown = self.admin.wait_for(
            lambda: (lambda s: s if s['OS-EXT-SRV-ATTR:host'] == 'qemu2' and
                     s['OS-EXT-STS:task_state'] is None else None)(
                self.admin.server(sid)), timeout=120,
            what='the forced live migration')
        self.assertEqual('ACTIVE', shown['status'])
        self.assertEqual('completed',
                         self.admin.migrations(instance_uuid=sid)[0]['status'])
        self.wait_for_beat(sid, 'qemu2', above=0)
        self.assert_one_process(sid)


class QemuFaultsTest(qemu_base.QemuStackTestCase):
    """Bad images, a QEMU that will not start, a guest that dies, a
    port taken: each a clear fault, nothing half-done."""
    QEMU_CONF = {'watch_interval': '0.5'}

    def boot_error(self, image):
        flavor = self.flavor('guest', ram=256, disk=1)
        server = self.admin.boot('bad', flavor['id'], image_ref=image,
                                 timeout=120)
        self.assertEqual('ERROR', server['status'])
        for host in self.HOSTS:
            root = qemu_base.qemu_guests.host_dir(self.instances_path, host)
            leftovers = os.listdir(root) if os.path.isdir(root) else []
            self.assertNotIn(server['id'], leftovers)
        self.assertEqual(0, qemu_base.qemu_guests.qemu_processes().get(
            server['id'], 0))
        return server['fault']['message']

    def store_dir(self, image_id):
        return os.path.join(self.stack.workdir, 'state', 'images', image_id)

    def test_missing_image(self):
        missing = str(uuid.uuid4())
        self.assertIn(missing, self.boot_error(missing))

    def test_corrupt_image(self):
        files, _ = qemu_base.guest_files()
        image = self.import_image('to-corrupt', *files)
        with open(os.path.join(self.store_dir(image), 'disk'), 'r+b') as f:
            f.write(b'QFI\xfb' + b'\xff' * 508)
        self.assertIn('disk', self.boot_error(image))

    def test_qemu_that_will_not_start(self):
        files, _ = qemu_base.guest_files()
        kernel = os.path.join(self.stack.workdir, 'not-a-kernel')
        with open(kernel, 'wb') as f:
            f.write(os.urandom(4096))
        image = self.import_image('bad-kernel', kernel, files[1])
        self.assertIn('QEMU failed', self.boot_error(image))

    def test_a_guest_that_dies_goes_shutoff_and_starts_again(self):
        sid = self.boot_guest(host='qemu1')['id']
        before = self.wait_for_beat(sid, 'qemu1', above=2)
        pidfile = os.path.join(qemu_base.qemu_guests.host_dir(
            self.instances_path, 'qemu1'), sid, 'qemu.pid')
        with open(pidfile) as f:
            os.kill(int(f.read()), signal.SIGKILL)
        shown = self.admin.wait_for_status(sid, 'SHUTOFF', timeout=30)
        self.assertEqual(4, shown['OS-EXT-STS:power_state'])
        actions = self.admin.actions(sid)
        self.assertEqual('create', actions[-1]['action'])
        self.admin.action(sid, {'os-start': None}, expect=202)
        self.admin.wait_for_status(sid, 'ACTIVE', timeout=60)
        self.wait_for_beat(sid, 'qemu1', above=before[0])
        self.assert_one_process(sid)

    def test_live_migration_with_its_port_taken(self):
        sid = self.boot_guest(host='qemu1')['id']
        self.wait_for_beat(sid, 'qemu1', above=1)
        taken = socket.socket()
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        taken.bind(('127.0.0.1', 49152))
        taken.listen()
        self.addCleanup(taken.close)
        self.admin.action(sid, {'os-migrateLive': {
            'host': 'qemu2', 'block_migration': 'auto'}}, version='2.30',
            expect=202)
        self.admin.wait_for(
            lambda: self.admin.migrations(instance_uuid=sid)[0]['status']
            == 'completed', timeout=120, what='the live migration')
        self.assertEqual('qemu2', self.admin.server(sid)[
            'OS-EXT-SRV-ATTR:host'])
        self.assert_one_process(sid)
