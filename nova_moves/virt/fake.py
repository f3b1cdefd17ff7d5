"""The fake hypervisor behind each compute host: capacity from config,
simulated durations, injectable failures (virt/driver.py), and a small
state file that stands for the host's local disks (so a restarted
compute still finds the copies it had before it died). For unit tests
and the harness at scale; ``[compute] driver = qemu`` runs real guests."""
import os
import time

from nova_moves import conf
from nova_moves import exception
from nova_moves import image_store
from nova_moves import statefile
from nova_moves.virt import driver
from nova_moves.virt import rescue_devices

CONF = conf.CONF
POWER_STATES = driver.POWER_STATES
SHORT_NAMES = driver.SHORT_NAMES
# Console lines a guest keeps (its boot and power changes).
CONSOLE_LINES = 50
# What a rescue adds to a guest's record (unrescue, reboot drop them).
RESCUE_KEYS = ('rescued', 'rescue_image', 'rescue_stable')


def _image_properties(image_ref):
    """A store image's properties (the stable rescue's hw_rescue_*); {}
    for an image the store does not have ([api] image_names' are no
    store images: the fake boots anything)."""
    try:
        return image_store.ImageStore().get(image_ref).get(
            'properties') or {}
    except (exception.ImageNotFound, OSError, ValueError):
        return {}


class FakeDriver(driver.ComputeDriver):

    def __init__(self, host):
        super().__init__(host)
        self._path = os.path.join(CONF.state_path, 'fake-hypervisor',
                                  '%s.json' % host)
        self._guests = self._load()

    # -- state file -----------------------------------------------------------
    def _load(self):
        return statefile.load(self._path)

    def _save(self):
        statefile.save(self._path, self._guests)

    # -- guests ---------------------------------------------------------------
    def guests(self):
        with self._lock:
            return dict(self._guests)

    def has_guest(self, instance_uuid):
        with self._lock:
            return instance_uuid in self._guests

    def spawn(self, instance_uuid, flavor, operation='spawn',
              power='running', arrived_by=None, image_ref=None,
              disk_from=None):
        self.operate(operation)
        size = (flavor.get('vcpus') or 1, flavor.get('memory_mb') or 0)
        # A cross-cell move's snapshot: the guest's history goes on.
        earlier = statefile.load(self._snapshot_path(image_ref)).get(
            'console', []) if image_ref and str(image_ref).startswith(
                'cross-cell-') else []
        with self._lock:
            # left_by None: no move's old copy (a guest written before
            # the mark existed has no key: unknown).
            self._guests[instance_uuid] = {
                'power': power, 'flavor': flavor['name'], 'left_by': None,
                'arrived_by': arrived_by,
                # What diagnostics and the console show.
                'size': list(size),
                'booted_at': time.time(),
                'console': earlier[-CONSOLE_LINES + 3:] + [_line(
                    '%s booted on %s (flavor %s, %s)' % (
                        instance_uuid, self.host, flavor['name'],
                        operation)),
                    _line('%d vCPU(s), %d MiB, disk vda' % size),
                    _line('login:')]}
            self._save()

    def power_state(self, instance_uuid):
        with self._lock:
            guest = self._guests.get(instance_uuid)
        return POWER_STATES.get((guest or {}).get('power'),
                                driver.states.POWER_NOSTATE)

    def set_power(self, instance_uuid, power, operation, require=None,
                  left_by=None):
        self.operate(operation)
        with self._lock:
            guest = self._guests.get(instance_uuid)
            if guest is None:
                if require:
                    raise exception.GuestInvalidPower(
                        instance_uuid=instance_uuid, host=self.host,
                        power=None, operation=operation)
                return
            if require and guest['power'] not in require:
                raise exception.GuestInvalidPower(
                    instance_uuid=instance_uuid, host=self.host,
                    power=guest['power'], operation=operation)
            if guest['power'] != power:
                # Bounded: the state file holds every guest of the host.
                guest['console'] = (guest.get('console', []) + [_line(
                    'power %s -> %s (%s)' % (guest['power'], power,
                                             operation))])[-CONSOLE_LINES:]
            guest['power'] = power
            if left_by:
                guest['left_by'] = left_by
            self._save()

    def reboot(self, instance_uuid, hard):
        self.set_power(instance_uuid, 'running',
                       'reboot_hard' if hard else 'reboot',
                       require=None if hard else ('running',))
        with self._lock:
            # Never of a rescued server (the API refuses it): what a
            # failed rescue left goes, its own disk boots.
            guest = self._guests.get(instance_uuid) or {}
            left = [guest.pop(k, None) for k in RESCUE_KEYS]
            if any(v is not None for v in left):
                self._save()

    # -- rescue: the record says so, the console shows the boot ------------
    def _guest_for(self, instance_uuid, operation):
        guest = self._guests.get(instance_uuid)
        if guest is None:
            raise exception.GuestInvalidPower(
                instance_uuid=instance_uuid, host=self.host, power=None,
                operation=operation)
        return guest

    def rescue(self, instance_uuid, flavor, image_ref=None,
               server_image_ref=None):
        with self._lock:
            guest = self._guest_for(instance_uuid, 'rescue')
            # Recorded before the time the rescue takes: a redo after a
            # restart rescues from the same image.
            image = image_ref or guest.get('rescue_image') or \
                server_image_ref
            guest['rescue_image'] = image
            self._save()
        # The QEMU driver's check, before the guest is touched: an image
        # asking for a device or bus no driver here attaches fails the
        # rescue with a fault naming the property.
        stable = rescue_devices.stable(_image_properties(image), image,
                                       'fake')
        self.operate('rescue')
        with self._lock:
            guest = self._guest_for(instance_uuid, 'rescue')
            guest.update(power='running', rescued=True,
                         rescue_stable=stable)
            where = rescue_devices.describe(stable) if stable else \
                'its own disk attached second'
            guest['console'] = (guest.get('console', []) + [
                _line('rescue: %s booted from image %s, %s' % (
                    instance_uuid, image, where)),
                _line('login:')])[-CONSOLE_LINES:]
            self._save()

    def unrescue(self, instance_uuid):
        self.operate('unrescue')
        with self._lock:
            guest = self._guest_for(instance_uuid, 'unrescue')
            for key in RESCUE_KEYS:
                guest.pop(key, None)
            guest['power'] = 'running'
            guest['console'] = (guest.get('console', []) + [
                _line('unrescue: %s booted from its own disk' %
                      instance_uuid), _line('login:')])[-CONSOLE_LINES:]
            self._save()

    def _record(self, instance_uuid):
        with self._lock:
            return self._guests.get(instance_uuid)

    def _destroy_marked(self, instance_uuid, migration_uuid, operation,
                        mark):
        self.operate(operation)
        with self._lock:
            guest = self._guests.get(instance_uuid)
            if guest is None or guest.get(mark) != migration_uuid:
                return False
            del self._guests[instance_uuid]
            self._save()
        return True

    def destroy(self, instance_uuid, operation='destroy'):
        self.operate(operation)
        with self._lock:
            if self._guests.pop(instance_uuid, None) is not None:
                self._save()

    # -- cross-cell resize: the guest's record is its image ------------------
    snapshots_for_move = True

    def _snapshot_path(self, image_id):
        return os.path.join(CONF.image.store_path, 'fake-snapshots',
                            '%s.json' % image_id)

    def snapshot_for_move(self, instance_uuid, migration_uuid):
        """The guest's record (its console: what it did) written to the
        image store, under the migration's id: a second call (a retried
        step) writes the same image."""
        self.operate('snapshot_for_move')
        with self._lock:
            guest = self._guests.get(instance_uuid)
            if guest is None:
                raise exception.GuestInvalidPower(
                    instance_uuid=instance_uuid, host=self.host, power=None,
                    operation='snapshot_for_move')
            record = dict(guest)
        image_id = 'cross-cell-%s' % migration_uuid
        path = self._snapshot_path(image_id)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        statefile.save(path, record)
        return image_id

    def discard_move_snapshot(self, migration_uuid):
        try:
            os.unlink(self._snapshot_path('cross-cell-%s' % migration_uuid))
        except FileNotFoundError:
            pass

    # -- live migration: a simulated transfer ---------------------------------
    def live_migrate(self, instance_uuid, migrate_data, control, sizes,
                     report):
        """Copy over [compute] operation_seconds live_migration;
        force-complete finishes now."""
        duration = self.duration('live_migration')
        started = time.monotonic()
        while True:
            if control.abort.is_set():
                raise driver.LiveMigrationAborted(
                    migration=migrate_data.get('migration_uuid'))
            now = time.monotonic()
            if control.force_complete.is_set() or now - started >= duration:
                break
            fraction = min(1.0, (now - started) / duration)
            report(driver.progress(sizes, fraction), fraction)
            time.sleep(min(0.05,
                           max(0.0, duration - (now - started))))
        if self.injected('live_migration'):
            raise exception.HypervisorOperationFailed(
                operation='live_migration', host=self.host)
        return driver.progress(sizes, 1.0)

    def post_live_migration_at_destination(self, instance_uuid, flavor,
                                           power):
        self.spawn(instance_uuid, flavor,
                   operation='post_live_migration_at_destination',
                   power=power)

    # -- what a guest shows ---------------------------------------------------
    def console_output(self, instance_uuid, length=None):
        with self._lock:
            lines = list((self._guests.get(instance_uuid) or {}).get(
                'console', []))
        if length is not None:
            lines = lines[-length:] if length > 0 else []
        return ''.join(line + '\n' for line in lines)

    def diagnostics(self, instance_uuid):
        """Nova 2.48's shape, sized from the flavor the guest was
        spawned with; the counters are made up, as Nova's fake's."""
        with self._lock:
            guest = dict(self._guests.get(instance_uuid) or {})
        vcpus, memory_mb = guest.get('size') or [1, 0]
        return {
            # 'libvirt' as Nova's fake says: 2.48's driver is one of a
            # closed list (libvirt, xenapi, vmwareapi, ironic, hyperv).
            'state': guest.get('power', 'shutdown'), 'driver': 'libvirt',
            'hypervisor': 'fake', 'hypervisor_os': 'fake-os',
            'uptime': int(time.time() - guest.get('booted_at', time.time())),
            'config_drive': False, 'num_cpus': vcpus, 'num_nics': 0,
            'num_disks': 1,
            'cpu_details': [{'id': i, 'time': 0, 'utilisation': 0}
                            for i in range(vcpus)],
            'nic_details': [],
            'disk_details': [{'read_bytes': 0, 'read_requests': 0,
                              'write_bytes': 0, 'write_requests': 0,
                              'errors_count': 0}],
            'memory_details': {'maximum': memory_mb, 'used': 0}}


def _line(text):
    """A console line as a serial console shows it: the time first."""
    return '[%s] %s' % (time.strftime('%Y-%m-%d %H:%M:%S'), text)
