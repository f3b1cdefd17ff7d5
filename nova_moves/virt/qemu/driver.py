"""The QEMU compute driver ([compute] driver = qemu): each server is one
daemonized QEMU process on this host, driven over QMP. A restarted agent
re-attaches to the processes it finds in <instances_path>; a killed one
leaves them running. Moves: virt/qemu/migration.py (live) and
virt/qemu/disks.py (a cold move's disk, pulled by the destination over
NBD from the source), virt/qemu/move_snapshot.py (a cross-cell move's,
through the image store)."""
import contextlib
import os
import shutil
import time

from oslo_log import log as logging

from nova_moves import conf
from nova_moves import exception
from nova_moves import image_store
from nova_moves import states
from nova_moves.virt import driver
from nova_moves.virt.qemu import accel
from nova_moves.virt.qemu import disks
from nova_moves.virt.qemu import guest as guest_mod
from nova_moves.virt.qemu import migration
from nova_moves.virt.qemu import move_snapshot
from nova_moves.virt.qemu import rescue as rescue_mod

CONF = conf.CONF
LOG = logging.getLogger(__name__)
QemuFailed = guest_mod.QemuFailed
# QEMU's run states a guest counts as paused in (Nova's power_state).
PAUSED = ('paused', 'postmigrate', 'inmigrate', 'prelaunch',
          'finish-migrate', 'suspended', 'restore-vm', 'save-vm')


class QemuDriver(migration.LiveMigration, rescue_mod.Rescue,
                 move_snapshot.MoveSnapshot, driver.ComputeDriver):
    moves_disks = True
    simulated = False

    def __init__(self, host):
        super().__init__(host)
        self.root = guest_mod.instances_path(host)
        os.makedirs(self.root, exist_ok=True)
        self.accel = accel.Accelerator()
        self.images = image_store.ImageStore()
        self._guests = {}

    def _guest(self, instance_uuid):
        with self._lock:
            guest = self._guests.get(instance_uuid)
            if guest is None:
                guest = guest_mod.Guest(self.host, instance_uuid)
                self._guests[instance_uuid] = guest
            return guest

    # -- what the host offers -------------------------------------------------
    def node_info(self):
        info = super().node_info()
        if CONF.qemu.report_host_capacity:
            st = os.statvfs(self.root)
            info.update(
                vcpus=os.cpu_count() or 1,
                memory_mb=os.sysconf('SC_PAGE_SIZE') *
                os.sysconf('SC_PHYS_PAGES') // (1024 * 1024),
                disk_gb=st.f_blocks * st.f_frsize // (1024 ** 3))
        return info

    # -- guests ---------------------------------------------------------------
    def guests(self):
        out = {}
        with contextlib.suppress(FileNotFoundError):
            for name in os.listdir(self.root):
                record = self._guest(name).load()
                if record is not None:
                    out[name] = dict(record, power=self._power(name))
        return out

    def has_guest(self, instance_uuid):
        return self._guest(instance_uuid).exists()

    def _power(self, instance_uuid):
        guest = self._guest(instance_uuid)
        status = guest.status()
        if status is None:
            return 'suspended' if os.path.exists(
                guest.path('suspend.state')) else 'shutdown'
        return 'paused' if status in PAUSED else 'running'

    def power_state(self, instance_uuid):
        if not self.has_guest(instance_uuid):
            return states.POWER_NOSTATE
        return driver.POWER_STATES[self._power(instance_uuid)]

    # -- spawn ----------------------------------------------------------------
    def spawn(self, instance_uuid, flavor, operation='spawn',
              power='running', arrived_by=None, image_ref=None,
              disk_from=None):
        self.operate(operation)
        guest = self._guest(instance_uuid)
        with guest.lock:
            record = guest.load()
            new = record is None or not os.path.exists(guest.disk)
            if not new and guest.running():
                guest.kill()  # a restart with this flavor (a revert)
            try:
                shelved = image_store.shelve_snapshot_id(instance_uuid)
                if disk_from:
                    if not new:
                        guest.remove()
                    launch = disks.pull(self, guest, disk_from)
                elif new and operation == 'unshelve' and \
                        self._has_image(shelved):
                    launch = self._disk_from_image(guest, shelved, copy=True)
                elif new:
                    # A cross-cell move's snapshot goes at confirm or
                    # revert: a whole copy, as unshelve's.
                    launch = self._disk_from_image(
                        guest, image_ref, copy=operation ==
                        'finish_snapshot_based_resize_at_dest')
                else:
                    launch = record['launch']
                disks.grow(guest, flavor)
                record = {'uuid': instance_uuid, 'flavor': _flavor(flavor),
                          'launch': launch, 'left_by': None,
                          'arrived_by': arrived_by}
                guest.save(record)
                if power in ('running', 'paused'):
                    self._start(guest, record, paused=power == 'paused')
                if operation == 'unshelve':
                    self.images.discard(shelved)
            except Exception:
                if new or disk_from:
                    guest.kill()
                    guest.remove()
                raise

    def _has_image(self, image_id):
        try:
            self.images.get(image_id)
        except exception.ImageNotFound:
            return False
        return True

    def _disk_from_image(self, guest, image_ref, copy=False):
        """A new disk: qcow2 on the image's base (``copy``: a whole copy,
        for a shelve or cross-cell move's snapshot, which goes once
        unshelved, confirmed or reverted), with its kernel
        and initrd copied beside it (a server outlives its image)."""
        if not image_ref:
            raise exception.ImageNotFound(image_id=image_ref)
        image = self.images.verify(image_ref)
        paths = self.images.paths(image_ref)
        os.makedirs(guest.dir, exist_ok=True)
        for name in ('kernel', 'initrd'):
            shutil.copyfile(paths[name], guest.path(name))
        if copy:
            disks.copy(paths['disk'], guest)
        else:
            disks.create_on(paths['disk'], guest.disk)
        base = image.get('properties', {}).get('base_image_ref') or \
            image.get('base_image_ref') or image_ref
        return {'image_ref': base if copy else image_ref,
                'cmdline': image.get('cmdline', '')}

    def _start(self, guest, record, paused=False, incoming=False):
        disks.stop_export(guest)
        argv = self._argv(guest, record)
        if paused or incoming:
            argv.append('-S')
        if incoming:
            argv += ['-incoming', 'defer']
        guest.launch(argv)
        # Running from now on unless this driver stops it: a process
        # that exits otherwise has crashed (crashed()).
        guest.update(expected='running')

    def _argv(self, guest, record):
        flavor = record['flavor']
        # A rescued guest boots the rescue image, its disk second, or
        # for a stable rescue the rescue disk after it on its own bus
        # (virt/qemu/rescue.py).
        kernel, initrd, extra, disk_args = rescue_mod.disk_args(
            guest, record, CONF.qemu.machine)
        accel_name = self.accel.for_kernel(kernel)
        cmdline = ' '.join(x for x in ('console=ttyS0 panic=-1', extra)
                           if x)
        return [
            CONF.qemu.binary, '-name', 'guest=%s' % guest.uuid,
            '-machine', '%s,accel=%s' % (CONF.qemu.machine, accel_name),
            '-cpu', CONF.qemu.cpu_mode,
            '-m', str(flavor['memory_mb']), '-smp', str(flavor['vcpus']),
            '-nodefaults', '-no-user-config', '-display', 'none',
            '-kernel', kernel, '-initrd', initrd, '-append', cmdline,
        ] + disk_args + [
            '-chardev', 'file,id=serial0,path=%s,append=on' % guest.console,
            '-serial', 'chardev:serial0',
            '-qmp', 'unix:%s,server=on,wait=off' % guest.qmp_path,
            '-daemonize', '-pidfile', guest.path('qemu.pid')]

    # -- power ----------------------------------------------------------------
    def set_power(self, instance_uuid, power, operation, require=None,
                  left_by=None):
        self.operate(operation)
        guest = self._guest(instance_uuid)
        with guest.lock:
            record = guest.load()
            if record is None:
                if require:
                    raise exception.GuestInvalidPower(
                        instance_uuid=instance_uuid, host=self.host,
                        power=None, operation=operation)
                return
            current = self._power(instance_uuid)
            if require and current not in require:
                raise exception.GuestInvalidPower(
                    instance_uuid=instance_uuid, host=self.host,
                    power=current, operation=operation)
            if current != power:
                self._power_to(guest, record, current, power)
            if left_by:
                guest.update(left_by=left_by)

    def _power_to(self, guest, record, current, power):
        if power == 'shutdown':
            if current == 'suspended':
                os.unlink(guest.path('suspend.state'))
            else:
                self._power_down(guest, clean=current == 'running')
        elif power == 'paused':
            guest.qmp('stop')
        elif power == 'suspended':
            migration.save_state(guest)
        elif current == 'paused':
            guest.qmp('cont')
        elif current == 'suspended':
            migration.restore_state(self, guest, record)
        else:
            self._start(guest, record)

    def _power_down(self, guest, clean=True):
        """ACPI power-down, [qemu] shutdown_timeout to take effect, then
        the process is stopped (Nova's clean shutdown)."""
        pid = guest.pid()
        guest.update(expected='stopped')
        if pid is None:
            return
        timeout = CONF.qemu.shutdown_timeout if clean else 0
        if timeout:
            with contextlib.suppress(Exception):
                guest.qmp('system_powerdown')
            if guest.wait_exit(pid, timeout):
                return
            LOG.info('%s did not power down in %ss; stopping it',
                     guest.uuid, timeout)
        guest.kill()

    def reboot(self, instance_uuid, hard):
        """SOFT: a clean power-down, then started again (as Nova's
        libvirt); HARD: stopped and started again, whatever its state."""
        operation = 'reboot_hard' if hard else 'reboot'
        self.operate(operation)
        guest = self._guest(instance_uuid)
        with guest.lock:
            record = guest.load()
            if record is None:
                raise exception.GuestInvalidPower(
                    instance_uuid=instance_uuid, host=self.host, power=None,
                    operation=operation)
            current = self._power(instance_uuid)
            if not hard and current != 'running':
                raise exception.GuestInvalidPower(
                    instance_uuid=instance_uuid, host=self.host,
                    power=current, operation=operation)
            self._power_down(guest, clean=not hard)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(guest.path('suspend.state'))
            # A reboot is never of a rescued server (the API refuses it):
            # what a failed rescue or unrescue left goes, its own disk
            # boots (Nova's hard reboot out of ERROR).
            record = rescue_mod.forget(guest)
            self._start(guest, record)

    def crashed(self):
        out = []
        try:
            names = os.listdir(self.root)
        except FileNotFoundError:
            names = []
        for instance_uuid in names:
            guest = self._guest(instance_uuid)
            with guest.lock:
                record = guest.load() or {}
                if record.get('expected') != 'running' or guest.running():
                    continue
                guest.update(expected='crashed')
            out.append((instance_uuid, 'its QEMU process exited: %s' % (
                guest.log_tail() or 'no message')))
        return out

    # -- the marks of a cold move ---------------------------------------------
    def _record(self, instance_uuid):
        return self._guest(instance_uuid).load()

    def _destroy_marked(self, instance_uuid, migration_uuid, operation,
                        mark):
        self.operate(operation)
        guest = self._guest(instance_uuid)
        with guest.lock:
            record = guest.load()
            if record is None or record.get(mark) != migration_uuid:
                return False
            self._remove(guest)
        return True

    def destroy(self, instance_uuid, operation='destroy'):
        self.operate(operation)
        guest = self._guest(instance_uuid)
        with guest.lock:
            if operation == 'shelve_offload':
                self._snapshot_for_shelve(guest)
            self._remove(guest)

    def _snapshot_for_shelve(self, guest):
        """Nova's shelve uploads the disk as an image and unshelve boots
        from it: the disk goes into the image store before the server's
        files go (a failure keeps them: nothing is lost)."""
        record = guest.load()
        if record is None or not os.path.exists(guest.disk):
            return
        if guest.running():
            self._power_down(guest)
        image_id = image_store.shelve_snapshot_id(guest.uuid)
        self.images.discard(image_id)  # a shelve before, not unshelved
        self.images.snapshot('%s-shelved' % guest.uuid, guest.disk,
                             record['launch']['image_ref'],
                             image_id=image_id)

    def _remove(self, guest):
        disks.stop_export(guest)
        guest.kill()
        guest.remove()

    def export_disk(self, instance_uuid, migration_uuid):
        guest = self._guest(instance_uuid)
        with guest.lock:
            record = guest.load()
            if record is None or record.get('left_by') != migration_uuid:
                return None  # no copy of this move here (stale)
            if guest.running():
                raise QemuFailed(instance_uuid=instance_uuid, host=self.host,
                                 reason='its disk is in use (the guest '
                                        'runs): not exported')
            return disks.export(self, guest, record)

    # -- what a guest shows ---------------------------------------------------
    def console_output(self, instance_uuid, length=None):
        guest = self._guest(instance_uuid)
        try:
            with open(guest.console, 'rb') as f:
                text = f.read().decode('utf-8', 'replace')
        except FileNotFoundError:
            return ''
        if length is None:
            return text
        lines = text.splitlines(True)
        return ''.join(lines[-length:]) if length else ''

    def diagnostics(self, instance_uuid):
        """Nova's 2.48 diagnostics from QMP (what QEMU itself knows)."""
        guest = self._guest(instance_uuid)
        record = guest.load() or {}
        flavor = record.get('flavor') or {}
        out = {'state': {'running': 'running', 'paused': 'paused',
                         'suspended': 'suspended'}.get(
                             self._power(instance_uuid), 'shutdown'),
               # Nova's 2.48 names drivers from a closed list (no
               # bare QEMU); libvirt with virt_type=qemu is this one.
               'driver': 'libvirt', 'hypervisor': 'qemu',
               'hypervisor_os': 'linux', 'config_drive': False,
               'num_cpus': flavor.get('vcpus', 0),
               'num_nics': 0, 'num_disks': 1,
               'memory_details': {'maximum': flavor.get('memory_mb', 0),
                                  'used': 0},
               'uptime': None, 'cpu_details': [], 'nic_details': [],
               'disk_details': []}
        if not guest.running():
            return out
        with contextlib.suppress(Exception):
            out['cpu_details'] = [
                {'id': cpu.get('cpu-index'), 'time': None,
                 'utilisation': None}
                for cpu in guest.qmp('query-cpus-fast')]
            stats = guest.qmp('query-blockstats')
            out['disk_details'] = [
                {'read_bytes': s['stats']['rd_bytes'],
                 'read_requests': s['stats']['rd_operations'],
                 'write_bytes': s['stats']['wr_bytes'],
                 'write_requests': s['stats']['wr_operations'],
                 'errors_count': s['stats'].get('failed_rd_operations', 0) +
                 s['stats'].get('failed_wr_operations', 0)}
                for s in stats if s.get('node-name') == 'disk0' or
                s.get('qdev')]
            balloon = None
            with contextlib.suppress(Exception):
                balloon = guest.qmp('query-balloon')
            if balloon:
                out['memory_details']['used'] = \
                    balloon['actual'] // (1024 * 1024)
            out['uptime'] = int(time.time() - os.stat(
                guest.path('qemu.pid')).st_mtime)
        return out


def _flavor(flavor):
    return {'name': flavor.get('name'), 'vcpus': flavor.get('vcpus') or 1,
            'memory_mb': flavor.get('memory_mb') or 128,
            'root_gb': flavor.get('root_gb') or 0}


