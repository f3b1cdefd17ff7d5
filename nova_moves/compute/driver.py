"""The fake hypervisor behind each compute host: capacity from config,
simulated durations, injectable failures, and a small state file that
stands for the host's local disks (so a restarted compute still finds
the copies it had before it died)."""
import json
import os
import threading
import time

from nova_moves import conf
from nova_moves import exception
from nova_moves import states

CONF = conf.CONF
# The names [compute] operation_seconds documents for the driver calls
# whose own names are long (the disk copy of a cold move).
SHORT_NAMES = {'migrate_disk_and_power_off': 'migrate_disk'}
# A guest's power as the state file keeps it, and Nova's power_state.
POWER_STATES = {'running': states.POWER_RUNNING,
                'paused': states.POWER_PAUSED,
                'suspended': states.POWER_SUSPENDED,
                'shutdown': states.POWER_SHUTDOWN}


class FakeDriver:

    def __init__(self, host):
        self.host = host
        self._lock = threading.Lock()
        self._fail = set(self._failures_for(CONF.compute.fail_operations))
        self._seconds = {k: float(v)
                         for k, v in CONF.compute.operation_seconds.items()}
        self._path = os.path.join(CONF.state_path, 'fake-hypervisor',
                                  '%s.json' % host)
        # Operations slowed through set_fault_injection (a test's): each
        # says it runs in <host>.operating while it does, so a test can
        # kill the host in the middle of a step that records nothing
        # before its end.
        self._watched = set()
        self._marker = self._path[:-len('.json')] + '.operating'
        if os.path.exists(self._marker):  # left by a killed process
            os.unlink(self._marker)
        os.makedirs(os.path.dirname(self._path), exist_ok=True)
        self._guests = self._load()

    def _failures_for(self, entries):
        ops = set()
        for entry in entries:
            host, _, op = entry.rpartition(':')
            if not host or host == self.host:
                ops.add(op)
        return ops

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

    # -- what the host offers -------------------------------------------------
    def node_info(self):
        c = CONF.compute
        return {'host': self.host, 'hypervisor_type': c.hypervisor_type,
                'cpu_model': c.cpu_model, 'host_ip': c.host_ip,
                'vcpus': c.vcpus, 'memory_mb': c.memory_mb,
                'disk_gb': c.disk_gb,
                'reserved_host_memory_mb': c.reserved_host_memory_mb,
                'cpu_allocation_ratio': c.cpu_allocation_ratio,
                'ram_allocation_ratio': c.ram_allocation_ratio,
                'disk_allocation_ratio': c.disk_allocation_ratio,
                'disk_provider': c.disk_provider,
                'availability_zone': c.availability_zone}

    # -- fault injection ------------------------------------------------------
    def set_fault_injection(self, fail_operations, operation_seconds=None):
        with self._lock:
            self._fail = set(self._failures_for(fail_operations or []))
            if operation_seconds is not None:
                self._seconds = {k: float(v)
                                 for k, v in operation_seconds.items()}
                self._watched = set(self._seconds)
        return {'fail_operations': sorted(self._fail),
                'operation_seconds': self._seconds}

    def duration(self, operation):
        for name in (operation, SHORT_NAMES.get(operation)):
            if name in self._seconds:
                return self._seconds[name]
        return CONF.compute.default_operation_seconds

    def injected(self, operation):
        """Whether ``operation`` is set to fail on this host (for steps a
        caller times itself, such as a live migration's transfer)."""
        with self._lock:
            return operation in self._fail

    def operate(self, operation):
        """Spend the simulated time of ``operation``; raise if injected."""
        delay = self.duration(operation)
        if delay and self._watched.intersection(
                (operation, SHORT_NAMES.get(operation))):
            with open(self._marker, 'w') as f:
                f.write(operation)
            try:
                time.sleep(delay)
            finally:
                os.unlink(self._marker)
        elif delay:
            time.sleep(delay)
        if operation in self._fail:
            raise exception.HypervisorOperationFailed(operation=operation,
                                                      host=self.host)

    # -- guests ---------------------------------------------------------------
    def guests(self):
        with self._lock:
            return dict(self._guests)

    def has_guest(self, instance_uuid):
        with self._lock:
            return instance_uuid in self._guests

    def spawn(self, instance_uuid, flavor, operation='spawn',
              power='running', arrived_by=None):
        """``power``: what the guest is once here ('paused' for a paused
        server live-migrated in). ``arrived_by``: the migration this new
        copy is for (a resize's destination: see destroy_left)."""
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
        """Nova's power_state of the guest (NOSTATE when it is not
        here)."""
        with self._lock:
            guest = self._guests.get(instance_uuid)
        return POWER_STATES.get((guest or {}).get('power'),
                                states.POWER_NOSTATE)

    def set_power(self, instance_uuid, power, operation, require=None,
                  left_by=None):
        """``require``: the powers the guest may be in (else it is left
        as it is and GuestInvalidPower raises: nothing to resume on a
        guest that is not suspended). ``left_by``: the migration this
        copy stays behind for (its source's copy, kept until the move is
        confirmed or reverted: see destroy_left)."""
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

    def left_by(self, instance_uuid, mark='left_by'):
        """The migration the guest here stays behind for (``mark``
        'arrived_by': the one it was spawned for); None when it is no
        move's copy, or when there is no guest here ('' for a guest of a
        release before the marks: unknown)."""
        with self._lock:
            guest = self._guests.get(instance_uuid)
        if guest is None:
            return None
        return guest.get(mark, '')

    def destroy_left(self, instance_uuid, migration_uuid,
                     operation='destroy', mark='left_by'):
        """Destroy the copy ``migration_uuid`` left here (``mark``
        'arrived_by': spawned here for), and only that one: a late or
        repeated confirm or revert of a move must not destroy a server
        that came back to this host since (its guest is a later move's).
        False when there is no such copy here."""
        if self.left_by(instance_uuid, mark) != migration_uuid:
            return False
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
