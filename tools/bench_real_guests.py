"""Real guests moved by the real processes ([compute] driver = qemu, the
bundled test guest): live migration at several dirty rates, a cold
migration of a guest with a full disk, and a host drain's ETA against
the drain as it ran. Prints numbers; asserts nothing.

    .venv/bin/python tools/bench_real_guests.py --per-rate 3 --drain 20

Live migration: per dirty rate (MB of memory the guest rewrites per
second), QEMU's own figures as the source compute logs them (total time,
downtime, MiB transferred) and the migration's end (completed, or error
for one aborted at [qemu] live_migration_completion_timeout).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from nova_moves.harness import guests as qemu_guests
from nova_moves.harness import invariants
from nova_moves.harness import stack as nm_stack

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOGGED = re.compile(r'Live migration (\S+) of (\S+): ([\d.]+)s, downtime '
                    r'(\S+) ms, (\d+) MiB transferred')
HOSTS = ('qemu1', 'qemu2')


def pct(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


class Bench:

    def __init__(self, args):
        self.args = args
        self.root = tempfile.mkdtemp(prefix='nmb-', dir='/tmp')
        self.instances = os.path.join(self.root, '{host}')
        qemu = {'instances_path': self.instances, 'accel': args.accel,
                'shutdown_timeout': '10',
                'live_migration_completion_timeout':
                str(args.completion_timeout),
                'live_migration_bandwidth': str(args.bandwidth),
                'live_migration_timeout_action': args.timeout_action}
        self.stack = nm_stack.Stack(
            computes=[{'name': h, 'compute': {'driver': 'qemu'},
                       'conf': {'qemu': qemu}} for h in HOSTS],
            extra_conf={'quota': {'instances': -1, 'cores': -1, 'ram': -1}},
            keep_workdir=bool(os.environ.get('NOVA_MOVES_KEEP_LOGS')))

    def manage(self, *argv):
        return subprocess.run(
            [nm_stack._script('nova-moves-manage'), '--config-file',
             self.stack.config_path] + list(argv), check=True,
            capture_output=True, text=True, timeout=600).stdout

    def image(self, name, cmdline='', disk=None):
        argv = ['image', 'import', name, '--kernel',
                os.path.join(self.args.guest, 'vmlinuz'), '--initrd',
                os.path.join(self.args.guest, 'initrd.img')]
        if cmdline:
            argv += ['--cmdline', cmdline]
        if disk:
            argv += ['--disk', disk]
        return self.manage(*argv).strip().split()[-1]

    def boot(self, image, flavor, host='qemu1'):
        server = self.admin.boot('g', flavor['id'], host=host,
                                 image_ref=image, timeout=180)
        assert server['status'] == 'ACTIVE', server
        self.wait_beat(server['id'], host)
        return server['id']

    def wait_beat(self, sid, host, above=1):
        self.admin.wait_for(lambda: any(n > above for n, _ in (
            qemu_guests.beats(qemu_guests.console(self.instances, host,
                                                  sid)))),
            timeout=120, what='beats of %s' % sid)

    def live(self, sid, dest='qemu2'):
        started = time.monotonic()
        self.admin.action(sid, {'os-migrateLive': {
            'host': dest, 'block_migration': 'auto'}}, version='2.30',
            expect=202)
        migration = self.admin.wait_for(
            lambda: [m for m in self.admin.migrations(instance_uuid=sid)
                     if m['status'] in ('completed', 'error', 'failed',
                                        'cancelled')],
            timeout=600, what='the live migration of %s' % sid)[0]
        self.admin.wait_for_status(sid, 'ACTIVE', timeout=60)
        return migration, time.monotonic() - started

    def logged(self):
        return {m.group(2): m.groups() for m in LOGGED.finditer(
            self.stack.log('qemu1'))}

    def run(self):
        self.stack.start()
        self.admin = self.stack.client()
        flavor = self.admin.create_flavor('guest', 1, 256, 1)
        try:
            self.live_rates(flavor)
            if self.args.cold_disk_mb:
                self.cold(flavor)
            if self.args.drain:
                self.drain(flavor)
            problems = invariants.check(self.admin,
                                        guests=qemu_guests.read_guests(
                                            self.instances, HOSTS))
            print('invariants: %s' % (problems or 'ok'))
        finally:
            self.stack.stop()
            qemu_guests.stop_all(self.instances, HOSTS)
            shutil.rmtree(self.root, ignore_errors=True)

    def live_rates(self, flavor):
        print('live migration, %s guests per rate, 256 MB RAM, 1 GB disk '
              '(block mirror), accel %s, bandwidth %s, completion timeout '
              '%s s/GiB then %s' % (
                  self.args.per_rate, self.args.accel,
                  '%d MiB/s' % self.args.bandwidth if self.args.bandwidth
                  else 'unlimited', self.args.completion_timeout,
                  self.args.timeout_action))
        print('%-7s %-10s %9s %9s %9s %9s %9s %8s' % (
            'dirty', 'outcome', 'move p50', 'QEMU p50', 'QEMU max',
            'down p50', 'down max', 'MiB p50'))
        print('  (move: the request to ACTIVE on the destination, disk '
              'mirror included; QEMU: its memory migration)')
        for rate in self.args.rates:
            image = self.image('dirty-%d' % rate, 'dirty=%d' % rate)
            outcomes, sids, moves = [], [], []
            for _ in range(self.args.per_rate):
                sid = self.boot(image, flavor)
                self.wait_beat(sid, 'qemu1', above=3)
                migration, took = self.live(sid)
                outcomes.append(migration['status'])
                moves.append(took)
                sids.append(sid)
            logged = self.logged()
            rows = [logged[s] for s in sids if s in logged]
            total = [float(r[2]) for r in rows]
            down = [float(r[3]) for r in rows if r[3] != 'None']
            mib = [int(r[4]) for r in rows]
            print('%-7s %-10s %9s %9s %9s %9s %9s %8s' % (
                '%d MB/s' % rate, ','.join(sorted(set(outcomes))),
                '%.2f s' % pct(moves, .5),
                '%.2f s' % pct(total, .5) if total else '-',
                '%.2f s' % max(total) if total else '-',
                '%.0f ms' % pct(down, .5) if down else '-',
                '%.0f ms' % max(down) if down else '-',
                pct(mib, .5) if mib else '-'))
            for sid in sids:
                self.admin.delete('/servers/%s' % sid, expect=204)

    def cold(self, flavor):
        mb = self.args.cold_disk_mb
        disk = os.path.join(self.root, 'full.raw')
        with open(disk, 'wb') as f:
            for _ in range(mb):
                f.write(os.urandom(1024 * 1024))
        image = self.image('full-disk', disk=disk)
        sid = self.boot(image, flavor)
        started = time.monotonic()
        self.admin.action(sid, {'migrate': {'host': 'qemu2'}},
                          version='2.56', expect=202)
        self.admin.wait_for_status(sid, 'VERIFY_RESIZE', timeout=900)
        took = time.monotonic() - started
        self.admin.action(sid, {'confirmResize': None}, expect=204)
        self.admin.wait_for_status(sid, 'ACTIVE', timeout=120)
        print('cold migration of a guest with %d MiB of data on its disk '
              '(random, qcow2 over NBD): %.1f s to VERIFY_RESIZE' % (
                  mb, took))
        self.admin.delete('/servers/%s' % sid, expect=204)

    def drain(self, flavor):
        image = self.image('drain', 'dirty=%d' % self.args.drain_dirty)
        sids = [self.boot(image, flavor) for _ in range(self.args.drain)]
        body = {'host': 'qemu1', 'mode': 'live'}
        plan = self.admin.post('/os-host-drains', dict(body, check=True),
                               expect=200).json()['host_drain_plan']
        eta = plan['eta_seconds']
        started = time.monotonic()
        drain = self.admin.post('/os-host-drains', body,
                                expect=202).json()['host_drain']
        self.admin.wait_for(
            lambda: self.admin.get('/os-host-drains/%s' % drain['id'],
                                   expect=200).json()['host_drain'][
                'status'] in ('completed', 'cancelled'),
            timeout=1800, interval=0.5, what='the drain')
        took = time.monotonic() - started
        done = self.admin.get('/os-host-drains/%s' % drain['id'],
                              expect=200).json()['host_drain']['counts']
        print('drain of %d real guests (live, dirty %d MB/s): ETA %.1f s, '
              'actual %.1f s (%+.0f%%), counts %s' % (
                  len(sids), self.args.drain_dirty, eta, took,
                  100.0 * (took - eta) / eta, done))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--per-rate', type=int, default=3)
    parser.add_argument('--rates', type=lambda s: [int(x) for x in
                                                   s.split(',')],
                        default=[0, 10, 50])
    parser.add_argument('--cold-disk-mb', type=int, default=1024)
    parser.add_argument('--drain', type=int, default=20)
    parser.add_argument('--drain-dirty', type=int, default=0)
    parser.add_argument('--completion-timeout', type=int, default=800)
    parser.add_argument('--bandwidth', type=int, default=0,
                        help='[qemu] live_migration_bandwidth, MiB/s')
    parser.add_argument('--timeout-action', default='abort',
                        choices=['abort', 'force_complete'])
    parser.add_argument('--accel', default='tcg')
    parser.add_argument('--guest', default=os.path.join(REPO, '.test-guest'))
    args = parser.parse_args(argv)
    if not os.path.exists(os.path.join(args.guest, 'vmlinuz')):
        subprocess.run([os.path.join(REPO, 'tools', 'build-test-guest.sh'),
                        args.guest], check=True)
    Bench(args).run()
    return 0


if __name__ == '__main__':
    sys.exit(main())
