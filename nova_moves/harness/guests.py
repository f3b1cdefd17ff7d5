"""The real guests of a stack whose computes run [compute] driver = qemu:
what each host holds (for the invariants), the serial console the guest
writes, and stopping every QEMU process when the stack goes (they
outlive their compute agent by design, as under libvirt)."""
import contextlib
import os
import re
import signal
import time

from nova_moves.virt.qemu import guest as guest_mod

BEAT = re.compile(r'^beat (\d+) ([\d.]+)\s*$', re.M)


def host_dir(instances_path, host):
    return instances_path.replace('{host}', host)


def read_guests(instances_path, hosts):
    """{host: {server uuid: {'power': ...}}}, as invariants.read_guests
    gives for the fake: 'running' only for a QEMU process that runs."""
    out = {}
    for host in hosts:
        root = host_dir(instances_path, host)
        held = out.setdefault(host, {})
        with contextlib.suppress(FileNotFoundError):
            for name in os.listdir(root):
                guest = guest_mod.Guest(host, name, root=root)
                if not guest.exists():
                    continue
                status = guest.status()
                held[name] = {'power': 'running' if status == 'running'
                              else 'shutdown' if status is None
                              else 'paused'}
    return out


def qemu_processes():
    """{server uuid: number of QEMU processes running it}, from /proc."""
    counts = {}
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        try:
            with open('/proc/%s/cmdline' % pid, 'rb') as f:
                argv = f.read().split(b'\0')
        except OSError:
            continue
        if not argv or not argv[0].endswith(b'qemu-system-x86_64'):
            continue
        for arg in argv:
            if arg.startswith(b'guest='):
                uuid = arg[len('guest='):].decode()
                counts[uuid] = counts.get(uuid, 0) + 1
    return counts


def console(instances_path, host, server_id):
    path = os.path.join(host_dir(instances_path, host), server_id,
                        'console.log')
    try:
        with open(path, errors='replace') as f:
            return f.read()
    except FileNotFoundError:
        return ''


def beats(text):
    """[(N, uptime)] of the guest's ``beat N <uptime>`` lines."""
    return [(int(n), float(up)) for n, up in BEAT.findall(text)]


def stop_all(instances_path, hosts):
    """Kill every QEMU (and qemu-nbd) process of these hosts' servers."""
    pids = []
    for host in hosts:
        root = host_dir(instances_path, host)
        with contextlib.suppress(FileNotFoundError):
            for name in os.listdir(root):
                for pidfile in ('qemu.pid', 'nbd.pid'):
                    with contextlib.suppress(OSError, ValueError):
                        with open(os.path.join(root, name, pidfile)) as f:
                            pids.append(int(f.read().strip()))
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    time.sleep(0.2 if pids else 0)
