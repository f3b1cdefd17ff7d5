"""The quickstart's real guest: computes with ``[compute] driver = qemu``,
the bundled test guest (tools/build-test-guest.sh, doc/test-guest.md)
built into the repository's ``.test-guest/`` and imported as an operator
would, its serial console (``beat N <uptime>``) printed around each move,
and the live migration's numbers. Every QEMU process goes with the stack
(``stop``), or with ``quickstart --stop`` after ``--keep`` (``stop_kept``)."""
import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from nova_moves.harness import guests as qemu_guests
from nova_moves.harness import stack as nm_stack

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
GUEST_DIR = os.environ.get('NOVA_MOVES_TEST_GUEST',
                           os.path.join(REPO, '.test-guest'))
BUILD = os.path.join(REPO, 'tools', 'build-test-guest.sh')
# What the source compute logs when QEMU's migration completed
# (virt/qemu/migration.py).
QEMU_DONE = re.compile(r'Live migration (\S+) of (\S+): ([\d.]+)s, '
                       r'downtime (\S+) ms, (\d+) MiB transferred')
GUEST_LINE = re.compile(r'^(beat \d+ [\d.]+|guest .*)$')
MIB = 1024 * 1024


def prepare():
    """((kernel, initrd), None) when real guests can run here, else
    (None, why not). Builds the test guest (fast when built)."""
    missing = [b for b in ('qemu-system-x86_64', 'qemu-img')
               if not shutil.which(b)]
    if missing:
        return None, ('%s not on PATH (tools/quickstart.sh installs QEMU '
                      'when run as root)' % ' and '.join(missing))
    if not os.path.exists(BUILD):
        return None, ('no %s to build the test guest with (run the '
                      'quickstart from a source checkout)' % BUILD)
    try:
        subprocess.run([BUILD, GUEST_DIR], check=True, capture_output=True,
                       text=True, timeout=600, stdin=subprocess.DEVNULL)
    except subprocess.CalledProcessError as exc:
        tail = (exc.stderr or '').strip().splitlines()[-1:] or ['']
        return None, 'building the test guest failed: %s' % tail[0]
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, 'building the test guest failed: %s' % exc
    return (os.path.join(GUEST_DIR, 'vmlinuz'),
            os.path.join(GUEST_DIR, 'initrd.img')), None


class Guests:
    """The QEMU side of the quickstart's stack."""

    def __init__(self, hosts, accel='auto'):
        self.hosts = list(hosts)
        # Short: the QMP socket's path must fit a unix socket's 108 bytes.
        self.root = tempfile.mkdtemp(prefix='nmq-', dir='/tmp')
        self.instances_path = os.path.join(self.root, '{host}')
        self.accel = accel

    def computes(self):
        qemu = {'instances_path': self.instances_path, 'accel': self.accel,
                'shutdown_timeout': '10'}
        return [{'name': host, 'compute': {'driver': 'qemu'},
                 'conf': {'qemu': dict(qemu)}} for host in self.hosts]

    def import_image(self, stack, kernel, initrd, name='test-guest'):
        argv = [nm_stack._script('nova-moves-manage'), '--config-file',
                stack.config_path, 'image', 'import', name,
                '--kernel', kernel, '--initrd', initrd]
        out = subprocess.run(argv, check=True, capture_output=True,
                             text=True, timeout=120).stdout
        return out.strip().split()[-1]

    def console(self, host, server_id):
        return qemu_guests.console(self.instances_path, host, server_id)

    def wait_for_beat(self, host, server_id, above=0, timeout=120):
        """The newest (N, uptime) on ``host`` once N > ``above``."""
        deadline = time.monotonic() + timeout
        while True:
            beats = qemu_guests.beats(self.console(host, server_id))
            if beats and beats[-1][0] > above:
                return beats[-1]
            if time.monotonic() > deadline:
                raise TimeoutError(
                    'no beat above %d from %s on %s in %ss; console ends: '
                    '%r' % (above, server_id, host, timeout,
                            self.console(host, server_id)[-300:]))
            time.sleep(0.3)

    def print_console(self, title, host, server_id, lines=4, text=None):
        """The guest's own lines (not the kernel's), the last ``lines``."""
        if text is None:
            text = self.console(host, server_id)
        ours = [line.strip() for line in text.splitlines()
                if GUEST_LINE.match(line.strip())]
        print('\n%s [%s console.log]:' % (title, host))
        for line in ours[-lines:]:
            print('    %s' % line)

    def read_guests(self):
        return qemu_guests.read_guests(self.instances_path, self.hosts)

    def record(self):
        return {'instances_path': self.instances_path, 'root': self.root,
                'hosts': self.hosts}

    def stop(self):
        stop_kept(self.record())


def stop_kept(record):
    """Kill every QEMU (and qemu-nbd) process of the hosts and remove
    their instances dir; the pids of those that would not die."""
    qemu_guests.stop_all(record['instances_path'], record['hosts'])
    left = _qemu_pids_under(record['root'])
    for pid in left:  # no pid file (yet): found by their directory
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    time.sleep(0.2 if left else 0)
    shutil.rmtree(record['root'], ignore_errors=True)
    return _qemu_pids_under(record['root'])


def _qemu_pids_under(root):
    """QEMU and qemu-nbd processes with a file under root on their command
    line (a daemonized QEMU's cwd is /)."""
    pids = []
    needle = os.fsencode(root.rstrip('/') + '/')
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            with open('/proc/%s/cmdline' % pid, 'rb') as f:
                argv = f.read().split(b'\0')
        except OSError:
            continue
        if os.path.basename(argv[0]) in (b'qemu-system-x86_64',
                                         b'qemu-nbd') and any(
                needle in arg for arg in argv[1:]):
            pids.append(int(pid))
    return pids


def live_migrate(client, stack, guests, server_id, source, dest, mark,
                 timeout=180):
    """2.30 os-migrateLive to ``dest`` (block_migration auto); print the
    consoles before and after and the migration's numbers."""
    before = guests.wait_for_beat(source, server_id, above=2)
    guests.print_console('Before the live migration, on %s' % source,
                         source, server_id)
    t = time.monotonic()
    client.action(server_id, {'os-migrateLive': {
        'host': dest, 'block_migration': 'auto'}}, version='2.30',
        expect=202)
    mark('POST os-migrateLive (2.30, host %s) -> 202 in %.1f ms'
         % (dest, (time.monotonic() - t) * 1000))
    # GET /os-migrations shows no memory or disk figures (as Nova): they
    # are in GET /servers/{id}/migrations while the migration runs. The
    # source's console goes with its copy: keep its last text.
    seen, source_text = None, ''
    deadline = time.monotonic() + timeout
    while True:
        source_text = guests.console(source, server_id) or source_text
        server = client.server(server_id, version='2.47')
        if server['status'] == 'ERROR' or (
                server['OS-EXT-SRV-ATTR:host'] == dest and
                server['OS-EXT-STS:task_state'] is None):
            break
        if time.monotonic() > deadline:
            raise TimeoutError('live migration of %s not over in %ss'
                               % (server_id, timeout))
        running = client.get('/servers/%s/migrations' % server_id,
                             version='2.24', expect=200).json()['migrations']
        if running and running[0]['memory_total_bytes']:
            seen = running[0]
        time.sleep(0.1)
    mark('live migration over: %s on %s' % (server['status'], dest))
    if server['status'] != 'ACTIVE':
        raise RuntimeError('live migration failed: %s' % server.get('fault'))
    last = (qemu_guests.beats(source_text) or [before])[-1]
    first = guests.wait_for_beat(dest, server_id, above=0)
    guests.wait_for_beat(dest, server_id, above=first[0] + 1)
    guests.print_console('Its last lines on %s, the source' % source,
                         source, server_id, lines=2, text=source_text)
    first = qemu_guests.beats(guests.console(dest, server_id))[0]
    guests.print_console('After the live migration, on %s' % dest, dest,
                         server_id, lines=3)
    print('    last beat on %s: %d at %.2f s uptime; first on %s: %d at '
          '%.2f s: %s' % (
              source, last[0], last[1], dest, first[0], first[1],
              'the same boot, no reboot' if first[1] > last[1] and
              first[0] > last[0] else 'REBOOTED?'))
    migration = [m for m in client.migrations(instance_uuid=server_id)
                 if m['migration_type'] == 'live-migration'][0]
    print('Live migration %s: %s -> %s, status %s' % (
        migration['uuid'], migration['source_compute'],
        migration['dest_compute'], migration['status']))
    if seen:
        print('    while running (GET /servers/%s/migrations): memory %d of '
              '%d MiB processed, disk %d of %d MiB' % (
                  server_id, seen['memory_processed_bytes'] // MIB,
                  seen['memory_total_bytes'] // MIB,
                  seen['disk_processed_bytes'] // MIB,
                  seen['disk_total_bytes'] // MIB))
    done = [m for m in QEMU_DONE.finditer(stack.log(source))
            if m.group(1) == migration['uuid']]
    if done:
        print('    QEMU (%s log): total %s s, downtime %s ms, %s MiB '
              'transferred' % (source, done[-1].group(3), done[-1].group(4),
                               done[-1].group(5)))
    return first


def after_cold_move(guests, server_id, source, dest):
    """At VERIFY_RESIZE: the source's copy (stopped, kept until the
    confirm) and the destination's new boot of the copied disk, where N
    goes on from the disk."""
    stopped = guests.console(source, server_id)
    guests.wait_for_beat(dest, server_id, above=0)
    print('\nCold migration %s -> %s: the guest was stopped on %s; %s '
          'boots a copy of its disk, the guest reads its last N there and '
          'goes on (its uptime starts again).' % (source, dest, source,
                                                   dest))
    guests.print_console('The stopped copy on %s' % source, source,
                         server_id, lines=2, text=stopped)
    guests.print_console('After the cold migration, on %s' % dest,
                         dest, server_id, lines=4)
