"""Self-fencing across a real partition: compute2 reaches the broker
through a TCP proxy (tests/functional/tcp_proxy_fixture.py) and runs with
``[compute] fence_after`` below service_down_time. The path is cut for
CUT seconds, the process never signalled. Within fence_after it pauses
its guests; once shown down two of its three servers are evacuated
(without a force-down: "down" is enough for the API); at the heal it
removes the evacuated copies and gives the third its guest back.

Sampled every SAMPLE seconds from before the cut until the host is
settled again, from the fake hypervisors' state files: the moments at
which any server runs on two hosts. There must be none (the partition
test without fencing has to except the cut-off host while it is cut)."""
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import testtools
import testtools.content as content

from nova_moves.harness import invariants
from tests.functional import tcp_proxy_fixture
from tests.functional import test_evacuate

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PROXIED = 'compute2'
FENCE_AFTER = 5
CUT = 60
SAMPLE = 0.5


def running_on(guests):
    """{server uuid: [hosts its guest runs on]}"""
    running = {}
    for host, held in guests.items():
        for uuid, guest in held.items():
            if guest.get('power') == 'running':
                running.setdefault(uuid, []).append(host)
    return running


class FencePartitionTest(tcp_proxy_fixture.OnBrokerProxy,
                         test_evacuate.EvacuateBase):
    COMPUTES = 2

    @classmethod
    def before_stack(cls):
        cls.COMPUTES = [{'name': 'compute1'},
                        {'name': PROXIED, 'broker_port': cls.proxy.port,
                         'compute': {'fence_after': FENCE_AFTER}}]

    def _sample(self, ids):
        """Start sampling: (the samples so far, the stop event, the
        thread)."""
        state = os.path.join(self.stack.workdir, 'state')
        samples, stop = [], threading.Event()
        sampler = threading.Thread(target=self._sampler,
                                   args=(state, ids, samples, stop),
                                   daemon=True)
        sampler.start()
        self.addCleanup(stop.set)
        return samples, stop, sampler

    def _sampler(self, state, ids, samples, stop):
        while not stop.is_set():
            at = time.monotonic()
            running = running_on(invariants.read_guests(state))
            twice = sorted(u for u in ids if len(running.get(u, [])) > 1)
            fenced = not any(PROXIED in running.get(u, []) for u in ids)
            samples.append((at, twice, fenced))
            stop.wait(max(0.0, SAMPLE - (time.monotonic() - at)))

    def test_cut_off_host_fences_before_evacuation(self):
        ids = [self.boot('fence-%d' % i, host=PROXIED)['id']
               for i in range(3)]
        evacuated, kept = ids[:2], ids[2]
        samples, stop, sampler = self._sample(ids)
        time.sleep(1)

        self.proxy.cut()
        cut_at = time.monotonic()
        self.wait_service_state(PROXIED, 'down', timeout=30)
        down_at = time.monotonic()
        for server_id in evacuated:
            self.admin.action(server_id, {'evacuate': {}}, version='2.68',
                              expect=200)
        for server_id in evacuated:
            moved = self.admin.wait_for_status(server_id, 'ACTIVE',
                                               timeout=60)
            self.assertEqual('compute1', moved['OS-EXT-SRV-ATTR:host'])
        evacuated_at = time.monotonic()
        time.sleep(max(0.0, CUT - (time.monotonic() - cut_at)))
        self.proxy.heal()
        healed_at = time.monotonic()

        def settled():
            guests = self.local_guests(PROXIED)
            return not any(u in guests for u in evacuated) and \
                guests.get(kept, {}).get('power') == 'running'
        self.admin.wait_for(settled, timeout=60, interval=0.2,
                            what='%s settled after the heal' % PROXIED)
        settled_at = time.monotonic()
        self.wait_service_state(PROXIED, 'up')
        time.sleep(2 * SAMPLE)
        stop.set()
        sampler.join(5)

        during_cut = [s for s in samples if cut_at <= s[0] <= healed_at]
        twice = [s for s in samples if s[1]]
        fenced_at = next((s[0] for s in samples
                          if s[0] >= cut_at and s[2]), None)
        report = (
            'cut %.0fs, fence_after %ds, service_down_time %ds: fenced '
            '%.1fs after the cut, shown down %.1fs after, 2 evacuated by '
            '%.1fs; healed, settled %.1fs after the heal; samples %d (%d '
            'during the cut, every %.1fs); moments with two running '
            'copies: %d' % (
                CUT, FENCE_AFTER, self.stack.service_down_time,
                (fenced_at - cut_at) if fenced_at else -1, down_at - cut_at,
                evacuated_at - cut_at, settled_at - healed_at, len(samples),
                len(during_cut), SAMPLE, len(twice)))
        self.addDetail('partition-fence', content.text_content(report))
        print(report)
        self.assertEqual([], twice, report)
        self.assertIsNotNone(fenced_at, report)
        self.assertLess(fenced_at, down_at, report)
        self.assertGreater(len(during_cut), CUT / SAMPLE * 0.8, report)

        # The kept server is its own again, its row as its guest.
        server = self.admin.server(kept)
        self.assertEqual(('ACTIVE', PROXIED, 1, None), (
            server['status'], server['OS-EXT-SRV-ATTR:host'],
            server['OS-EXT-STS:power_state'],
            server['OS-EXT-STS:task_state']), report)
        log = self.stack.log(PROXIED)
        self.assertIn('Self-fencing %s: no report got through' % PROXIED,
                      log)
        over = log[log.index('Self-fencing of %s over' % PROXIED):]
        over = over[:over.index('\n')]
        self.assertIn('%s restored' % kept, over)
        for server_id in evacuated:
            self.assertIn('%s not restored: the server is on compute1'
                          % server_id, over)
            self.assertEqual('compute1', self.admin.server(server_id)[
                'OS-EXT-SRV-ATTR:host'])
        # The evacuated copies went before the restore was reported.
        self.assertLess(log.index('Destroying local copy of %s'
                                  % evacuated[0]),
                        log.index('Self-fencing of %s over' % PROXIED))
        for server_id in ids:
            self.admin.delete('/servers/%s' % server_id, expect=204)

    def test_forced_down_host_stays_fenced_until_lifted(self):
        """The Masakari way: forced down, then evacuated. Back from the
        cut, the host keeps its other guest fenced while forced down."""
        ids = [self.boot('forced-%d' % i, host=PROXIED)['id']
               for i in range(2)]
        evacuated, kept = ids
        samples, stop, sampler = self._sample(ids)
        self.proxy.cut()
        self.addCleanup(self.set_forced_down, PROXIED, False)
        self.wait_service_state(PROXIED, 'down', timeout=30)
        self.set_forced_down(PROXIED, True)
        self.admin.action(evacuated, {'evacuate': {}}, version='2.68',
                          expect=200)
        self.admin.wait_for_status(evacuated, 'ACTIVE', timeout=60)
        self.proxy.heal()
        self.admin.wait_for(
            lambda: evacuated not in self.local_guests(PROXIED),
            timeout=60, interval=0.2, what='evacuated copy removed')
        # Reporting again (forced down), its kept guest still paused.
        self.admin.wait_for(
            lambda: 'is forced down: its fenced guests stay fenced until '
            'it is not: %s\n' % kept in self.stack.log(PROXIED),
            timeout=30, interval=0.2,
            what='kept fenced while forced down')
        time.sleep(3)
        self.assertEqual('paused',
                         self.local_guests(PROXIED)[kept]['power'])
        self.set_forced_down(PROXIED, False)
        self.admin.wait_for(
            lambda: self.local_guests(PROXIED)[kept]['power'] ==
            'running', timeout=30, interval=0.2, what='restored')
        stop.set()
        sampler.join(5)
        twice = [s for s in samples if s[1]]
        report = 'forced down: samples %d, two running copies: %d' % (
            len(samples), len(twice))
        self.addDetail('partition-fence-forced', content.text_content(
            report))
        print(report)
        self.assertEqual([], twice, report)
        server = self.admin.server(kept)
        self.assertEqual(('ACTIVE', PROXIED, 1), (
            server['status'], server['OS-EXT-SRV-ATTR:host'],
            server['OS-EXT-STS:power_state']))
        for server_id in ids:
            self.admin.delete('/servers/%s' % server_id, expect=204)


class FenceConfigRefusedTest(testtools.TestCase):
    """nova-moves-compute refuses to start (before it reaches for the
    broker) when the fence could come after the host is shown down."""

    def test_fence_after_not_below_service_down_time(self):
        tmp = tempfile.mkdtemp(prefix='nm-fence-conf-')
        self.addCleanup(shutil.rmtree, tmp, True)
        path = os.path.join(tmp, 'compute.conf')
        with open(path, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\nreport_interval = 2\n'
                    'service_down_time = 10\n'
                    'transport_url = rabbit://nobody:x@127.0.0.1:9/\n'
                    '[compute]\nfence_after = 10\n' % tmp)
        proc = subprocess.run(
            [sys.executable, '-c',
             'import sys; sys.argv[0] = "nova-moves-compute"; '
             'from nova_moves.cmd.compute import main; main()',
             '--config-file', path],
            env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True,
            text=True, timeout=60)
        self.assertEqual(1, proc.returncode, proc.stderr)
        self.assertIn('nova-moves-compute: [compute] fence_after (10s) '
                      'must be less than [DEFAULT] service_down_time (10s)',
                      proc.stderr)
        self.assertFalse(os.path.exists(os.path.join(tmp, 'fence')))
