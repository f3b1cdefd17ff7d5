"""Network partitions: ONE process reaches the broker through a TCP proxy
(tests/functional/tcp_proxy_fixture.py) that cuts the path (every
connection reset, reconnects refused) and heals it. The process is never
signalled: it runs on, with its guests, only its broker is out of reach.

- A compute cut for less than service_down_time: the moves in flight
  through it finish.
- A compute cut long enough to be reported down, its server evacuated by
  the operator (force-down), then healed WITHOUT a restart: it removes
  the evacuated copy BEFORE it reports up again. "One running copy per
  server" is sampled throughout, the partitioned host excepted only while
  it is fenced (cut, or healed but not yet reported).
- A conductor cut with moves in flight: every move ends (finished, or
  rolled back by the sweep), none stuck, nothing leaked."""
import datetime
import os
import threading
import time

import testtools.content as content

from nova_moves.harness import invariants
from tests.functional import base
from tests.functional import moves_in_flight
from tests.functional import tcp_proxy_fixture
from tests.functional import evacuate_base

SERVICE_DOWN_TIME = 10
PROXIED = 'compute2'


def _utcnow():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def _parse(stamp):
    return datetime.datetime.fromisoformat(stamp.rstrip('Z'))


class ComputePartitionTest(tcp_proxy_fixture.OnBrokerProxy,
                           moves_in_flight.MovesMixin,
                           evacuate_base.EvacuateBase):
    """compute2 reaches the broker through the proxy; compute1 and
    compute3 directly."""
    COMPUTES = 3
    EXTRA_CONF = {'DEFAULT': {'stuck_move_timeout': 60},
                  'compute': {'operation_seconds': 'migrate_disk:1.0,'
                                                    'finish_migration:0.5,'
                                                    'live_migration:1.0'}}

    @classmethod
    def before_stack(cls):
        cls.COMPUTES = [{'name': 'compute1'},
                        {'name': PROXIED, 'broker_port': cls.proxy.port},
                        {'name': 'compute3'}]

    @classmethod
    def stack_options(cls):
        return {'service_down_time': SERVICE_DOWN_TIME}

    def test_short_cut_moves_in_flight_finish(self):
        """Cut for less than service_down_time while cold migrations,
        resizes and live migrations from and to compute2 run."""
        with open(os.path.join(self.stack.workdir, PROXIED + '.conf')) as f:
            self.assertIn(':%d/' % self.proxy.port, f.read())
        self.assertGreater(self.proxy.connections(), 0)
        from_proxied = self.boot_on([PROXIED], 6, 'from')
        to_proxied = self.boot_on(['compute1', 'compute3'], 6, 'to')
        big = self.flavor('pp-big', 2, 256, 1)
        moves = []
        for i, server_id in enumerate(from_proxied):
            kind = i % 3
            if kind == 0:
                moves.append((server_id, {'migrate': None}, '2.56'))
            elif kind == 1:
                moves.append((server_id, {'resize': {
                    'flavorRef': big['id']}}, '2.56'))
            else:
                moves.append((server_id, {'os-migrateLive': {
                    'host': None, 'block_migration': 'auto'}}, '2.34'))
        for i, server_id in enumerate(to_proxied):
            if i % 2:
                moves.append((server_id, {'migrate': {'host': PROXIED}},
                               '2.56'))
            else:
                moves.append((server_id, {'os-migrateLive': {
                    'host': PROXIED, 'block_migration': 'auto'}}, '2.34'))
        ids = from_proxied + to_proxied
        mover = threading.Thread(target=self.move_all, args=(moves,))
        mover.start()
        time.sleep(1.0)
        in_flight = len(self.unsettled(ids))
        self.proxy.cut()
        cut_at = time.monotonic()
        time.sleep(SERVICE_DOWN_TIME / 2.0)
        self.proxy.heal()
        mover.join()
        seen_down = self.service(PROXIED)['state'] == 'down'
        pending = self.wait_settled(ids, timeout=120)
        outcomes = self.outcomes(ids)
        report = ('moves=%d in_flight_at_cut=%d cut=%.1fs pending=%s '
                  'outcomes=%s compute2_down_after_heal=%s' % (
                      len(moves), in_flight, SERVICE_DOWN_TIME / 2.0,
                      pending, outcomes, seen_down))
        self.addDetail('partition-short', content.text_content(report))
        print(report)
        self.assertEqual({}, pending, report)
        # Finished, not rolled back: the partition was shorter than any
        # timeout (cold moves park in 'finished', live ones complete).
        self.assertEqual(len(moves), outcomes.get('finished', 0) +
                         outcomes.get('completed', 0), report)
        self.assertLess(time.monotonic() - cut_at, 150)
        self.confirm_finished(ids)
        self.wait_service_state(PROXIED, 'up')

    def test_long_cut_evacuated_copy_removed_before_reporting_up(self):
        server = self.boot('cut-off', host=PROXIED)
        pid = self.stack.processes[PROXIED].popen.pid
        violations = []
        fenced = threading.Event()
        fenced.set()  # until the heal, and until the first report after
        stop = threading.Event()
        state = os.path.join(self.stack.workdir, 'state')

        def watch():
            # "One running copy per server", sampled all along.
            while not stop.is_set():
                try:
                    servers = [self.admin.server(server['id'])]
                    down = {PROXIED} if fenced.is_set() else set()
                    problems = invariants.running_copies(
                        servers, invariants.read_guests(state),
                        down_hosts=down)
                    dup = [p for p in problems if 'runs on 2' in p]
                    if dup:
                        violations.append((time.monotonic(), dup))
                except Exception:
                    pass
                stop.wait(0.1)
        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        self.addCleanup(stop.set)

        self.proxy.cut()
        self.addCleanup(self.set_forced_down, PROXIED, False)
        self.admin.wait_for(lambda: self.service(PROXIED)['state'] ==
                            'down', timeout=60, interval=0.5,
                            what='%s down' % PROXIED)
        self.set_forced_down(PROXIED, True)
        self.admin.action(server['id'], {'evacuate': {}}, version='2.68',
                          expect=200)
        moved = self.admin.wait_for_status(server['id'], 'ACTIVE',
                                           timeout=60)
        self.assertNotEqual(PROXIED, moved['OS-EXT-SRV-ATTR:host'])
        # The cut-off host still holds its copy (it never heard).
        self.assertIn(server['id'], self.local_guests(PROXIED))
        # Long past service_down_time since its last report.
        time.sleep(2)
        healed_at = _utcnow()
        healed = time.monotonic()
        self.proxy.heal()
        removed_at = None
        first_report = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (removed_at is None or
                                               first_report is None):
            if removed_at is None and \
                    server['id'] not in self.local_guests(PROXIED):
                removed_at = _utcnow()
            svc = self.service(PROXIED)
            if first_report is None and svc['updated_at'] and \
                    _parse(svc['updated_at']) >= healed_at:
                first_report = _parse(svc['updated_at'])
                fenced.clear()
            time.sleep(0.05)
        stop.set()
        watcher.join(5)
        report = ('copy removed %.2fs after the heal, first report %.2fs '
                  'after; duplicate-copy samples after reporting: %d' % (
                      (removed_at - healed_at).total_seconds()
                      if removed_at else -1,
                      (first_report - healed_at).total_seconds()
                      if first_report else -1, len(violations)))
        self.addDetail('partition-long', content.text_content(report))
        print(report)
        self.assertIsNotNone(removed_at, 'copy on %s never removed; %s'
                             % (PROXIED, report))
        self.assertIsNotNone(first_report, 'no report after the heal')
        # The copy went before the first report after the heal (the
        # report's stamp is written by the conductor after it arrived).
        self.assertLessEqual(removed_at - datetime.timedelta(seconds=0.2),
                             first_report, report)
        self.assertEqual([], violations, report)
        # The same process all along.
        self.assertEqual(pid, self.stack.processes[PROXIED].popen.pid)
        self.assertTrue(self.stack.processes[PROXIED].alive())
        log = self.stack.log(PROXIED)
        self.assertLess(log.index('settling what happened meanwhile'),
                        log.index('Destroying local copy of %s'
                                  % server['id']))
        # By the compute's own clock: the copy went before the first
        # report the conductor recorded after the heal.
        line = log[log.rindex('\n', 0, log.index(
            'Destroying local copy of %s' % server['id'])) + 1:]
        destroyed = datetime.datetime.strptime(line[:23],
                                               '%Y-%m-%d %H:%M:%S.%f')
        self.assertLess(destroyed, first_report, report)
        self.admin.wait_for(
            lambda: self.evacuation_of(server['id'])['status'] ==
            'completed', timeout=30, what='evacuation completed')
        self.set_forced_down(PROXIED, False)
        self.wait_service_state(PROXIED, 'up')
        self.assertLess(time.monotonic() - healed, 60)
        self.admin.delete('/servers/%s' % server['id'], expect=204)


class ConductorPartitionTest(tcp_proxy_fixture.OnBrokerProxy,
                             moves_in_flight.MovesMixin,
                             base.StackTestCase):
    """Two conductors; conductor2 reaches the broker through the proxy
    and is cut while cold migrations run through both."""
    COMPUTES = 3
    CONDUCTORS = 1
    EXTRA_CONF = {'DEFAULT': {'stuck_move_timeout': 20},
                  'compute': {'operation_seconds': 'migrate_disk:0.5'}}

    @classmethod
    def after_stack(cls):
        stack = cls.stack
        stack.add_process('conductor2', 'nova-moves-conductor',
                          stack._overlay('conductor2', {'DEFAULT': {
                              'host': 'conductor2',
                              'transport_url': stack.transport_url_via(
                                  cls.proxy.port)}}))
        cls.admin.wait_for(
            lambda: [s for s in cls.admin.services('nova-conductor')
                     if s['host'] == 'conductor2' and
                     s['state'] == 'up'] and cls.proxy.connections(),
            timeout=60, what='conductor2 up through the proxy')

    def _run(self, cut_for):
        ids = self.boot_on(self.stack.compute_hosts(), 18, 'cc')
        mover = threading.Thread(target=self.move_all, args=(
            [(i, {'migrate': None}, '2.56') for i in ids],))
        mover.start()
        time.sleep(0.5)
        in_flight = len(self.unsettled(ids))
        self.proxy.cut()
        time.sleep(cut_for)
        self.proxy.heal()
        mover.join()
        pending = self.wait_settled(ids, timeout=3 * 20 + 60)
        outcomes = self.outcomes(ids)
        report = ('moves=%d in_flight_at_cut=%d cut=%.1fs pending=%s '
                  'outcomes=%s' % (len(ids), in_flight, cut_for, pending,
                                   outcomes))
        self.addDetail('conductor-partition', content.text_content(report))
        print(report)
        self.assertEqual({}, pending, report)
        self.assertEqual(len(ids), sum(outcomes.values()), report)
        self.confirm_finished(ids)
        self.stack.wait_until_ready(60)
        return outcomes

    def test_conductor_cut_briefly(self):
        self._run(3)

    def test_conductor_cut_past_service_down_time(self):
        self._run(15)
