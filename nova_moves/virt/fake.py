"""The fake hypervisor behind each compute host: capacity from config,
simulated durations, injectable failures (virt/driver.py), and a small
state file that stands for the host's local disks (so a restarted
compute still finds the copies it had before it died). For unit tests
and the harness at scale; ``[compute] driver = qemu`` runs real guests."""
import json
import os
import time

from nova_moves import conf
from nova_moves import exception
from nova_moves.virt import driver

CONF = conf.CONF
POWER_STATES = driver.POWER_STATES
SHORT_NAMES = driver.SHORT_NAMES


class FakeDriver(driver.ComputeDriver):

    def __init__(self, host):
        super().__init__(host)
        self._path = os.path.join(CONF.state_path, 'fake-hypervisor',
                                  '%s.json' % host)
        self._guests = self._load()

    # -- state file -----------------------------------------------------------
    def _load(self):
        try:
            with open(self._path) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}

    def _save(self):
        tmp = self._path + '.tmp'
        with open(tmp, 'w') as f:
            json.dump(self._guests, f)
        os.replace(tmp, self._path)

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
        with self._lock:
            # left_by None: no move's old copy (a guest written before
            # the mark existed has no key: unknown).
            self._guests[instance_uuid] = {'power': power,
                                           'flavor': flavor['name'],
                                           'left_by': None,
                                           'arrived_by': arrived_by}
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
            guest['power'] = power
            if left_by:
                guest['left_by'] = left_by
            self._save()

    def reboot(self, instance_uuid, hard):
        self.set_power(instance_uuid, 'running',
                       'reboot_hard' if hard else 'reboot',
                       require=None if hard else ('running',))

    def left_by(self, instance_uuid, mark='left_by'):
        with self._lock:
            guest = self._guests.get(instance_uuid)
        if guest is None:
            return None
        return guest.get(mark, '')

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

    def console_output(self, instance_uuid, length=None):
        return ''
