"""Stable device rescue on a real guest ([compute] driver = qemu): a
rescue image imported with ``--property hw_rescue_bus=virtio`` boots
with the server's disk where it always is (the first virtio-blk device,
its PCI slot unchanged, /dev/vda in the guest: the guest's counter goes
on from the server's disk) and the rescue disk after it; unrescue boots
the server's own disk alone again. A cdrom on sata is an ide-cd on
q35's AHCI, the server's disk unmoved. And QEMU itself takes the devices
of every bus the driver attaches a rescue disk on, on q35 and on pc."""
import os
import shutil
import signal
import subprocess
import tempfile
import time

import testtools

from nova_moves.virt.qemu import guest as guest_mod
from nova_moves.virt.qemu import rescue
from nova_moves.virt import rescue_devices
from tests.functional import qemu_base

VIRTIO_BLK = (0x1af4, (0x1001, 0x1042))  # legacy and modern device ids


class StableRescueTest(qemu_base.QemuStackTestCase):
    HOSTS = ('qemu1',)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        files, _ = qemu_base.guest_files()
        cls.stable_image = cls.import_image(
            'rescue-virtio', *files, properties={'hw_rescue_bus': 'virtio'})
        cls.cdrom_image = cls.import_image(
            'rescue-cdrom', *files, properties={
                'hw_rescue_device': 'cdrom', 'hw_rescue_bus': 'sata'})

    def qmp_guest(self, server_id):
        return guest_mod.Guest('qemu1', server_id, root=(
            qemu_base.qemu_guests.host_dir(self.instances_path, 'qemu1')))

    def virtio_disks(self, server_id):
        """[(PCI slot, qdev id)] of the guest's virtio-blk devices."""
        found = []
        for bus in self.qmp_guest(server_id).qmp('query-pci'):
            for dev in bus['devices']:
                ident = dev['id']
                if (ident['vendor'], ident['device'] in VIRTIO_BLK[1]) == (
                        VIRTIO_BLK[0], True):
                    found.append((dev['slot'], dev.get('qdev_id', '')))
        return sorted(found)

    def cmdline(self, server_id):
        pidfile = os.path.join(qemu_base.qemu_guests.host_dir(
            self.instances_path, 'qemu1'), server_id, 'qemu.pid')
        with open(pidfile) as f:
            with open('/proc/%s/cmdline' % f.read().strip(), 'rb') as c:
                return c.read().decode().split('\0')

    def beats_after(self, sid, offset, what):
        return self.admin.wait_for(lambda: qemu_base.qemu_guests.beats(
            self.console(sid, 'qemu1')[offset:]), timeout=120, what=what)

    def test_the_server_disk_keeps_its_address(self):
        sid = self.boot_guest(host='qemu1')['id']
        before = self.wait_for_beat(sid, 'qemu1', above=2)
        own_slots = self.virtio_disks(sid)
        self.assertEqual(1, len(own_slots), own_slots)
        offset = len(self.console(sid, 'qemu1'))
        self.admin.action(sid, {'rescue': {
            'rescue_image_ref': self.stable_image}}, expect=200)
        self.admin.wait_for_status(sid, 'RESCUE', timeout=120)

        argv = self.cmdline(sid)
        devices = [argv[i + 1] for i, a in enumerate(argv)
                   if a == '-device']
        # The server's disk (node disk0, its own file) is the first
        # device, the rescue disk the last, on virtio-blk.
        self.assertEqual(['virtio-blk-pci,drive=disk0',
                          'virtio-blk-pci,drive=disk1,id=rescue-disk'],
                         devices)
        joined = ' '.join(argv)
        self.assertLess(joined.index('/disk,node-name=file0'),
                        joined.index('/disk.rescue,node-name=file1'))
        # Its PCI slot is the one it had; the rescue disk's comes after.
        rescued_slots = self.virtio_disks(sid)
        self.assertEqual([own_slots[0], (rescued_slots[1][0],
                                         'rescue-disk')], rescued_slots)
        self.assertGreater(rescued_slots[1][0], own_slots[0][0])

        # The rescue boot's /dev/vda is the server's disk: its counter
        # goes on (a legacy rescue's vda is the new rescue disk: last=0).
        beats = self.beats_after(sid, offset, 'the rescue boot beating')
        rescued = self.console(sid, 'qemu1')[offset:]
        self.assertIn('guest disk=/dev/vda last=', rescued)
        self.assertNotIn('last=0 ', rescued)
        self.assertGreater(beats[0][0], before[0])
        during = self.wait_for_beat(sid, 'qemu1', above=beats[0][0])

        offset = len(self.console(sid, 'qemu1'))
        self.admin.action(sid, {'unrescue': None}, expect=202)
        self.admin.wait_for_status(sid, 'ACTIVE', timeout=120)
        self.assertNotIn('disk.rescue', ' '.join(self.cmdline(sid)))
        self.assertEqual(own_slots, self.virtio_disks(sid))
        # Its own disk again, with what the rescue system wrote on it.
        own = self.beats_after(sid, offset, 'its own disk beating')
        self.assertGreater(own[0][0], during[0])
        self.assert_one_process(sid)
        self.admin.delete('/servers/%s' % sid, expect=204)

    def test_a_cdrom_on_sata(self):
        sid = self.boot_guest(host='qemu1', name='vm-cd')['id']
        before = self.wait_for_beat(sid, 'qemu1', above=1)
        own_slots = self.virtio_disks(sid)
        offset = len(self.console(sid, 'qemu1'))
        self.admin.action(sid, {'rescue': {
            'rescue_image_ref': self.cdrom_image}}, expect=200)
        self.admin.wait_for_status(sid, 'RESCUE', timeout=120)
        argv = self.cmdline(sid)
        self.assertEqual(['virtio-blk-pci,drive=disk0',
                          'ide-cd,drive=disk1,id=rescue-disk,bus=ide.0'],
                         [argv[i + 1] for i, a in enumerate(argv)
                          if a == '-device'])
        # The server's disk alone on virtio, where it was; the rescue
        # disk a CD-ROM on q35's AHCI.
        self.assertEqual(own_slots, self.virtio_disks(sid))
        blocks = {b.get('qdev', ''): b for b in
                  self.qmp_guest(sid).qmp('query-block')}
        cd = [b for path, b in blocks.items() if 'rescue-disk' in path]
        self.assertEqual(1, len(cd), blocks)
        self.assertTrue(cd[0]['removable'])
        self.assertTrue(cd[0]['inserted']['file'].endswith('disk.rescue'),
                        cd[0])
        beats = self.beats_after(sid, offset, 'the rescue boot beating')
        self.assertGreater(beats[0][0], before[0])
        self.admin.action(sid, {'unrescue': None}, expect=202)
        self.admin.wait_for_status(sid, 'ACTIVE', timeout=120)
        self.admin.delete('/servers/%s' % sid, expect=204)


def _running(pid):
    """Not gone and not a zombie (whoever reaps it may be slow)."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except (FileNotFoundError, IndexError):
        return False


@testtools.skipUnless(shutil.which('qemu-system-x86_64') and
                      shutil.which('qemu-img'), 'QEMU is not installed')
class RescueDevicesAcceptedTest(testtools.TestCase):
    """Every supported device/bus, as rescue.devices() spells it, is
    accepted by the installed QEMU: -daemonize returns 0 only once the
    machine and its devices are made (a bad -device exits 1 at once)."""

    def test_every_bus_on_q35_and_pc(self):
        tmp = tempfile.mkdtemp(prefix='nm-rescue-dev-')
        self.addCleanup(shutil.rmtree, tmp, True)
        for name in ('disk', 'disk.rescue'):
            subprocess.run(['qemu-img', 'create', '-q', '-f', 'qcow2',
                            os.path.join(tmp, name), '64M'], check=True)
        refused = []
        for machine in ('q35', 'pc'):
            for device, bus in sorted(rescue_devices.DRIVER_SUPPORTED):
                # One each: a killed QEMU holds its pidfile's lock until
                # it is gone.
                pidfile = os.path.join(tmp, '%s-%s-%s.pid' % (
                    machine, device, bus))
                argv = ['qemu-system-x86_64', '-machine',
                        machine + ',accel=tcg', '-nodefaults',
                        '-no-user-config', '-display', 'none', '-S',
                        '-m', '64']
                # No image locks: a killed QEMU's may outlive the wait
                # below on a loaded machine; only the devices are tried.
                for i, name in enumerate(('disk', 'disk.rescue')):
                    argv += ['-blockdev', 'driver=file,filename=%s,'
                             'locking=off,node-name=file%d' % (
                                 os.path.join(tmp, name), i),
                             '-blockdev', 'driver=qcow2,file=file%d,'
                             'node-name=disk%d' % (i, i)]
                argv += ['-device', 'virtio-blk-pci,drive=disk0']
                for dev in rescue.devices({'device': device, 'bus': bus},
                                          'disk1', machine):
                    argv += ['-device', dev]
                proc = subprocess.run(
                    argv + ['-daemonize', '-pidfile', pidfile],
                    capture_output=True, text=True, timeout=60)
                if proc.returncode:
                    refused.append((machine, device, bus, proc.stderr))
                    continue
                with open(pidfile) as f:
                    pid = int(f.read())
                os.kill(pid, signal.SIGKILL)
                deadline = time.monotonic() + 10
                while _running(pid) and time.monotonic() < deadline:
                    time.sleep(0.05)
        self.assertEqual([], refused)
