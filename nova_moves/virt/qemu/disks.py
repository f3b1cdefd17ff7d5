"""A server's disk: created on its image's base, grown to its flavor, and
for a cold move served by the source over NBD (read-only, by qemu-nbd)
and pulled by the destination with qemu-img convert -- a copy that works
between two machines, not a local cp."""
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess

from nova_moves import conf
from nova_moves.virt.qemu import guest as guest_mod

CONF = conf.CONF
GIB = 1024 ** 3
QEMU_IMG_TIMEOUT = 3600


def _run(argv, guest, timeout=QEMU_IMG_TIMEOUT):
    proc = subprocess.run(argv, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise guest_mod.QemuFailed(
            instance_uuid=guest.uuid, host=guest.host,
            reason='%s failed: %s' % (' '.join(argv[:2]),
                                      (proc.stderr or proc.stdout).strip()))
    return proc.stdout


def virtual_size(path, guest, fmt=None):
    argv = ['qemu-img', 'info', '-U', '--output=json'] + \
        (['-f', fmt] if fmt else []) + [path]
    return json.loads(_run(argv, guest, timeout=60))['virtual-size']


def create_on(base, path):
    """A qcow2 overlay on ``base`` (the image's disk, never written)."""
    subprocess.run(['qemu-img', 'create', '-q', '-f', 'qcow2', '-F', 'qcow2',
                    '-b', os.path.abspath(base), path], check=True,
                   capture_output=True, timeout=60)


def copy(source, guest):
    """A whole qcow2 copy of ``source`` (no backing file)."""
    _run(['qemu-img', 'convert', '-q', '-f', 'qcow2', '-O', 'qcow2', source,
          guest.disk], guest)


def grow(guest, flavor):
    """The disk grown to the flavor's root_gb (never shrunk: Nova refuses
    a resize to a smaller disk before it gets here)."""
    wanted = (flavor.get('root_gb') or 0) * GIB
    if wanted and wanted > virtual_size(guest.disk, guest):
        _run(['qemu-img', 'resize', '-q', guest.disk, str(wanted)], guest)


def free_port(address):
    """A free TCP port of [qemu] migration_port_min..max on ``address``
    (the caller still handles losing it to a race)."""
    for port in range(CONF.qemu.migration_port_min,
                      CONF.qemu.migration_port_max + 1):
        with socket.socket() as s:
            try:
                s.bind((address, port))
            except OSError:
                continue
            return port
    raise guest_mod.QemuFailed(
        instance_uuid='-', host=address,
        reason='no free port in [qemu] migration_port_min..max')


def export(driver, guest, record):
    """Serve the powered-off disk read-only over NBD (the guest's view,
    backing image included) until the move is confirmed or reverted.
    Repeated (the sweep re-sent the step): the same export."""
    answer_path = guest.path('export.json')
    if guest.pid('nbd.pid') and os.path.exists(answer_path):
        with open(answer_path) as f:
            return json.load(f)
    address = CONF.qemu.migration_address
    for _ in range(5):
        port = free_port(address)
        proc = subprocess.run(
            ['qemu-nbd', '--read-only', '--persistent', '--fork', '--shared',
             '4', '--format', 'qcow2', '--bind', address, '--port',
             str(port), '--export-name', guest.uuid, '--pid-file',
             guest.path('nbd.pid'), guest.disk],
            capture_output=True, text=True, timeout=60,
            stdin=subprocess.DEVNULL)
        if proc.returncode == 0:
            break
    else:
        raise guest_mod.QemuFailed(instance_uuid=guest.uuid, host=guest.host,
                                   reason='qemu-nbd: %s' % proc.stderr)
    answer = {'uri': 'nbd://%s:%d/%s' % (address, port, guest.uuid),
              'virtual_size': virtual_size(guest.disk, guest),
              'launch': record['launch']}
    with open(answer_path, 'w') as f:
        json.dump(answer, f)
    return answer


def stop_export(guest):
    """The export goes before the disk is used again (a revert restarts
    the source's copy: qemu-nbd holds the image's lock while it runs)."""
    pid = guest.pid('nbd.pid')
    if pid:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        if not guest.wait_exit(pid, 10):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            guest.wait_exit(pid, 5)
    for name in ('export.json', 'nbd.pid'):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(guest.path(name))


def pull(driver, guest, disk_from):
    """On the destination: the source's disk copied over NBD, with the
    image's kernel and initrd from the image store. Returns the launch
    record."""
    launch = disk_from['launch']
    os.makedirs(guest.dir, exist_ok=True)
    paths = driver.images.paths(launch['image_ref'])
    for name in ('kernel', 'initrd'):
        shutil.copyfile(paths[name], guest.path(name))
    tmp = guest.disk + '.part'
    _run(['qemu-img', 'convert', '-q', '-f', 'raw', '-O', 'qcow2',
          disk_from['uri'], tmp], guest)
    os.replace(tmp, guest.disk)
    return dict(launch)
