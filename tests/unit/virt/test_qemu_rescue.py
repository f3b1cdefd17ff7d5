"""What a QEMU guest boots (virt/qemu/rescue.py): its own kernel and
disk, or, once a rescue's files are ready, the rescue image's with the
server's disk attached second; a stable device rescue keeps the
server's disk first and attaches the rescue disk after it on the bus
the image asks for (the argv of each bus on q35 and pc), and refuses
what it cannot attach before the guest is touched. Booting it:
test_qemu_guests.py, test_qemu_stable_rescue.py."""
from unittest import mock

import fixtures
import testtools

from nova_moves.virt.qemu import guest as guest_mod
from nova_moves.virt.qemu import rescue
from nova_moves.virt import rescue_devices
from tests.unit import fixtures as nm_fixtures


class RescueBootTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.guest = guest_mod.Guest('h1', 'u1', root='/x')
        self.record = {'launch': {'cmdline': 'own'}}

    def test_own_disk_when_not_rescued(self):
        self.assertEqual(('/x/u1/kernel', '/x/u1/initrd', 'own',
                          ['/x/u1/disk']),
                         rescue.boot(self.guest, self.record))
        # A rescue begun but not ready (killed, failed) boots as before.
        self.record['rescue'] = {'image_ref': 'i', 'ready': False}
        self.assertEqual(['/x/u1/disk'],
                         rescue.boot(self.guest, self.record)[3])

    def test_rescue_image_first_own_disk_second(self):
        self.record['rescue'] = {'image_ref': 'i', 'ready': True,
                                 'cmdline': 'r'}
        self.assertEqual(('/x/u1/rescue.kernel', '/x/u1/rescue.initrd', 'r',
                          ['/x/u1/disk.rescue', '/x/u1/disk']),
                         rescue.boot(self.guest, self.record))

    def test_stable_rescue_keeps_the_own_disk_first(self):
        self.record['rescue'] = {'image_ref': 'i', 'ready': True,
                                 'cmdline': 'r', 'stable': {
                                     'device': 'disk', 'bus': 'virtio'}}
        self.assertEqual(('/x/u1/rescue.kernel', '/x/u1/rescue.initrd', 'r',
                          ['/x/u1/disk', '/x/u1/disk.rescue']),
                         rescue.boot(self.guest, self.record))


def _devices(args):
    return [args[i + 1] for i, a in enumerate(args) if a == '-device']


class DiskArgsTest(testtools.TestCase):
    """The -blockdev/-device arguments of the guest's disks."""

    def setUp(self):
        super().setUp()
        self.guest = guest_mod.Guest('h1', 'u1', root='/x')
        self.record = {'launch': {'cmdline': 'own'}}

    def args(self, stable=None, machine='q35'):
        self.record['rescue'] = {'image_ref': 'i', 'ready': True,
                                 'cmdline': 'r', 'stable': stable}
        return rescue.disk_args(self.guest, self.record, machine)[3]

    def test_not_rescued_and_legacy(self):
        self.assertEqual([
            '-blockdev', 'driver=file,filename=/x/u1/disk,node-name=file0',
            '-blockdev', 'driver=qcow2,file=file0,node-name=disk0',
            '-device', 'virtio-blk-pci,drive=disk0'],
            rescue.disk_args(self.guest, self.record, 'q35')[3])
        args = self.args()
        self.assertEqual(['virtio-blk-pci,drive=disk0',
                          'virtio-blk-pci,drive=disk1'], _devices(args))
        self.assertIn('driver=file,filename=/x/u1/disk.rescue,'
                      'node-name=file0', args)

    def test_each_bus(self):
        own = 'virtio-blk-pci,drive=disk0'
        expected = {
            ('disk', 'virtio'): ['virtio-blk-pci,drive=disk1,'
                                 'id=rescue-disk'],
            ('disk', 'scsi'): ['virtio-scsi-pci,id=rescue-scsi',
                               'scsi-hd,bus=rescue-scsi.0,drive=disk1,'
                               'id=rescue-disk'],
            ('cdrom', 'scsi'): ['virtio-scsi-pci,id=rescue-scsi',
                                'scsi-cd,bus=rescue-scsi.0,drive=disk1,'
                                'id=rescue-disk'],
            ('disk', 'usb'): ['qemu-xhci,id=rescue-usb',
                              'usb-storage,bus=rescue-usb.0,drive=disk1,'
                              'id=rescue-disk'],
            ('cdrom', 'usb'): ['qemu-xhci,id=rescue-usb',
                               'usb-bot,bus=rescue-usb.0,id=rescue-usb-bot',
                               'scsi-cd,bus=rescue-usb-bot.0,drive=disk1,'
                               'id=rescue-disk'],
            # q35: its built-in AHCI for both.
            ('disk', 'sata'): ['ide-hd,drive=disk1,id=rescue-disk,'
                               'bus=ide.0'],
            ('cdrom', 'sata'): ['ide-cd,drive=disk1,id=rescue-disk,'
                                'bus=ide.0'],
            ('disk', 'ide'): ['ide-hd,drive=disk1,id=rescue-disk,bus=ide.0'],
            ('cdrom', 'ide'): ['ide-cd,drive=disk1,id=rescue-disk,'
                               'bus=ide.0']}
        self.assertEqual(rescue_devices.DRIVER_SUPPORTED, set(expected))
        for (device, bus), devices in expected.items():
            args = self.args({'device': device, 'bus': bus})
            # The server's disk is the first device, as when not rescued.
            self.assertEqual([own] + devices, _devices(args), (device, bus))
            self.assertIn('driver=file,filename=/x/u1/disk,node-name=file0',
                          args)
            self.assertIn('driver=file,filename=/x/u1/disk.rescue,'
                          'node-name=file1', args)

    def test_pc_machine(self):
        # i440fx: PIIX IDE for ide, an AHCI of our own for sata.
        self.assertEqual(
            ['virtio-blk-pci,drive=disk0',
             'ide-cd,drive=disk1,id=rescue-disk,bus=ide.0'],
            _devices(self.args({'device': 'cdrom', 'bus': 'ide'}, 'pc')))
        self.assertEqual(
            ['virtio-blk-pci,drive=disk0', 'ich9-ahci,id=rescue-sata',
             'ide-hd,drive=disk1,id=rescue-disk,bus=rescue-sata.0'],
            _devices(self.args({'device': 'disk', 'bus': 'sata'},
                               'pc-i440fx-7.2')))

    def test_a_machine_without_ata(self):
        error = self.assertRaises(
            rescue_devices.UnsupportedRescueDevice, self.args,
            {'device': 'cdrom', 'bus': 'sata'}, 'microvm')
        self.assertIn('hw_rescue_bus=sata', error.message)
        self.assertIn('microvm', error.message)
        # virtio needs no machine's bus.
        self.assertEqual(2, len(_devices(self.args(
            {'device': 'disk', 'bus': 'virtio'}, 'microvm'))))


class _Driver(rescue.Rescue):
    host = 'h1'

    def __init__(self, guest, image):
        self.guest = guest
        self.images = mock.Mock()
        self.images.verify.return_value = image
        self._power_down = mock.Mock()
        self._start = mock.Mock()
        self.operate = mock.Mock()

    def _guest(self, uuid):
        return self.guest


class RescueRefusalTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.root = self.useFixture(fixtures.TempDir()).path
        self.guest = guest_mod.Guest('h1', 'u1', root=self.root)
        self.guest.save({'launch': {'cmdline': ''}, 'flavor': {}})
        with open(self.guest.disk, 'w'):
            pass

    def test_refused_before_the_guest_is_touched(self):
        image = {'id': 'img', 'cmdline': '',
                 'properties': {'hw_rescue_device': 'floppy'}}
        driver = _Driver(self.guest, image)
        error = self.assertRaises(rescue_devices.UnsupportedRescueDevice,
                                  driver.rescue, 'u1', {}, 'img')
        self.assertIn('hw_rescue_device=floppy', error.message)
        driver._power_down.assert_not_called()
        driver._start.assert_not_called()
        # Not ready: a start boots the server's own disk.
        self.assertFalse(self.guest.load()['rescue']['ready'])

    @mock.patch.object(rescue.shutil, 'copyfile')
    @mock.patch.object(rescue.disks, 'create_on')
    def test_the_choice_is_recorded(self, create_on, copyfile):
        driver = _Driver(self.guest, {'id': 'img', 'cmdline': 'c',
                                      'properties': {
                                          'hw_rescue_bus': 'scsi'}})
        driver.images.paths.return_value = {
            'kernel': 'k', 'initrd': 'i', 'disk': 'd'}
        driver.rescue('u1', {}, 'img')
        expected = {'image_ref': 'img', 'ready': True, 'cmdline': 'c',
                    'stable': {'device': 'disk', 'bus': 'scsi'}}
        self.assertEqual(expected, self.guest.load()['rescue'])
        # What the start (and any later one) attaches.
        self.assertEqual(expected, driver._start.call_args[0][1]['rescue'])
        driver._power_down.assert_called_once_with(self.guest, clean=False)
        create_on.assert_called_once_with('d', self.guest.path(
            'disk.rescue'))

    def test_a_machine_type_without_the_bus(self):
        self.useFixture(nm_fixtures.Override('machine', 'microvm', 'qemu'))
        driver = _Driver(self.guest, {'id': 'img', 'properties': {
            'hw_rescue_bus': 'ide'}})
        error = self.assertRaises(rescue_devices.UnsupportedRescueDevice,
                                  driver.rescue, 'u1', {}, 'img')
        self.assertIn('Rescue image img: hw_rescue_device=disk, '
                      'hw_rescue_bus=ide', error.message)
        driver._power_down.assert_not_called()
