"""A broker killed (SIGKILL) and restarted loses no step.

Topic queues are quorum queues and step messages persistent (the
project's default, nova_moves.rpc.RABBIT_DEFAULTS). The destination
compute is frozen (SIGSTOP) so that every move's prep_resize cast waits
in its queue, delivered but not acknowledged, when the private broker is
killed; the broker is started again and the compute thawed: the queued
steps are still there and every move finishes. With transient queues
(oslo.messaging's own default) the queue and its messages die with the
node: every step is lost, and the moves wait for the stuck-move sweep to
re-send it (measured: 20/20 re-sent, over 37 s after the broker's
return, against 0 re-sent and 4.5 s with quorum queues).

NOVA_MOVES_DURABLE_MOVES (default 20) sets the number of moves."""
import concurrent.futures
import os
import signal
import time

import testtools.content as content

from tests.functional import base
from tests.functional import private_broker

MOVES = int(os.environ.get('NOVA_MOVES_DURABLE_MOVES', '20'))
STUCK = 45  # the sweep rolls back a step stalled this long


class DurableBrokerTest(private_broker.OnPrivateBroker, base.StackTestCase):
    COMPUTES = 2
    EXTRA_CONF = {'DEFAULT': {'stuck_move_timeout': STUCK,
                              'service_down_time': 60, 'debug': 'false'},
                  'conductor': {'max_concurrent_migrations_per_cluster': 100,
                                'max_outbound_migrations_per_host': 100},
                  'compute': {'vcpus': max(16, MOVES),
                              'memory_mb': max(32768, 512 * MOVES)}}

    def thaw(self, name):
        proc = self.stack.processes[name]
        proc.signal(signal.SIGCONT)
        proc.stopped_on_purpose = False

    def test_broker_killed_with_steps_queued(self):
        flavor = self.flavor('durable', 1, 256, 1)
        ids = [self.admin.boot('d%d' % i, flavor['id'], host='compute1',
                               wait=False)['id'] for i in range(MOVES)]
        for server_id in ids:
            self.admin.wait_for_status(server_id, 'ACTIVE', timeout=120)
        self.stack.kill('compute2', signal.SIGSTOP, wait=0)
        self.addCleanup(self.thaw, 'compute2')

        def move(server_id):
            self.admin.action(server_id, {'migrate': {'host': 'compute2'}},
                              version='2.56', expect=202)
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            list(pool.map(move, ids))
        # Every move's prep_resize is cast (and waits in compute2's queue).
        self.admin.wait_for(lambda: all(
            m['status'] == 'pre-migrating' and m['dest_compute'] == 'compute2'
            for m in self.admin.migrations() if m['instance_uuid'] in ids)
            and len(self.admin.migrations()) >= MOVES,
            timeout=60, interval=0.5, what='prep_resize cast for every move')
        time.sleep(1)
        self.broker.kill()
        time.sleep(2)
        self.broker.start()
        self.thaw('compute2')
        back = time.monotonic()

        def settled():
            shown = {s['id']: s for s in self.admin.get(
                '/servers/detail', expect=200).json()['servers']}
            return all(shown[i]['OS-EXT-STS:task_state'] is None
                       for i in ids)
        self.admin.wait_for(settled, timeout=STUCK * 2 + 60, interval=1,
                            what='every move over')
        outcomes = {}
        for mig in self.admin.migrations():
            if mig['instance_uuid'] in ids:
                outcomes[mig['status']] = outcomes.get(mig['status'], 0) + 1
        log = self.stack.log('conductor1')
        lost = log.count('Re-sent the ')
        rolled_back = log.count('Rolled back interrupted move')
        took = time.monotonic() - back
        report = ('moves=%d outcomes=%s over_in=%.1fs after the broker '
                  'steps_lost_and_resent=%d rolled_back_for_lost=%d' % (
                      MOVES, outcomes, took, lost, rolled_back))
        self.addDetail('durable-broker', content.text_content(report))
        print(report)
        finished = outcomes.get('finished', 0)
        self.assertGreaterEqual(finished, 0.95 * MOVES, report)
        # Rolled back for a lost message: none; and no step was lost
        # (none waited for the sweep to re-send it).
        self.assertEqual(0, outcomes.get('error', 0) +
                         outcomes.get('failed', 0), report)
        self.assertEqual((0, 0), (lost, rolled_back), report)
        self.assertLess(took, STUCK, report)
        for server_id in ids:
            self.admin.action(server_id, {'confirmResize': None},
                              expect=204)
        for server_id in ids:
            self.admin.wait_for_status(server_id, 'ACTIVE', timeout=60)
        self.stack.wait_until_ready(90)
