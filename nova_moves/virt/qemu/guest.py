"""One server's directory on a host and the QEMU process that runs it.

<instances_path>/<uuid>/ holds ``disk`` (qcow2), ``console.log`` (the
serial console), ``qemu.pid`` and ``qmp.sock`` of the daemonized QEMU,
``guest.json`` (how it was launched and the marks of the moves that left
or spawned it) and, while suspended, ``suspend.state``. Everything a
restarted compute agent needs to re-attach is there: QEMU runs on
without the agent (as under libvirt)."""
import contextlib
import json
import os
import shutil
import signal
import subprocess
import threading
import time

from oslo_log import log as logging
from qemu.qmp import legacy as qmp_legacy
from qemu.qmp import protocol as qmp_protocol

from nova_moves import conf
from nova_moves import exception

CONF = conf.CONF
LOG = logging.getLogger(__name__)
QMP_TIMEOUT = 30.0
MAX_SOCKET_PATH = 107
CONNECT_ATTEMPTS = 5


class QemuFailed(exception.NovaMovesException):
    msg_fmt = 'QEMU failed for %(instance_uuid)s on %(host)s: %(reason)s'
    code = 500


def instances_path(host):
    return CONF.qemu.instances_path.replace('{host}', host)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (our own child not reaped yet) is dead for us.
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False


class Guest:
    """A server's directory and process; the record is guest.json."""

    def __init__(self, host, instance_uuid, root=None):
        """``root``: the host's instances path (else from the config)."""
        self.host = host
        self.uuid = instance_uuid
        self.dir = os.path.join(root or instances_path(host), instance_uuid)
        self.lock = threading.RLock()  # one QMP client at a time

    def path(self, name):
        return os.path.join(self.dir, name)

    @property
    def disk(self):
        return self.path('disk')

    @property
    def console(self):
        return self.path('console.log')

    @property
    def qmp_path(self):
        return self.path('qmp.sock')

    # -- the record -----------------------------------------------------------
    def exists(self):
        return os.path.exists(self.path('guest.json'))

    def load(self):
        try:
            with open(self.path('guest.json')) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def save(self, record):
        os.makedirs(self.dir, exist_ok=True)
        tmp = self.path('guest.json.tmp')
        with open(tmp, 'w') as f:
            json.dump(record, f)
        os.replace(tmp, self.path('guest.json'))

    def update(self, **values):
        record = self.load() or {}
        record.update(values)
        self.save(record)
        return record

    def remove(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    # -- the process ----------------------------------------------------------
    def pid(self, name='qemu.pid'):
        try:
            with open(self.path(name)) as f:
                pid = int(f.read().strip())
        except (OSError, ValueError):
            return None
        return pid if _alive(pid) else None

    def running(self):
        return self.pid() is not None

    def launch(self, argv):
        """Start QEMU daemonized (it returns once its monitor listens)."""
        if len(self.qmp_path) > MAX_SOCKET_PATH:
            raise QemuFailed(instance_uuid=self.uuid, host=self.host,
                             reason='QMP socket path %s is longer than a '
                                    'unix socket allows; shorten [qemu] '
                                    'instances_path' % self.qmp_path)
        for name in ('qemu.pid', 'qmp.sock'):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path(name))
        with open(self.path('qemu.log'), 'ab') as log:
            proc = subprocess.run(argv, stdout=log, stderr=log,
                                  stdin=subprocess.DEVNULL, cwd=self.dir,
                                  timeout=CONF.qemu.boot_timeout)
        if proc.returncode != 0 or not self.running():
            raise QemuFailed(instance_uuid=self.uuid, host=self.host,
                             reason='exit %s: %s' % (proc.returncode,
                                                     self.log_tail()))

    def log_tail(self, lines=5):
        try:
            with open(self.path('qemu.log'), errors='replace') as f:
                return ' '.join(f.read().splitlines()[-lines:]).strip()
        except OSError:
            return ''

    def kill(self, timeout=10.0):
        """Stop the process now (QMP quit, then SIGKILL)."""
        pid = self.pid()
        if pid is None:
            return
        with contextlib.suppress(Exception):
            self.qmp('quit', timeout=5.0)
        if not self.wait_exit(pid, timeout / 2):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            self.wait_exit(pid, timeout / 2)

    def wait_exit(self, pid=None, timeout=10.0):
        pid = pid or self.pid()
        deadline = time.monotonic() + timeout
        while pid and _alive(pid):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    # -- QMP ------------------------------------------------------------------
    def qmp(self, command, timeout=QMP_TIMEOUT, **args):
        """One command on the guest's monitor (one client at a time).
        A session that fails to open is opened again: QEMU can send an
        event meant for the last client before the greeting (seen
        with the migration and block job events), and nothing was
        executed then."""
        with self.lock:
            for attempt in range(CONNECT_ATTEMPTS):
                mon = qmp_legacy.QEMUMonitorProtocol(self.qmp_path)
                try:
                    try:
                        mon.connect()
                    except qmp_protocol.ConnectError:
                        if attempt + 1 == CONNECT_ATTEMPTS or \
                                not self.running():
                            raise
                        time.sleep(0.05 * (attempt + 1))
                        continue
                    mon.settimeout(timeout)
                    return mon.cmd(command, **args)
                finally:
                    with contextlib.suppress(Exception):
                        mon.close()

    def status(self):
        """QEMU's run state ('running', 'paused', 'inmigrate',
        'postmigrate', 'suspended', ...), None with no process."""
        if not self.running():
            return None
        try:
            return self.qmp('query-status')['status']
        except Exception:
            LOG.debug('query-status of %s failed', self.uuid, exc_info=True)
            return None if not self.running() else 'unknown'
