"""Nova's stable device rescue (spec virt-rescue-stable-disk-devices,
Victoria; API 2.87), the part every driver shares: which rescue a rescue
image asks for, and whether a driver here can give it.

A rescue image with the property ``hw_rescue_device`` (disk, cdrom,
floppy, lun) or ``hw_rescue_bus`` (Nova's disk buses) asks for a stable
rescue: the server's own disks keep their addresses and the rescue disk
is attached after them, on that device and bus, and booted. Without
either, the legacy rescue (the rescue disk first, the server's second).

Nova defaults the one that is missing as its libvirt driver does
(blockinfo.get_rescue_device / get_rescue_bus): no device is a disk, no
bus is the rescue image's own bus for that device (``hw_disk_bus``,
``hw_cdrom_bus``, ``hw_floppy_bus``), else the device's default bus on
x86 (disk virtio, cdrom ide, floppy fdc; a lun has none, so scsi, the
only bus a lun is on). A value Nova does not know, or a device and
bus this project's drivers cannot attach (DRIVER_SUPPORTED), fails the
rescue before the guest is touched, with a message naming the property
and its value: the compute makes that the instance's ERROR fault (as
Nova's InstanceNotRescuable "Driver Error")."""
from nova_moves import exception

DEVICE = 'hw_rescue_device'
BUS = 'hw_rescue_bus'
PROPERTIES = (DEVICE, BUS)

# Nova's BlockDeviceType and DiskBus fields (what Nova's image meta
# accepts for these properties).
DEVICES = ('cdrom', 'disk', 'floppy', 'lun')
BUSES = ('fdc', 'ide', 'sata', 'scsi', 'usb', 'virtio', 'xen', 'lxc',
         'uml')
DEFAULT_BUS = {'disk': 'virtio', 'cdrom': 'ide', 'floppy': 'fdc',
               'lun': 'scsi'}

# What the QEMU driver attaches (virt/qemu/rescue.py has the QEMU device
# of each); the fake accepts the same, so an API flow on the fake fails
# where a real host would. WHY_NOT says why the others are not (for
# cdrom on virtio libvirt says the same).
DRIVER_SUPPORTED = {
    ('disk', 'virtio'), ('disk', 'scsi'), ('cdrom', 'scsi'),
    ('disk', 'usb'), ('cdrom', 'usb'), ('disk', 'sata'), ('cdrom', 'sata'),
    ('disk', 'ide'), ('cdrom', 'ide')}
WHY_NOT = {
    'floppy': 'a floppy drive takes images of 2.88 MB at most, the '
              'rescue disk is a whole disk',
    'lun': 'a lun passes a host SCSI device through, the rescue disk is '
           'a file',
    ('cdrom', 'virtio'): 'virtio has no CD-ROM'}


class UnsupportedRescueDevice(exception.Invalid):
    msg_fmt = ('Rescue image %(image_id)s: %(properties)s is not '
               'supported by the %(driver)s driver: %(reason)s.')


def stable(properties, image_id, driver):
    """{'device', 'bus'} of a stable rescue the image ``properties``
    ask for, None for a legacy rescue; UnsupportedRescueDevice (its
    message names the properties and values) for one that cannot be
    given here."""
    properties = properties or {}
    if not any(properties.get(key) for key in PROPERTIES):
        return None
    # What the image set, in the order it is shown in a refusal.
    shown = []

    def value(key, default):
        if properties.get(key):
            shown.append('%s=%s' % (key, properties[key]))
            return properties[key]
        return default

    def refuse(reason):
        raise UnsupportedRescueDevice(
            image_id=image_id, properties=', '.join(shown), driver=driver,
            reason=reason)

    device = value(DEVICE, 'disk')
    if device not in DEVICES:
        refuse('%s is one of %s' % (DEVICE, ', '.join(DEVICES)))
    bus = value(BUS, None) or value('hw_%s_bus' % device,
                                    DEFAULT_BUS[device])
    if bus not in BUSES:
        refuse('a bus is one of %s' % ', '.join(BUSES))
    if (device, bus) not in DRIVER_SUPPORTED:
        why = WHY_NOT.get(device) or WHY_NOT.get((device, bus)) or \
            'no QEMU device for it here'
        refuse('a rescue %s on bus %s: %s (supported device/bus: %s)' % (
            device, bus, why, ', '.join(
                '%s/%s' % pair for pair in sorted(DRIVER_SUPPORTED))))
    return {'device': device, 'bus': bus}


def guest_name(choice):
    """The name a Linux guest gives the rescue disk: after the server's
    own vda on virtio; else the first of its kind (libata and the SCSI
    layer name disks sd*, CD-ROMs sr*)."""
    if choice['device'] == 'cdrom':
        return 'sr0'
    return 'vdb' if choice['bus'] == 'virtio' else 'sda'


def describe(choice):
    """Where the rescue disk is, for a console line or a log."""
    return 'stable rescue: the rescue %s on bus %s (%s), after its own ' \
        'disk vda' % (choice['device'], choice['bus'], guest_name(choice))
