"""What a QEMU guest boots (virt/qemu/rescue.py): its own kernel and
disk, or, once a rescue's files are ready, the rescue image's with the
server's disk attached second. Booting it: test_qemu_guests.py."""
import testtools

from nova_moves.virt.qemu import guest as guest_mod
from nova_moves.virt.qemu import rescue


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
