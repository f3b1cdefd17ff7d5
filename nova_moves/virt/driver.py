"""The one interface between a compute host's handlers and its
hypervisor, as Nova's virt/driver.py. The handlers (nova_moves/compute/)
call only these methods, so nothing above this module knows whether
``[compute] driver`` is the fake or QEMU.

A guest here is a server's copy on this host. Its ``power`` is one of
'running', 'paused', 'suspended', 'shutdown'. A cold move marks the copy
it leaves behind (``left_by``: the migration) and the one it spawns
(``arrived_by``), so that a late confirm or revert destroys only its own
copy (compute RPC 1.8).

Operations carry a name (``operation``) for fault injection and the
fake's durations: ``[compute] fail_operations`` and
``operation_seconds``, or the admin test hook at run time.
"""
import os
import threading
import time

from oslo_utils import importutils

from nova_moves import conf
from nova_moves import exception
from nova_moves import states

CONF = conf.CONF
# The names [compute] operation_seconds documents for the driver calls
# whose own names are long (the disk copy of a cold move).
SHORT_NAMES = {'migrate_disk_and_power_off': 'migrate_disk'}
POWER_STATES = {'running': states.POWER_RUNNING,
                'paused': states.POWER_PAUSED,
                'suspended': states.POWER_SUSPENDED,
                'shutdown': states.POWER_SHUTDOWN}
DRIVERS = {'fake': 'nova_moves.virt.fake.FakeDriver',
           'qemu': 'nova_moves.virt.qemu.driver.QemuDriver'}


class LiveMigrationAborted(exception.NovaMovesException):
    msg_fmt = 'Live migration %(migration)s was aborted by a user.'
    code = 400


def progress(sizes, fraction):
    """A migration's progress columns ``fraction`` of the way through
    ``sizes`` (memory bytes, disk bytes)."""
    memory_total, disk_total = sizes
    memory_done = int(memory_total * fraction)
    disk_done = int(disk_total * fraction)
    return {'memory_total': memory_total,
            'memory_processed': memory_done,
            'memory_remaining': memory_total - memory_done,
            'disk_total': disk_total, 'disk_processed': disk_done,
            'disk_remaining': disk_total - disk_done}


def load_driver(host):
    """The driver ``[compute] driver`` names, for ``host``."""
    return importutils.import_class(DRIVERS[CONF.compute.driver])(host)


class ComputeDriver:
    """Fault injection and timing are shared; the guest methods are each
    driver's own."""

    # Whether a cold move's disk travels between hosts (the fake has
    # none; QEMU's is pulled by the destination from the source).
    moves_disks = False
    # Seconds an operation not in operation_seconds takes (the fake
    # simulates them; a real driver takes what it takes).
    simulated = True

    def __init__(self, host):
        self.host = host
        self._lock = threading.Lock()
        self._fail = set(self._failures_for(CONF.compute.fail_operations))
        self._seconds = {k: float(v)
                         for k, v in CONF.compute.operation_seconds.items()}
        # Operations slowed through set_fault_injection (a test's): each
        # says it runs in <host>.operating while it does, so a test can
        # kill the host in the middle of a step that records nothing
        # before its end. Overlapping ones share the marker: it goes
        # with the last of them.
        self._watched = set()
        self._operating = 0
        self._marker = os.path.join(CONF.state_path, 'fake-hypervisor',
                                    '%s.operating' % host)
        os.makedirs(os.path.dirname(self._marker), exist_ok=True)
        if os.path.exists(self._marker):  # left by a killed process
            os.unlink(self._marker)

    def _failures_for(self, entries):
        ops = set()
        for entry in entries:
            host, _, op = entry.rpartition(':')
            if not host or host == self.host:
                ops.add(op)
        return ops

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
        return CONF.compute.default_operation_seconds if self.simulated \
            else 0.0

    def injected(self, operation):
        """Whether ``operation`` is set to fail on this host (for steps a
        caller times itself, such as a live migration's transfer)."""
        with self._lock:
            return operation in self._fail

    def operate(self, operation):
        """Spend the set time of ``operation``; raise if injected."""
        delay = self.duration(operation)
        if delay and self._watched.intersection(
                (operation, SHORT_NAMES.get(operation))):
            self._mark(+1, operation)
            try:
                time.sleep(delay)
            finally:
                self._mark(-1, operation)
        elif delay:
            time.sleep(delay)
        if self.injected(operation):
            raise exception.HypervisorOperationFailed(operation=operation,
                                                      host=self.host)

    def _mark(self, step, operation):
        with self._lock:
            self._operating += step
            if step > 0:
                with open(self._marker, 'w') as f:
                    f.write(operation)
            elif not self._operating and os.path.exists(self._marker):
                os.unlink(self._marker)

    # -- guests (each driver's own) -------------------------------------------
    def guests(self):
        """{instance uuid: guest record} of every copy on this host."""
        raise NotImplementedError()

    def has_guest(self, instance_uuid):
        raise NotImplementedError()

    def power_state(self, instance_uuid):
        """Nova's power_state of the guest (NOSTATE when it is not
        here)."""
        raise NotImplementedError()

    def spawn(self, instance_uuid, flavor, operation='spawn',
              power='running', arrived_by=None, image_ref=None,
              disk_from=None):
        """Start the server here with ``flavor``. Its disk: the one this
        host already has for it (a restart, a revert), else
        ``disk_from`` (export_disk's answer on the source: a cold move),
        else a new one from ``image_ref``. ``power``: what the guest is
        once here. ``arrived_by``: the migration it is spawned for."""
        raise NotImplementedError()

    def set_power(self, instance_uuid, power, operation, require=None,
                  left_by=None):
        """Bring the guest to ``power``. ``require``: the powers it may be
        in (else GuestInvalidPower and it is left as it is).
        ``left_by``: the migration this copy stays behind for (a cold
        move's source, kept until confirmed or reverted)."""
        raise NotImplementedError()

    def reboot(self, instance_uuid, hard):
        """SOFT: a clean restart of a running guest; HARD: whatever is
        there is started again."""
        raise NotImplementedError()

    def rescue(self, instance_uuid, flavor, image_ref=None,
               server_image_ref=None):
        """Boot the guest from a rescue image with its own disk attached
        as the second disk, or, for a stable device rescue (the image's
        hw_rescue_device / hw_rescue_bus: virt/rescue_devices.py), its
        own disk first and the rescue disk after it on that bus (one the
        driver cannot attach: UnsupportedRescueDevice before the guest is
        touched); running after, whatever its power was.
        ``image_ref``: the rescue image; None (a redo after a restart, a
        re-sent cast): the one a rescue begun here recorded, else
        ``server_image_ref``. Re-entrant: a rescued guest is rescued
        again."""
        raise NotImplementedError()

    def unrescue(self, instance_uuid):
        """Boot the guest's own disk again (the rescue image's disk
        goes); running after. Re-entrant: a guest not rescued is only
        started."""
        raise NotImplementedError()

    def _record(self, instance_uuid):
        """The guest's record here (its marks among it), None if none."""
        raise NotImplementedError()

    def left_by(self, instance_uuid, mark='left_by'):
        """The migration the guest here stays behind for (``mark``
        'arrived_by': the one it was spawned for); None when it is no
        move's copy or not here ('' for a guest of a release before the
        marks: unknown)."""
        record = self._record(instance_uuid)
        if record is None:
            return None
        return record.get(mark, '')

    def destroy_left(self, instance_uuid, migration_uuid,
                     operation='destroy', mark='left_by'):
        """Destroy the copy ``migration_uuid`` left here (``mark``
        'arrived_by': spawned for), and only that one. False when there
        is no such copy here."""
        if self.left_by(instance_uuid, mark) != migration_uuid:
            return False
        return self._destroy_marked(instance_uuid, migration_uuid,
                                    operation, mark)

    def _destroy_marked(self, instance_uuid, migration_uuid, operation,
                        mark):
        raise NotImplementedError()

    def destroy(self, instance_uuid, operation='destroy'):
        raise NotImplementedError()

    # -- cold move: the disk --------------------------------------------------
    def export_disk(self, instance_uuid, migration_uuid):
        """On a cold move's source: serve the copy ``migration_uuid``
        left here to the destination; what spawn's ``disk_from`` takes
        there. None for a driver that moves no disks."""
        return None

    # -- cross-cell resize: the guest as an image -----------------------------
    # Whether snapshot_for_move works (else it raises its refusal).
    snapshots_for_move = False

    def snapshot_for_move(self, instance_uuid, migration_uuid):
        """On a cross-cell move's source, the guest powered off: its disk
        as an image the destination (another cell) spawns from; returns
        the image's id. A driver that cannot refuses before anything
        changes (the move is undone with this fault)."""
        raise exception.FeatureNotSupported(
            feature='Cross-cell resize (a snapshot of the guest by the %s '
                    'driver)' % type(self).__name__, host=self.host)

    def discard_move_snapshot(self, migration_uuid):
        """The snapshot ``migration_uuid`` made is no longer needed
        (confirmed, reverted or undone); nothing when it is gone."""

    # -- live migration -------------------------------------------------------
    def live_migration_source_data(self, instance_uuid):
        """On the source, before pre_live_migration: what the destination
        needs to receive the guest (added to migrate_data)."""
        return {}

    def pre_live_migration(self, instance_uuid, flavor, migrate_data):
        """On the destination: get ready to receive the guest. Returns
        what the source's transfer needs (added to migrate_data)."""
        self.operate('pre_live_migration')
        return {}

    def live_migrate(self, instance_uuid, migrate_data, control, sizes,
                     report):
        """On the source: copy the guest to the destination. ``control``
        (abort, force_complete events) is polled; ``report(values,
        fraction)`` is given the progress columns as they change; returns
        the final ones. Raises LiveMigrationAborted on abort (the guest
        runs on here)."""
        raise NotImplementedError()

    def rollback_live_migration_at_source(self, instance_uuid):
        """On the source after a failed or aborted migration: the guest
        runs here again, as it did before."""

    def post_live_migration_at_destination(self, instance_uuid, flavor,
                                           power):
        """On the destination once the transfer is done: the guest runs
        here (``power`` 'paused' for a paused server)."""
        raise NotImplementedError()

    def crashed(self):
        """[(instance uuid, why)] of the guests that stopped on their own
        since the last call (a QEMU process that died), each once."""
        return []

    # -- what a guest shows ---------------------------------------------------
    def console_output(self, instance_uuid, length=None):
        """The serial console's last ``length`` lines (all: None)."""
        return ''

    def diagnostics(self, instance_uuid):
        """Nova's 2.48 server diagnostics, as far as the driver knows."""
        return {}
