"""Live migration between two QEMU processes (as libvirt drives it) and
the suspend/resume that saves a guest's state to a file.

Destination (pre_live_migration): a QEMU started paused with
``-incoming defer``, listening for the memory on a TCP port and, for a
disk that is not shared, serving a new disk of the same size over NBD.
Source (live_migrate): the disk mirrored onto that NBD export
(blockdev-mirror, write-blocking once in sync, so the copy is exact at
the switch-over), then ``migrate``; progress from query-migrate and the
mirror job; abort = migrate_cancel and the mirror cancelled (the guest
runs on here); force-complete = post-copy when permitted, else the guest
paused until the rest is copied. Then the destination continues the
guest (post_live_migration_at_destination)."""
import contextlib
import os
import shutil
import time

from oslo_log import log as logging

from nova_moves import conf
from nova_moves import exception
from nova_moves.virt import driver
from nova_moves.virt.qemu import disks
from nova_moves.virt.qemu import guest as guest_mod

CONF = conf.CONF
LOG = logging.getLogger(__name__)
POLL = 0.1
MIB = 1024 * 1024
UNLIMITED_MIB = 1024 * 1024  # 1 TiB/s
ACTIVE = ('setup', 'active', 'postcopy-active', 'postcopy-paused',
          'postcopy-recover', 'pre-switchover', 'device', 'wait-unplug')


class MigrationTimedOut(exception.NovaMovesException):
    msg_fmt = ('Live migration %(migration)s did not complete in '
               '%(seconds)ds ([qemu] live_migration_completion_timeout): '
               'aborted, the server runs on its source.')
    code = 500


def downtime_steps(data_gib):
    """[(after seconds, max downtime ms)]: Nova's libvirt steps, from a
    tenth of [qemu] live_migration_downtime up to it, one step every
    live_migration_downtime_delay seconds per GiB."""
    downtime = CONF.qemu.live_migration_downtime
    steps = CONF.qemu.live_migration_downtime_steps
    delay = int(CONF.qemu.live_migration_downtime_delay * data_gib)
    base = downtime / steps
    offset = (downtime - base) / steps
    return [(delay * i, int(base + offset * i)) for i in range(steps + 1)]


def save_state(guest):
    """Suspend: the guest's state into suspend.state, then QEMU stops
    (libvirt's managed save)."""
    guest.update(expected='stopped')
    guest.qmp('stop')
    target = guest.path('suspend.state')
    guest.qmp('migrate', uri='exec:cat > %s' % _quoted(target))
    _wait_migrated(guest, 'suspend')
    guest.kill()


def restore_state(drv, guest, record):
    """Resume: a new QEMU loads suspend.state and continues."""
    drv._start(guest, record, incoming=True)
    source = guest.path('suspend.state')
    guest.qmp('migrate-incoming', uri='exec:cat %s' % _quoted(source))
    _wait_migrated(guest, 'resume')
    guest.qmp('cont')
    os.unlink(source)


def _quoted(path):
    return "'%s'" % path.replace("'", "'\\''")


def _wait_migrated(guest, what, timeout=600):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = guest.qmp('query-migrate').get('status')
        if status == 'completed':
            return
        if status in ('failed', 'cancelled'):
            raise guest_mod.QemuFailed(
                instance_uuid=guest.uuid, host=guest.host,
                reason='%s: migration %s' % (what, status))
        time.sleep(POLL)
    raise guest_mod.QemuFailed(instance_uuid=guest.uuid, host=guest.host,
                               reason='%s timed out' % what)


class LiveMigration:
    """The QEMU driver's live migration (a mixin of QemuDriver)."""

    def live_migration_source_data(self, instance_uuid):
        guest = self._guest(instance_uuid)
        record = guest.load()
        if record is None:
            return {}
        # Shared storage is seen by the destination finding this file.
        marker = '.shared-%s' % os.urandom(6).hex()
        with open(os.path.join(self.root, marker), 'w'):
            pass
        return {'qemu': {'flavor': record['flavor'],
                         'launch': record['launch'],
                         'virtual_size': disks.virtual_size(guest.disk,
                                                            guest),
                         'shared_marker': marker}}

    def pre_live_migration(self, instance_uuid, flavor, migrate_data):
        self.operate('pre_live_migration')
        source = migrate_data.get('qemu') or {}
        migration_uuid = migrate_data.get('migration_uuid') or \
            source.get('migration_uuid')
        guest = self._guest(instance_uuid)
        with guest.lock:
            record = guest.load()
            if record and record.get('incoming') and guest.running():
                return record['incoming']  # a repeated call: same answer
            if record:
                raise guest_mod.QemuFailed(
                    instance_uuid=instance_uuid, host=self.host,
                    reason='a copy of the server is already here')
            if os.path.exists(os.path.join(self.root,
                                           source['shared_marker'])):
                raise guest_mod.QemuFailed(
                    instance_uuid=instance_uuid, host=self.host,
                    reason='[qemu] instances_path is shared with the '
                           'source: shared storage is not supported by '
                           'this driver yet')
            try:
                return self._incoming(guest, source, migration_uuid)
            except Exception:
                guest.kill()
                guest.remove()
                raise

    def _incoming(self, guest, source, migration_uuid):
        launch = source['launch']
        os.makedirs(guest.dir, exist_ok=True)
        paths = self.images.paths(launch['image_ref'])
        for name in ('kernel', 'initrd'):
            shutil.copyfile(paths[name], guest.path(name))
        disks._run(['qemu-img', 'create', '-q', '-f', 'qcow2', guest.disk,
                    str(source['virtual_size'])], guest)
        record = {'uuid': guest.uuid, 'flavor': source['flavor'],
                  'launch': launch, 'left_by': None, 'arrived_by': None}
        guest.save(record)
        self._start(guest, record, incoming=True)
        address = CONF.qemu.migration_address
        caps = [{'capability': 'events', 'state': True}]
        if CONF.qemu.live_migration_permit_post_copy:
            caps.append({'capability': 'postcopy-ram', 'state': True})
        guest.qmp('migrate-set-capabilities', capabilities=caps)
        mem_port = self._listen(guest, address)
        nbd_port = disks.free_port(address)
        guest.qmp('nbd-server-start', addr={
            'type': 'inet', 'data': {'host': address,
                                     'port': str(nbd_port)}})
        guest.qmp('block-export-add', type='nbd', id='mirror',
                  **{'node-name': 'disk0'}, writable=True, name='disk0')
        incoming = {'qemu_incoming': {
            'uri': 'tcp:%s:%d' % (address, mem_port),
            'nbd': {'host': address, 'port': nbd_port, 'export': 'disk0'},
            'migration_uuid': migration_uuid}}
        guest.update(incoming=incoming)
        return incoming

    def _listen(self, guest, address):
        for _ in range(5):
            port = disks.free_port(address)
            try:
                guest.qmp('migrate-incoming',
                          uri='tcp:%s:%d' % (address, port))
                return port
            except Exception as exc:  # lost the port to a race
                last = exc
        raise guest_mod.QemuFailed(instance_uuid=guest.uuid, host=self.host,
                                   reason='no migration port: %s' % last)

    # -- the source's transfer ------------------------------------------------
    def live_migrate(self, instance_uuid, migrate_data, control, sizes,
                     report):
        guest = self._guest(instance_uuid)
        source = migrate_data.get('qemu') or {}
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(self.root, source.get('shared_marker',
                                                         '-')))
        target = migrate_data['qemu_incoming']
        mig = migrate_data.get('migration_uuid')
        record = guest.load()
        memory = record['flavor']['memory_mb'] * MIB
        disk = source.get('virtual_size', 0)
        limit = CONF.qemu.live_migration_completion_timeout * max(
            1.0, (memory + disk) / float(1024 ** 3))
        started = time.monotonic()
        steps = downtime_steps(max(1.0, (memory + disk) / float(1024 ** 3)))
        # A paused server stays paused whatever happens to the transfer.
        guest.update(ran_before_migration=guest.status() == 'running')
        self._setup(guest, steps[0][1])
        mirrored = False
        try:
            if target.get('nbd'):
                mirrored = self._mirror(guest, target['nbd'], control,
                                        memory, disk, report, mig)
            guest.qmp('migrate', uri=target['uri'])
            final = self._watch(guest, control, memory, disk, report, mig,
                                started, limit, steps[1:])
        except BaseException:
            with contextlib.suppress(Exception):
                guest.qmp('migrate_cancel')
            if mirrored:
                self._end_mirror(guest, force=True)
            self._resume_source(guest)
            raise
        if mirrored:
            self._end_mirror(guest)
        return final

    def _setup(self, guest, downtime):
        caps = [{'capability': 'events', 'state': True}]
        if CONF.qemu.live_migration_permit_auto_converge:
            caps.append({'capability': 'auto-converge', 'state': True})
        if CONF.qemu.live_migration_permit_post_copy:
            caps.append({'capability': 'postcopy-ram', 'state': True})
        guest.qmp('migrate-set-capabilities', capabilities=caps)
        # 0 is "as fast as it goes" (libvirt's), not QEMU's 128 MiB/s.
        params = {'downtime-limit': downtime,
                  'max-bandwidth': (CONF.qemu.live_migration_bandwidth or
                                    UNLIMITED_MIB) * MIB}
        guest.qmp('migrate-set-parameters', **params)

    def _mirror(self, guest, nbd, control, memory, disk, report, mig):
        guest.qmp('blockdev-add', driver='nbd', **{'node-name': 'mirror'},
                  server={'type': 'inet', 'host': nbd['host'],
                          'port': str(nbd['port'])}, export=nbd['export'])
        guest.qmp('blockdev-mirror', **{'job-id': 'mirror'},
                  device='disk0', target='mirror', sync='full',
                  **{'copy-mode': 'write-blocking'})
        while True:
            if control.abort.is_set():
                raise driver.LiveMigrationAborted(migration=mig)
            jobs = {j['device']: j for j in guest.qmp('query-block-jobs')}
            job = jobs.get('mirror')
            if job is None:
                raise guest_mod.QemuFailed(
                    instance_uuid=guest.uuid, host=self.host,
                    reason='the disk mirror to the destination stopped')
            done = job['offset'] if job['len'] else disk
            report(_values(memory, 0, memory, disk, done), 0.5 * done /
                   max(1, job['len']))
            if job.get('ready'):
                return True
            time.sleep(POLL)

    def _end_mirror(self, guest, force=False):
        """Ready and in sync: cancelling completes it with the copy
        exact (libvirt's order: after the memory, before the
        destination runs)."""
        with contextlib.suppress(Exception):
            guest.qmp('block-job-cancel', device='mirror', force=force)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(Exception):
                if not guest.qmp('query-block-jobs'):
                    break
            time.sleep(POLL)
        with contextlib.suppress(Exception):
            guest.qmp('blockdev-del', **{'node-name': 'mirror'})

    def _watch(self, guest, control, memory, disk, report, mig, started,
               limit, steps):
        forced = False
        steps = list(steps)
        while True:
            if steps and time.monotonic() - started >= steps[0][0]:
                guest.qmp('migrate-set-parameters',
                          **{'downtime-limit': steps.pop(0)[1]})
            info = guest.qmp('query-migrate')
            status = info.get('status')
            ram = info.get('ram') or {}
            total = ram.get('total', memory)
            remaining = ram.get('remaining', total)
            values = _values(total, total - remaining, remaining, disk,
                             disk)
            if status == 'completed':
                LOG.info('Live migration %s of %s: %.2fs, downtime %s ms, '
                         '%d MiB transferred', mig, guest.uuid,
                         info.get('total-time', 0) / 1000.0,
                         info.get('downtime'),
                         ram.get('transferred', 0) // MIB)
                guest.update(last_migration={
                    'migration_uuid': mig,
                    'total_time_ms': info.get('total-time'),
                    'downtime_ms': info.get('downtime'),
                    'transferred_bytes': ram.get('transferred')})
                return values
            if status not in ACTIVE:
                raise guest_mod.QemuFailed(
                    instance_uuid=guest.uuid, host=self.host,
                    reason='live migration %s: %s' % (
                        status, info.get('error-desc', '')))
            if control.abort.is_set():
                raise driver.LiveMigrationAborted(migration=mig)
            timed_out = limit and time.monotonic() - started > limit
            # Forced already (by a user or the timeout): it finishes.
            if timed_out and not forced and \
                    CONF.qemu.live_migration_timeout_action == 'abort':
                raise MigrationTimedOut(migration=mig, seconds=int(limit))
            if (control.force_complete.is_set() or timed_out) and \
                    not forced:
                forced = True
                self._force(guest, status)
            report(values, 0.5 + 0.5 * (total - remaining) / max(1, total))
            time.sleep(POLL)

    def _force(self, guest, status):
        if CONF.qemu.live_migration_permit_post_copy and \
                status == 'active':
            LOG.info('Switching %s to post-copy', guest.uuid)
            guest.qmp('migrate-start-postcopy')
        else:
            LOG.info('Pausing %s until its migration converges', guest.uuid)
            guest.qmp('stop')

    def _resume_source(self, guest):
        """After a failed or aborted transfer the guest runs on here."""
        record = guest.load() or {}
        if not record.get('ran_before_migration'):
            return
        with contextlib.suppress(Exception):
            if guest.qmp('query-status')['status'] in (
                    'paused', 'postmigrate', 'finish-migrate'):
                guest.qmp('cont')

    def rollback_live_migration_at_source(self, instance_uuid):
        self._resume_source(self._guest(instance_uuid))

    # -- the destination takes over -------------------------------------------
    def post_live_migration_at_destination(self, instance_uuid, flavor,
                                           power):
        guest = self._guest(instance_uuid)
        with guest.lock:
            record = guest.load()
            if record is None or not guest.running():
                raise guest_mod.QemuFailed(
                    instance_uuid=instance_uuid, host=self.host,
                    reason='the incoming guest is not running')
            if record.get('incoming'):
                _wait_migrated(guest, 'incoming migration', timeout=60)
                with contextlib.suppress(Exception):
                    guest.qmp('block-export-del', id='mirror')
                with contextlib.suppress(Exception):
                    guest.qmp('nbd-server-stop')
            if power == 'running' and guest.status() != 'running':
                guest.qmp('cont')
            guest.update(incoming=None)


def _values(memory_total, memory_done, memory_left, disk_total, disk_done):
    return {'memory_total': int(memory_total),
            'memory_processed': int(memory_done),
            'memory_remaining': int(memory_left),
            'disk_total': int(disk_total), 'disk_processed': int(disk_done),
            'disk_remaining': int(disk_total - disk_done)}


