"""The README's first command: bring the whole stack up (api, conductor,
scheduler, two computes) on the local RabbitMQ, boot a server, move it
and print its timeline. With QEMU on the machine the computes run real
guests ([compute] driver = qemu): the server boots the bundled test guest,
is live migrated, then cold migrated and confirmed, and the guest's
console (its ``beat N`` counter) is printed around each move
(quickstart_guest.py). With --fake, or without QEMU, the computes run the
fake hypervisor and the server is cold migrated and confirmed."""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

from nova_moves.harness import cell_stack
from nova_moves.harness import invariants
from nova_moves.harness import quickstart_guest
from nova_moves.harness import stack as nm_stack


class StatusRecorder:
    """Polls a server and keeps every change of (status, task_state, host)
    with the time it was first seen."""

    def __init__(self, client, server_id, interval=0.02):
        self.client = client
        self.server_id = server_id
        self.interval = interval
        self.changes = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.t0 = time.monotonic()

    def _run(self):
        last = None
        while not self._stop.is_set():
            server = self.client.server(self.server_id, version='2.47')
            state = (server['status'], server['OS-EXT-STS:task_state'],
                     server.get('OS-EXT-SRV-ATTR:host'))
            if state != last:
                self.changes.append((time.monotonic() - self.t0, state))
                last = state
            self._stop.wait(self.interval)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join()


def _print_timeline(recorder, marks):
    print('\nTimeline of server %s' % recorder.server_id)
    print('%9s  %-14s %-18s %s' % ('t (ms)', 'status', 'task_state', 'host'))
    events = [(t, 'state', s) for t, s in recorder.changes]
    events += [(t, 'mark', m) for t, m in marks]
    for t, kind, what in sorted(events, key=lambda e: e[0]):
        if kind == 'mark':
            print('%9.1f  -- %s' % (t * 1000, what))
        else:
            status, task, host = what
            print('%9.1f  %-14s %-18s %s' % (t * 1000, status, task or '-',
                                             host))


def client_hint(endpoint):
    """The openstack command lines to paste. ``server list`` (and ``flavor
    create``) refuse to run unless the identity service looks like v3,
    which the client takes from the endpoint's "/v2.1" otherwise (README,
    "Using the OpenStack client"): the API serves that document on /v3."""
    root = endpoint.rsplit('/v2.1', 1)[0]
    return ('  export OS_IDENTITY_ENDPOINT_OVERRIDE=%s/v3\n'
            '  openstack --os-auth-type admin_token --os-token admin:admin '
            '--os-endpoint %s server list' % (root, endpoint))


KEEP_FILE = 'quickstart-keep.json'


def keep_hint(stack, guests=None):
    """Record what --stop needs in the work dir; the lines to print."""
    record = {'pids': [p.popen.pid for p in stack.processes.values()],
              'vhost': stack.vhost, 'workdir': stack.workdir}
    if guests is not None:
        record['qemu'] = guests.record()
    with open(os.path.join(stack.workdir, KEEP_FILE), 'w') as f:
        json.dump(record, f)
    bindir = os.path.dirname(sys.executable)
    return ('The openstack client is installed in %s; put it on PATH with\n'
            '  export PATH=%s:$PATH   (or: source %s/activate)\n'
            'then try:\n%s\n'
            'Stop every process%s, delete the RabbitMQ vhost %s and the '
            'work dir with:\n  %s -m nova_moves.harness.quickstart --stop %s'
            % (bindir, bindir, bindir, client_hint(stack.endpoint),
               ' (the QEMU guests too, and %s)' % guests.root
               if guests is not None else '',
               stack.vhost, sys.executable, stack.workdir))


def _ours(pid):
    """Still one of the stack's processes (not a reused pid)?"""
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            return b'nova-moves-' in f.read()
    except OSError:
        return False


def stop_kept(workdir, rabbitmqctl=None, timeout=15):
    """--stop: what Stack.stop() does, for a stack left by --keep."""
    rabbitmqctl = rabbitmqctl or nm_stack.rabbitmqctl
    with open(os.path.join(workdir, KEEP_FILE)) as f:
        record = json.load(f)
    pids = [pid for pid in record['pids'] if _ours(pid)]
    for pid in pids:
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while pids and time.monotonic() < deadline:
        pids = [pid for pid in pids if _ours(pid) and not _zombie(pid)]
        time.sleep(0.2)
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    try:
        rabbitmqctl('delete_vhost', record['vhost'])
    except (subprocess.CalledProcessError, OSError) as exc:
        print('Could not delete vhost %s: %s' % (record['vhost'], exc))
    shutil.rmtree(record['workdir'], ignore_errors=True)
    print('Stopped %d processes, deleted vhost %s and %s' % (
        len(record['pids']), record['vhost'], record['workdir']))
    if record.get('qemu'):
        left = quickstart_guest.stop_kept(record['qemu'])
        print('Killed the QEMU guests, removed %s%s' % (
            record['qemu']['root'],
            '; QEMU processes left: %s' % left if left else ''))
        return 1 if left else 0
    return 0


def _zombie(pid):
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] == 'Z'
    except OSError:
        return True


def _hypervisor(args, hosts):
    """The Guests of a QEMU stack, or None for the fake (and why)."""
    if args.fake:
        print('Hypervisor: fake (--fake)')
        return None
    files, why = quickstart_guest.prepare()
    if files is None:
        print('Hypervisor: fake, because QEMU cannot be had here: %s '
              '(--fake skips this check)' % why)
        return None
    guests = quickstart_guest.Guests(hosts, accel=args.accel)
    guests.files = files
    print('Hypervisor: QEMU ([compute] driver = qemu, accel %s), test '
          'guest %s, instances in %s' % (
              args.accel, os.path.dirname(files[0]), guests.instances_path))
    return guests


def _stack(args):
    """The Stack (one cell) or CellsStack (--cells N, fake hypervisor,
    two computes per cell), and the QEMU guests or None."""
    if args.cells > 1:
        stack = cell_stack.CellsStack(cells=args.cells, computes=2,
                                      keep_workdir=args.keep)
        print('Starting %d cells (API database, per cell a database, a '
              'vhost, a conductor, a scheduler and 2 computes, fake '
              'hypervisor) on %s, work dir %s' % (
                  args.cells, stack.broker_url, stack.workdir))
        return stack, None
    hosts = ['compute1', 'compute2']
    guests = _hypervisor(args, hosts)
    computes = guests.computes() if guests else [{'name': h} for h in hosts]
    stack = nm_stack.Stack(computes=computes, keep_workdir=args.keep)
    print('Starting api, conductor, scheduler and 2 computes on %s '
          '(vhost %s), work dir %s' % (stack.broker_url, stack.vhost,
                                       stack.workdir))
    return stack, guests


def run(args):
    stack, guests = _stack(args)
    ok = False
    try:
        t = time.monotonic()
        stack.start()
        print('Stack up in %.1f s; API at %s' % (time.monotonic() - t,
                                                stack.endpoint))
        ok = _moves(args, stack, guests)
        return ok
    finally:
        if args.keep:
            print('\nThe stack keeps running (--keep).\n%s' %
                  keep_hint(stack, guests))
        else:
            stack.stop()
            if guests:
                left = guests.stop()
                print('\nStopped the stack%s.' % (
                    '' if not left else '; QEMU processes left: %s' % left))


def _moves(args, stack, guests):
    client = stack.client(version='2.56')
    image = 'fake'
    if guests:
        image = guests.import_image(stack, *guests.files)
        print('Imported the test guest: image %s (nova-moves-manage image '
              'import)' % image)
        flavor = client.create_flavor('m1.guest', vcpus=1, ram=256, disk=1)
    else:
        flavor = client.create_flavor('m1.small', vcpus=1, ram=512, disk=1)
    recorder_marks = []
    body = client.boot('quickstart', flavor['id'], wait=False,
                       image_ref=image)
    recorder = StatusRecorder(client, body['id']).start()

    def mark(text):
        recorder_marks.append((time.monotonic() - recorder.t0, text))
    mark('POST /servers -> 202')
    server = client.wait_for_status(body['id'], ('ACTIVE', 'ERROR'),
                                    timeout=180 if guests else 60)
    if server['status'] != 'ACTIVE':
        raise RuntimeError('boot failed: %s' % server.get('fault'))
    first_host = server['OS-EXT-SRV-ATTR:host']
    if hasattr(stack, 'cell_of_host'):
        print('The server is in %s (on %s)' % (
            stack.cell_of_host(first_host), first_host))
    if guests:
        other = [h for h in guests.hosts if h != first_host][0]
        quickstart_guest.live_migrate(client, stack, guests, server['id'],
                                      first_host, other, mark)
        server = client.server(server['id'], version='2.47')
    source = server['OS-EXT-SRV-ATTR:host']
    t = time.monotonic()
    client.action(server['id'], {'migrate': None}, expect=202)
    mark('POST migrate -> 202 in %.1f ms' % ((time.monotonic() - t) * 1000))
    server = client.wait_for_status(server['id'],
                                    ('VERIFY_RESIZE', 'ACTIVE', 'ERROR'),
                                    timeout=180 if guests else 60)
    if server['status'] != 'VERIFY_RESIZE':
        raise RuntimeError('migration did not reach VERIFY_RESIZE: %s'
                           % server['status'])
    if guests:
        quickstart_guest.after_cold_move(guests, server['id'], source,
                                         server['OS-EXT-SRV-ATTR:host'])
    t = time.monotonic()
    client.action(server['id'], {'confirmResize': None}, expect=204)
    mark('POST confirmResize -> 204 in %.1f ms'
         % ((time.monotonic() - t) * 1000))
    server = client.wait_for_status(server['id'], 'ACTIVE')
    time.sleep(0.1)
    recorder.stop()
    _print_timeline(recorder, recorder_marks)
    print('\nInstance actions (events as an admin sees them):')
    for action in reversed(client.actions(server['id'])):
        detail = client.action_detail(server['id'], action['request_id'])
        print('  %-14s %s' % (action['action'], action['request_id']))
        for event in detail['events']:
            print('      %-44s %-8s %s' % (event['event'], event['result'],
                                           event.get('host') or ''))
    print()
    for migration in reversed(client.migrations(
            instance_uuid=server['id'])):
        print('Migration %s (%s): %s -> %s, status %s' % (
            migration['uuid'], migration['migration_type'],
            migration['source_compute'], migration['dest_compute'],
            migration['status']))
    if guests:
        host = server['OS-EXT-SRV-ATTR:host']
        guests.wait_for_beat(host, server['id'], above=guests.wait_for_beat(
            host, server['id'])[0] + 1)
        guests.print_console('Confirmed; the guest now', host, server['id'],
                             lines=2)
    problems = _invariants(client, guests)
    print('Moved from %s to %s; invariants: %s' % (
        source, server['OS-EXT-SRV-ATTR:host'],
        'all hold' if not problems else problems))
    return 1 if problems or source == server['OS-EXT-SRV-ATTR:host'] else 0


def _invariants(client, guests, grace=10):
    """invariants.check, with the QEMU guests each host holds; a confirmed
    source's copy goes a moment after the API says ACTIVE."""
    deadline = time.monotonic() + (grace if guests else 0)
    while True:
        problems = invariants.check(
            client, **({'guests': guests.read_guests()} if guests else {}))
        if not problems or time.monotonic() >= deadline:
            return problems
        time.sleep(0.5)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--keep', action='store_true',
                        help='leave the stack (and its QEMU guests) running '
                        'afterwards')
    parser.add_argument('--stop', metavar='WORKDIR',
                        help='stop a stack left by --keep: its processes, '
                        'its QEMU guests, its RabbitMQ vhost and its work '
                        'dir')
    parser.add_argument('--fake', action='store_true',
                        help='run the fake hypervisor even when QEMU is '
                        'installed (no real guest; cold migrate only)')
    parser.add_argument('--accel', choices=('auto', 'kvm', 'tcg'),
                        default='auto',
                        help='[qemu] accel for the computes (auto: KVM when '
                        'a Linux guest boots under it, else TCG)')
    parser.add_argument('--cells', type=int, default=1, metavar='N',
                        help='N cells (doc/cells.md), each with 2 computes '
                        'on the fake hypervisor; the server boots in the '
                        'cell with the most room and moves inside it')
    args = parser.parse_args(argv)
    if args.cells > 1 and args.keep:
        parser.error('--keep is for one cell only')
    if args.stop:
        return stop_kept(args.stop)
    return run(args)


if __name__ == '__main__':
    sys.exit(main())
