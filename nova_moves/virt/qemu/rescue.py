"""Rescue on the QEMU driver (Nova's libvirt rescue): the guest is
stopped and booted again from a rescue image, a new qcow2 overlay
``disk.rescue`` on the image with the image's kernel and initrd beside
it, and the server's own ``disk`` attached as the second disk (so a
rescue system can repair it). Unrescue stops it, drops the rescue files
and boots the server's own disk again.

The record (guest.json) holds ``rescue``: the image as soon as the
rescue begins (a redo after a restart of the agent rescues from the
same one), ``ready`` once its files are made; while ready every start
of the guest boots the rescue image."""
import contextlib
import os
import shutil

from nova_moves import exception
from nova_moves.virt.qemu import disks

RESCUE_FILES = ('disk.rescue', 'rescue.kernel', 'rescue.initrd')


def boot(guest, record):
    """(kernel, initrd, cmdline, [disk paths, first the boot disk]) of
    the guest as its record says it boots now."""
    rescue = record.get('rescue') or {}
    if rescue.get('ready'):
        return (guest.path('rescue.kernel'), guest.path('rescue.initrd'),
                rescue.get('cmdline', ''),
                [guest.path('disk.rescue'), guest.disk])
    return (guest.path('kernel'), guest.path('initrd'),
            record['launch'].get('cmdline', ''), [guest.disk])


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
                'cmdline': image.get('cmdline', '')})
            self._start(guest, record)

    def unrescue(self, instance_uuid):
        guest = self._guest(instance_uuid)
        with guest.lock:
            self._record_for(guest, 'unrescue')
            self.operate('unrescue')
            self._power_down(guest, clean=False)
            self._start(guest, forget(guest))
