"""Rescue on the QEMU driver (Nova's libvirt rescue): the guest is
stopped and booted again from a rescue image, a new qcow2 overlay
``disk.rescue`` on the image with the image's kernel and initrd beside
it, and the server's own ``disk`` attached as the second disk (so a
rescue system can repair it). Unrescue stops it, drops the rescue files
and boots the server's own disk again.

Stable device rescue (virt/rescue_devices.py: the image has
``hw_rescue_device`` or ``hw_rescue_bus``): the server's disk stays the
first virtio-blk device, at the PCI slot it always has, and the rescue
disk comes after it on the device and bus asked for (DEVICES below);
the guest still boots the rescue image's kernel and initrd.

The record (guest.json) holds ``rescue``: the image as soon as the
rescue begins (a redo after a restart of the agent rescues from the
same one), ``ready`` once its files are made, and ``stable`` (the
device and bus, None for legacy) so every start of the guest attaches
the rescue disk the same way; while ready every start of the guest
boots the rescue image."""
import contextlib
import os
import shutil

from nova_moves import conf
from nova_moves import exception
from nova_moves.virt.qemu import disks
from nova_moves.virt import rescue_devices

# The rescue disk's QEMU devices, after the server's own: a controller
# of our own where the bus needs one (given an id, so the disk names its
# bus), then the disk. {drive} is the rescue disk's block node.
DEVICES = {
    ('disk', 'virtio'): ['virtio-blk-pci,drive={drive},id=rescue-disk'],
    ('disk', 'scsi'): ['virtio-scsi-pci,id=rescue-scsi',
                       'scsi-hd,bus=rescue-scsi.0,drive={drive},'
                       'id=rescue-disk'],
    ('cdrom', 'scsi'): ['virtio-scsi-pci,id=rescue-scsi',
                        'scsi-cd,bus=rescue-scsi.0,drive={drive},'
                        'id=rescue-disk'],
    ('disk', 'usb'): ['qemu-xhci,id=rescue-usb',
                      'usb-storage,bus=rescue-usb.0,drive={drive},'
                      'id=rescue-disk'],
    # usb-storage is a disk only: a USB CD-ROM is a bulk-only transport
    # with a SCSI CD-ROM behind it.
    ('cdrom', 'usb'): ['qemu-xhci,id=rescue-usb',
                       'usb-bot,bus=rescue-usb.0,id=rescue-usb-bot',
                       'scsi-cd,bus=rescue-usb-bot.0,drive={drive},'
                       'id=rescue-disk'],
}
# IDE and SATA: the machine's own controller. q35 has no IDE controller,
# its ICH9 AHCI is built in (its ports are buses ide.0 to ide.5), so ide
# means that AHCI there; pc (i440fx) has PIIX IDE (ide.0, ide.1) and no
# AHCI, so sata adds an ich9-ahci.
ATA = {'disk': 'ide-hd', 'cdrom': 'ide-cd'}


def _family(machine):
    if 'q35' in machine:
        return 'q35'
    if machine == 'pc' or machine.startswith('pc-'):
        return 'pc'
    return None


def devices(choice, drive, machine, image_id=''):
    """The -device values that attach the stable rescue disk
    ``choice`` (rescue_devices.stable()) on block node ``drive``;
    UnsupportedRescueDevice if ``machine`` cannot have it."""
    pair = (choice['device'], choice['bus'])
    if pair in DEVICES:
        return [d.format(drive=drive) for d in DEVICES[pair]]
    family = _family(machine)
    if pair in rescue_devices.DRIVER_SUPPORTED and family:
        disk = '%s,drive=%s,id=rescue-disk' % (ATA[choice['device']], drive)
        if choice['bus'] == 'sata' and family == 'pc':
            return ['ich9-ahci,id=rescue-sata', disk + ',bus=rescue-sata.0']
        return [disk + ',bus=ide.0']
    raise rescue_devices.UnsupportedRescueDevice(
        image_id=image_id, properties='%s=%s, %s=%s' % (
            rescue_devices.DEVICE, choice['device'], rescue_devices.BUS,
            choice['bus']), driver='qemu',
        reason='machine type %s has no IDE or AHCI bus' % machine)

CONF = conf.CONF
RESCUE_FILES = ('disk.rescue', 'rescue.kernel', 'rescue.initrd')


def boot(guest, record):
    """(kernel, initrd, cmdline, [disk paths in the order they are
    attached]) of the guest as its record says it boots now: legacy
    rescue the rescue disk first, stable rescue the server's."""
    rescue = record.get('rescue') or {}
    if rescue.get('ready'):
        paths = [guest.path('disk.rescue'), guest.disk]
        if rescue.get('stable'):
            paths.reverse()
        return (guest.path('rescue.kernel'), guest.path('rescue.initrd'),
                rescue.get('cmdline', ''), paths)
    return (guest.path('kernel'), guest.path('initrd'),
            record['launch'].get('cmdline', ''), [guest.disk])


def disk_args(guest, record, machine):
    """(kernel, initrd, cmdline, the -blockdev and -device arguments of
    the guest's disks): each a virtio-blk-pci device in boot()'s order,
    but for a stable rescue's rescue disk, last, on its own bus."""
    kernel, initrd, cmdline, paths = boot(guest, record)
    rescue = record.get('rescue') or {}
    stable = rescue.get('stable') if rescue.get('ready') else None
    args = []
    for i, path in enumerate(paths):
        args += [
            '-blockdev', 'driver=file,filename=%s,node-name=file%d' % (
                path, i),
            '-blockdev', 'driver=qcow2,file=file%d,node-name=disk%d' % (
                i, i)]
        if stable and i == len(paths) - 1:
            for device in devices(stable, 'disk%d' % i, machine):
                args += ['-device', device]
        else:
            args += ['-device', 'virtio-blk-pci,drive=disk%d' % i]
    return kernel, initrd, cmdline, args


def _remove_files(guest):
    for name in RESCUE_FILES:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(guest.path(name))


def forget(guest):
    """The record without a rescue (its files gone)."""
    record = guest.load()
    if record.pop('rescue', None) is not None:
        guest.save(record)
    _remove_files(guest)
    return record


class Rescue:
    """The QemuDriver's rescue and unrescue (a mixin: it uses the
    driver's _guest, _power_down, _start and images)."""

    def _stable_choice(self, image):
        """The image's stable rescue, None for legacy; checked against
        this host's machine type before the guest is touched."""
        choice = rescue_devices.stable(image.get('properties'), image['id'],
                                       'qemu')
        if choice:
            devices(choice, 'disk1', CONF.qemu.machine, image['id'])
        return choice

    def _record_for(self, guest, operation):
        record = guest.load()
        if record is None or not os.path.exists(guest.disk):
            raise exception.GuestInvalidPower(
                instance_uuid=guest.uuid, host=self.host, power=None,
                operation=operation)
        return record

    def rescue(self, instance_uuid, flavor, image_ref=None,
               server_image_ref=None):
        guest = self._guest(instance_uuid)
        with guest.lock:
            record = self._record_for(guest, 'rescue')
            image_ref = image_ref or (record.get('rescue') or {}).get(
                'image_ref') or server_image_ref
            if not image_ref:
                raise exception.ImageNotFound(image_id=image_ref)
            # The image first: a redo after a restart uses it again.
            guest.update(rescue={'image_ref': image_ref, 'ready': False})
            self.operate('rescue')
            image = self.images.verify(image_ref)
            # An unsupported device or bus fails here, the guest as it
            # was (the compute makes the rescue ERROR with this fault).
            stable = self._stable_choice(image)
            paths = self.images.paths(image_ref)
            # Nova's rescue destroys the running domain (no clean
            # shutdown): the disk is attached to the rescue boot next.
            self._power_down(guest, clean=False)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(guest.path('suspend.state'))
            _remove_files(guest)  # a new rescue disk each time (Nova's)
            for name in ('kernel', 'initrd'):
                shutil.copyfile(paths[name], guest.path('rescue.' + name))
            disks.create_on(paths['disk'], guest.path('disk.rescue'))
            record = guest.update(rescue={
                'image_ref': image_ref, 'ready': True,
                'cmdline': image.get('cmdline', ''), 'stable': stable})
            self._start(guest, record)

    def unrescue(self, instance_uuid):
        guest = self._guest(instance_uuid)
        with guest.lock:
            self._record_for(guest, 'unrescue')
            self.operate('unrescue')
            self._power_down(guest, clean=False)
            self._start(guest, forget(guest))
