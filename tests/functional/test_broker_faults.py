"""The broker goes away while many moves are in flight.

The stack runs on a private RabbitMQ node (tests/functional/private_broker
.py) that the test stops gracefully and, separately, kills with SIGKILL
while NOVA_MOVES_BROKER_FAULT_MOVES cold migrations, resizes and live
migrations run. Queues are not durable: whatever was queued or being
published is lost with the node. Every move must still end (finished,
or rolled back by the stuck-move sweep) within the sweep's timeout, none
may stay in a task_state or a live migration status, and nothing may
leak (the invariant checks after the test)."""
import os
import time

import testtools.content as content

from tests.functional import base
from tests.functional import moves_in_flight
from tests.functional import private_broker

MOVES = int(os.environ.get('NOVA_MOVES_BROKER_FAULT_MOVES', '30'))
OUTAGE = float(os.environ.get('NOVA_MOVES_BROKER_FAULT_OUTAGE', '3'))
STUCK_MOVE_TIMEOUT = 20
KINDS = ('migrate', 'resize', 'live')


class BrokerFaultTest(private_broker.OnPrivateBroker,
                      moves_in_flight.MovesMixin, base.StackTestCase):
    COMPUTES = 3
    # Every fake operation takes half a second, so that most moves are
    # between two steps when the broker goes.
    # Room for every server twice over (a move holds source and
    # destination until it is confirmed), whatever MOVES is.
    # More servers than the default per-project quota of 10.
    EXTRA_CONF = {'DEFAULT': {'stuck_move_timeout': STUCK_MOVE_TIMEOUT},
                  'compute': {'default_operation_seconds': 0.5,
                              'vcpus': max(16, MOVES),
                              'memory_mb': max(32768, 512 * MOVES)},
                  'quota': {'instances': -1, 'cores': -1, 'ram': -1}}

    def setUp(self):
        super().setUp()
        # A test that failed with the node down must not take the next
        # one with it.
        self.addCleanup(self.broker.start)

    # -- the load: MOVES servers, a third of each kind of move ----------
    def start_moves(self, ids):
        big = self.flavor('bf-big', 2, 256, 1)
        bodies = {'migrate': ({'migrate': None}, '2.56'),
                  'resize': ({'resize': {'flavorRef': big['id']}}, '2.56'),
                  'live': ({'os-migrateLive': {
                      'host': None, 'block_migration': 'auto'}}, '2.34')}
        self.move_all([(server_id,) + bodies[KINDS[i % len(KINDS)]]
                       for i, server_id in enumerate(ids)], at_once=8)

    def run_through(self, fault):
        ids = self.boot_on(self.stack.compute_hosts(), MOVES, 'bf')
        started = time.monotonic()
        self.start_moves(ids)
        issued = time.monotonic()
        in_flight = len(self.unsettled(ids))
        fault()
        back = time.monotonic()
        # Every step that was lost must be noticed by the sweep: a step's
        # timeout after the broker is back, a second one for a re-driven
        # step that then fails, and slack for a loaded 2-core machine.
        deadline = back + 3 * STUCK_MOVE_TIMEOUT + 30
        settled_at = {}
        pending = self.unsettled(ids)
        while pending and time.monotonic() < deadline:
            now = time.monotonic()
            for server_id in set(ids) - set(pending) - set(settled_at):
                settled_at[server_id] = now - back
            time.sleep(0.5)
            pending = self.unsettled(ids)
        for server_id in set(ids) - set(pending) - set(settled_at):
            settled_at[server_id] = time.monotonic() - back
        outcomes = self.outcomes(ids)
        times = sorted(settled_at.values())
        report = ('moves=%d in_flight_at_fault=%d terminal=%d stuck=%d '
                  'moves_issued_in=%.1fs outage_and_restart=%.1fs '
                  'terminal_after_broker_back: median=%.1fs max=%.1fs '
                  'outcomes=%s' % (
                      len(ids), in_flight, len(ids) - len(pending),
                      len(pending), issued - started, back - issued,
                      times[len(times) // 2] if times else 0,
                      times[-1] if times else 0, outcomes))
        self.addDetail('broker-fault', content.text_content(report))
        print(report)
        self.assertEqual({}, pending, report)
        # And the services are all back (heartbeats through the broker).
        self.stack.wait_until_ready(90)

    def test_broker_stopped_and_started(self):
        self.run_through(lambda: self.broker.restart(down_for=OUTAGE))

    def test_broker_killed(self):
        def kill_and_start():
            self.broker.kill()
            time.sleep(OUTAGE)
            self.broker.start()
        self.run_through(kill_and_start)

    def test_lost_finish_resize_does_not_stay_forever(self):
        """The destination dies with finish_resize queued for it and then
        the broker restarts: the queue and the step in it are gone, and
        nobody holds the move. The sweep must finish it or roll it back."""
        server = self.boot('lost-finish', host='compute1')
        # The source's step takes 3 s: time to kill the destination
        # before its finish_resize is sent.
        self.admin.set_faults('compute1', [],
                              {'migrate_disk_and_power_off': 3})
        self.addCleanup(self.admin.set_faults, 'compute1', [], {})
        self.addCleanup(self._revive, 'compute2')
        self.admin.action(server['id'], {'migrate': {'host': 'compute2'}},
                          version='2.56', expect=202)
        self.wait_task_state(server, 'resize_migrating')
        self.stack.kill('compute2')
        # The source's step is over once its guest is powered off: it
        # casts finish_resize right after. (With chained steps, compute
        # RPC 1.5, the destination writes resize_migrated, so the
        # task_state cannot show it while the destination is dead.)
        self.admin.wait_for(
            lambda: self.local_guests('compute1').get(server['id'], {}).get(
                'power') == 'shutdown', timeout=30, interval=0.05,
            what='the source step of %s done' % server['id'])
        time.sleep(0.5)
        self.broker.restart(down_for=1)
        self._revive('compute2')
        self.stack.wait_until_ready(90)

        def over():
            shown = self.admin.server(server['id'])
            return shown if shown['OS-EXT-STS:task_state'] is None else None
        shown = self.admin.wait_for(over, timeout=3 * STUCK_MOVE_TIMEOUT + 30,
                                    what='lost finish_resize handled')
        self.assertIn(shown['status'], ('VERIFY_RESIZE', 'ACTIVE'))

    def wait_task_state(self, server, task_state):
        self.admin.wait_for(
            lambda: self.admin.server(server['id'])[
                'OS-EXT-STS:task_state'] == task_state,
            timeout=30, interval=0.05, what='%s in %s' % (server['id'],
                                                        task_state))

    def _revive(self, name):
        if not self.stack.processes[name].alive():
            self.stack.restart(name)
