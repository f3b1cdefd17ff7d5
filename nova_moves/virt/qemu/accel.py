"""Which accelerator QEMU runs guests with. ``[qemu] accel = auto``
probes once per agent, with the first guest's own kernel: KVM only when
/dev/kvm opens and that kernel prints its banner under KVM within a few
seconds (on some nested hosts KVM opens and a BIOS-only guest runs, but
a Linux guest hangs before its first line); else TCG, software
emulation."""
import os
import subprocess
import tempfile
import time

from oslo_log import log as logging

from nova_moves import conf

CONF = conf.CONF
LOG = logging.getLogger(__name__)
PROBE_SECONDS = 6.0


def _kvm_boots(kernel):
    if not os.access('/dev/kvm', os.R_OK | os.W_OK):
        return False
    with tempfile.TemporaryDirectory(prefix='nm-kvm-') as tmp:
        console = os.path.join(tmp, 'console')
        try:
            proc = subprocess.Popen(
                [CONF.qemu.binary, '-machine', 'accel=kvm', '-nodefaults',
                 '-no-user-config', '-display', 'none', '-m', '128',
                 '-kernel', kernel, '-append',
                 'console=ttyS0 earlyprintk=serial,ttyS0 panic=-1',
                 '-chardev', 'file,id=s0,path=%s' % console,
                 '-serial', 'chardev:s0'],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError:
            return False
        try:
            deadline = time.monotonic() + PROBE_SECONDS
            while time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.2)
                with open(console, 'rb') as f:
                    if b'Linux version' in f.read():
                        return True
            return False
        finally:
            proc.kill()
            proc.wait()


class Accelerator:
    """'kvm' or 'tcg', decided at the first guest (``for_kernel``)."""

    def __init__(self):
        self._chosen = None if CONF.qemu.accel == 'auto' else CONF.qemu.accel

    def for_kernel(self, kernel):
        if self._chosen is None:
            self._chosen = 'kvm' if _kvm_boots(kernel) else 'tcg'
            LOG.info('QEMU accelerator: %s ([qemu] accel = auto)',
                     self._chosen)
        return self._chosen
