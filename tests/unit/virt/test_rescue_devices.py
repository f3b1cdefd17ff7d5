"""Which rescue a rescue image asks for (virt/rescue_devices.py): none
of hw_rescue_device / hw_rescue_bus is the legacy rescue; either is a
stable one, the other defaulted as Nova's libvirt driver does; a value
Nova does not know, or one no driver here attaches, is refused with a
message naming the property and its value."""
import testtools

from nova_moves.virt import rescue_devices as rd


class StableRescueChoiceTest(testtools.TestCase):

    def choose(self, **properties):
        return rd.stable(properties, 'img', 'qemu')

    def refused(self, **properties):
        return self.assertRaises(rd.UnsupportedRescueDevice, self.choose,
                                 **properties).message

    def test_no_property_is_the_legacy_rescue(self):
        self.assertIsNone(self.choose())
        self.assertIsNone(rd.stable(None, 'img', 'qemu'))
        self.assertIsNone(self.choose(hw_rescue_bus='', other='x'))

    def test_the_missing_one_defaults_as_nova(self):
        self.assertEqual({'device': 'disk', 'bus': 'virtio'},
                         self.choose(hw_rescue_bus='virtio'))
        self.assertEqual({'device': 'disk', 'bus': 'virtio'},
                         self.choose(hw_rescue_device='disk'))
        self.assertEqual({'device': 'cdrom', 'bus': 'ide'},
                         self.choose(hw_rescue_device='cdrom'))
        self.assertEqual({'device': 'disk', 'bus': 'usb'},
                         self.choose(hw_rescue_bus='usb'))
        self.assertEqual({'device': 'cdrom', 'bus': 'scsi'},
                         self.choose(hw_rescue_device='cdrom',
                                     hw_rescue_bus='scsi'))

    def test_the_image_own_bus_for_the_device_is_the_default(self):
        # Nova's get_rescue_bus: the rescue image's hw_<device>_bus.
        self.assertEqual({'device': 'cdrom', 'bus': 'scsi'},
                         self.choose(hw_rescue_device='cdrom',
                                     hw_cdrom_bus='scsi'))
        self.assertEqual({'device': 'disk', 'bus': 'sata'},
                         self.choose(hw_rescue_device='disk',
                                     hw_disk_bus='sata'))
        # hw_rescue_bus wins; hw_disk_bus alone is no stable rescue.
        self.assertEqual({'device': 'disk', 'bus': 'usb'},
                         self.choose(hw_rescue_bus='usb',
                                     hw_disk_bus='sata'))
        self.assertIsNone(self.choose(hw_disk_bus='sata'))
        message = self.refused(hw_rescue_device='cdrom',
                               hw_cdrom_bus='virtio')
        self.assertIn('hw_rescue_device=cdrom, hw_cdrom_bus=virtio',
                      message)

    def test_unknown_values_name_the_property(self):
        message = self.refused(hw_rescue_bus='nvme')
        self.assertIn('hw_rescue_bus=nvme', message)
        self.assertIn('Rescue image img', message)
        self.assertIn('qemu driver', message)
        self.assertIn('hw_rescue_device=tape',
                      self.refused(hw_rescue_device='tape'))

    def test_combinations_no_driver_attaches(self):
        for properties, why in (
                ({'hw_rescue_device': 'floppy'}, '2.88 MB'),
                ({'hw_rescue_device': 'lun'}, 'host SCSI device'),
                ({'hw_rescue_device': 'cdrom', 'hw_rescue_bus': 'virtio'},
                 'virtio has no CD-ROM'),
                ({'hw_rescue_bus': 'xen'}, 'no QEMU device'),
                ({'hw_rescue_bus': 'fdc'}, 'no QEMU device')):
            message = self.refused(**properties)
            for key, value in properties.items():
                self.assertIn('%s=%s' % (key, value), message)
            self.assertIn(why, message)

    def test_what_the_guest_calls_it(self):
        self.assertEqual('vdb', rd.guest_name({'device': 'disk',
                                               'bus': 'virtio'}))
        self.assertEqual('sda', rd.guest_name({'device': 'disk',
                                               'bus': 'sata'}))
        self.assertEqual('sr0', rd.guest_name({'device': 'cdrom',
                                               'bus': 'usb'}))
        self.assertIn('bus virtio (vdb), after its own disk vda',
                      rd.describe({'device': 'disk', 'bus': 'virtio'}))
