"""A step's message delivered twice, or arriving after its move was
rolled back, changes nothing.

oslo.messaging acknowledges before the handler runs, a restarted consumer
has no memory of what it handled, and the stuck-move sweep re-sends a
step it thinks was lost: every step handler must therefore find out from
the database whether its work is still wanted. A tap on the stack's
exchange captures each step's real message while a move runs; once the
move has come to rest, the test sends each captured message again (a
fresh oslo id, so only the handler can tell it is stale) and asserts that
the server, its migrations, its allocations and the hypervisors' guests
stay exactly as they were."""
import os
import shutil
import tempfile
import time

from nova_moves import rpcstats
from tests.functional import rpc_injector
from tests.functional import evacuate_base

# How long a resent step is given to do harm: the fake operations take
# 0.05 s, a whole cascade of steps well under a second. A step whose
# resent copies were all handled (the processes' rpcstats counters) and
# changed nothing is not waited for further.
SETTLE = float(os.environ.get('NOVA_MOVES_REPLAY_SETTLE', '2.5'))

RESIZE_STEPS = ('conductor.migrate_server', 'scheduler.select_destinations',
                'compute.prep_resize', 'compute.resize_instance',
                'compute.finish_resize')
LIVE_STEPS = ('conductor.live_migrate_instance',
              'scheduler.select_destinations',
              'compute.check_can_live_migrate_destination',
              'compute.check_can_live_migrate_source',
              'compute.live_migration', 'compute.pre_live_migration',
              'compute.post_live_migration_at_destination')
EVACUATE_STEPS = ('conductor.rebuild_instance',
                  'scheduler.select_destinations', 'compute.rebuild_instance')


# EvacuateBase: killing, forcing down and restoring a host.
class DuplicateBase(evacuate_base.EvacuateBase):
    """The tap, the snapshot and the moves; no tests of its own."""
    COMPUTES = 2

    @classmethod
    def setUpClass(cls):
        cls.stats_dir = tempfile.mkdtemp(prefix='nm-rpc-stats-')
        # A server per test: more than the default per-project quota of
        # 10. The counters tell when a resent step has been handled.
        cls.EXTRA_CONF = {
            'quota': {'instances': -1, 'cores': -1, 'ram': -1},
            'DEFAULT': {'rpc_stats_dir': cls.stats_dir}}
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.stats_dir, ignore_errors=True)

    def handled(self, step):
        """(messages of ``step`` handled, in flight) over every process."""
        _merged, processes = rpcstats.merge_dir(self.stats_dir)
        return (sum(p['counts'].get('handle', {}).get(step, 0)
                    for p in processes),
                sum(p['in_flight'].get(step, 0) for p in processes))

    def setUp(self):
        super().setUp()
        self.tap = rpc_injector.RpcTap(self.stack.transport_url).start()
        self.addCleanup(self.tap.stop)

    def boot(self, *args, **kwargs):
        server = super().boot(*args, **kwargs)
        # Only the move's messages from here on: the boot's own
        # select_destinations is no step of a move.
        self.tap.clear()
        return server

    # -- what must not change -------------------------------------------
    def snapshot(self, server_id):
        server = self.admin.server(server_id, version='2.47')
        migrations = self.admin.migrations(instance_uuid=server_id)
        consumers = {server_id} | {m['uuid'] for m in migrations}
        allocations = self.admin.placement()['allocations']
        return {
            'server': {k: server.get(k) for k in (
                'status', 'OS-EXT-STS:vm_state', 'OS-EXT-STS:task_state',
                'OS-EXT-STS:power_state', 'OS-EXT-SRV-ATTR:host')},
            'flavor': server['flavor']['original_name'],
            'migrations': sorted((m['uuid'], m['status'], m['dest_compute'])
                                 for m in migrations),
            'allocations': {c: allocations[c] for c in consumers
                            if c in allocations},
            'guests': {h: self.local_guests(h).get(server_id)
                       for h in self.stack.compute_hosts()},
        }

    def replay(self, server_id, steps):
        """Resend each step's captured messages; a dict step -> what it
        changed (empty when every step was harmless)."""
        changed = {}
        for step in steps:
            topic, method = step.split('.')
            found = [c for c in self.tap.find(method, mentioning=server_id)
                     if c.topic == topic]
            self.assertTrue(found, '%s of %s never crossed the bus; seen %s'
                            % (step, server_id, self.tap.captured))
            before = self.snapshot(server_id)
            done = self.handled(step)[0] + len(found)
            for captured in found:
                self.tap.resend(captured)
            diff = self._settle(server_id, before, step, done)
            if diff:
                changed[step] = diff
        return changed

    def _settle(self, server_id, before, step, done):
        deadline = time.monotonic() + SETTLE
        while True:
            # Counters first: a snapshot taken after every copy was
            # handled sees whatever those handlers wrote.
            handled, in_flight = self.handled(step)
            after = self.snapshot(server_id)
            if after != before:
                # Give a cascade its time, then report where it ended.
                time.sleep(SETTLE)
                after = self.snapshot(server_id)
                return {k: (before[k], after[k]) for k in before
                        if before[k] != after[k]}
            if (handled >= done and not in_flight) or \
                    time.monotonic() > deadline:
                return None
            time.sleep(0.1)

    # -- the moves ------------------------------------------------------
    def start_resize(self, server, flavor=None):
        body = ({'resize': {'flavorRef': flavor['id']}} if flavor
                else {'migrate': None})
        self.admin.action(server['id'], body, version='2.56', expect=202)
        return self.admin.wait_for_status(server['id'], 'VERIFY_RESIZE')

    def confirm(self, server):
        self.admin.action(server['id'], {'confirmResize': None}, expect=204)
        return self.admin.wait_for_status(server['id'], 'ACTIVE')

    def revert(self, server):
        self.admin.action(server['id'], {'revertResize': None}, expect=202)
        return self.admin.wait_for_status(server['id'], 'ACTIVE')

    def migration_status(self, server):
        migrations = self.admin.migrations(instance_uuid=server['id'])
        return migrations[0]['status'] if migrations else None

    def assertHarmless(self, changed):
        self.assertEqual({}, changed)

    # -- live migration -------------------------------------------------
    def live(self, server, expect_status='ACTIVE'):
        self.admin.action(server['id'], {'os-migrateLive': {
            'host': None, 'block_migration': 'auto'}},
            version='2.34', expect=202)
        self.admin.wait_for(
            lambda: self.migration_status(server) in (
                'completed', 'error', 'failed'), timeout=60,
            what='live migration of %s over' % server['id'])
        shown = self.admin.wait_for_status(server['id'], expect_status)
        # The other host drops its copy just after: wait for one copy.
        self.admin.wait_for(
            lambda: {h for h in self.stack.compute_hosts()
                     if server['id'] in self.local_guests(h)} == {
                shown['OS-EXT-SRV-ATTR:host']},
            timeout=30, what='one copy of %s' % server['id'])
        return shown

    def evacuate_away(self, server, expect_status='ACTIVE'):
        self.fail_host('compute1')
        self.admin.action(server['id'], {'evacuate': {}}, version='2.68',
                          expect=200)
        return self.admin.wait_for_status(server['id'], expect_status)


class DuplicateStepsTest(DuplicateBase):

    # -- resize / cold migrate: each step again once at VERIFY_RESIZE ------
    def test_resize_steps_twice(self):
        server = self.boot('dup-resize', host='compute1')
        resized = self.start_resize(server, self.flavor('medium', 2, 1024))
        self.assertHarmless(self.replay(server['id'], RESIZE_STEPS))
        # Still a sound resize: confirming it ends on the destination.
        done = self.confirm(server)
        self.assertEqual(resized['OS-EXT-SRV-ATTR:host'],
                         done['OS-EXT-SRV-ATTR:host'])
        self.assertEqual(2, done['flavor']['vcpus'])

    def test_cold_migrate_steps_twice(self):
        server = self.boot('dup-migrate', host='compute1')
        self.start_resize(server)
        self.assertHarmless(self.replay(server['id'], RESIZE_STEPS))
        done = self.confirm(server)
        self.assertEqual('compute2', done['OS-EXT-SRV-ATTR:host'])

    def test_confirm_twice(self):
        server = self.boot('dup-confirm', host='compute1')
        self.start_resize(server)
        self.confirm(server)
        self.assertHarmless(self.replay(server['id'],
                                        ('compute.confirm_resize',)))

    def test_revert_steps_twice(self):
        server = self.boot('dup-revert', host='compute1')
        self.start_resize(server, self.flavor('medium', 2, 1024))
        reverted = self.revert(server)
        self.assertEqual('compute1', reverted['OS-EXT-SRV-ATTR:host'])
        self.assertHarmless(self.replay(
            server['id'], ('compute.revert_resize',
                           'compute.finish_revert_resize')))

    # -- steps of a move that was rolled back -------------------------------
    def test_resize_steps_after_revert(self):
        server = self.boot('late-after-revert', host='compute1')
        self.start_resize(server, self.flavor('medium', 2, 1024))
        self.revert(server)
        self.assertHarmless(self.replay(server['id'], RESIZE_STEPS))

    def test_resize_steps_after_failed_finish(self):
        server = self.boot('late-after-failure', host='compute1')
        self.admin.set_faults('compute2', ['finish_migration'])
        self.addCleanup(self.admin.set_faults, 'compute2', [])
        self.admin.action(server['id'], {'migrate': None}, version='2.56',
                          expect=202)
        self.admin.wait_for(
            lambda: self.migration_status(server) in ('error', 'failed'),
            timeout=60, what='migration failed')
        shown = self.admin.wait_for_status(server['id'], 'ACTIVE')
        self.assertEqual('compute1', shown['OS-EXT-SRV-ATTR:host'])
        # The source powers its copy back on after the rollback (a cast):
        # the state the replays must leave alone is the settled one.
        self.admin.wait_for(
            lambda: (self.local_guests('compute1').get(server['id']) or
                     {}).get('power') == 'running',
            timeout=30, what='old copy powered back on')
        self.admin.set_faults('compute2', [])
        self.assertHarmless(self.replay(server['id'], RESIZE_STEPS))

    def test_live_migration_steps_twice(self):
        server = self.boot('dup-live', host='compute1')
        moved = self.live(server)
        self.assertEqual('compute2', moved['OS-EXT-SRV-ATTR:host'])
        self.assertHarmless(self.replay(server['id'], LIVE_STEPS))

    def test_live_migration_steps_after_rollback(self):
        server = self.boot('late-live', host='compute1')
        self.admin.set_faults('compute2', ['pre_live_migration'])
        self.addCleanup(self.admin.set_faults, 'compute2', [])
        shown = self.live(server)
        self.assertEqual('compute1', shown['OS-EXT-SRV-ATTR:host'])
        self.admin.set_faults('compute2', [])
        # The move ended at pre_live_migration: the last step never ran.
        self.assertHarmless(self.replay(server['id'], LIVE_STEPS[:-1]))

    # -- evacuate -------------------------------------------------------
    def test_evacuate_steps_twice(self):
        server = self.boot('dup-evacuate', host='compute1')
        moved = self.evacuate_away(server)
        self.assertEqual('compute2', moved['OS-EXT-SRV-ATTR:host'])
        self.assertHarmless(self.replay(server['id'], EVACUATE_STEPS))
        # The source, back, still cleans up after the evacuation.
        self.restore_host('compute1')
        self.assertNotIn(server['id'], self.local_guests('compute1'))

    def test_evacuate_steps_after_failed_rebuild(self):
        server = self.boot('late-evacuate', host='compute1')
        self.admin.set_faults('compute2', ['rebuild'])
        self.addCleanup(self.admin.set_faults, 'compute2', [])
        shown = self.evacuate_away(server, 'ERROR')
        self.assertEqual('compute1', shown['OS-EXT-SRV-ATTR:host'])
        self.admin.set_faults('compute2', [])
        self.assertHarmless(self.replay(server['id'], EVACUATE_STEPS))
        self.restore_host('compute1')
        self.admin.delete('/servers/%s' % server['id'], expect=204)


def compute_steps(steps):
    return tuple(s for s in steps if s.startswith('compute.'))


class DuplicateInFlightTest(DuplicateBase):
    """Each compute step doubled the moment it is sent, while the move
    runs: what a redelivery or the sweep's re-drive does (a stack of its
    own, so that a failure here does not spill into the tests above).
    The conductor's and scheduler's messages are doubled once the move
    is over (DuplicateStepsTest)."""

    # -- duplicates while the move runs ------------------------------------
    def doubled_in_flight(self, server_id, steps, done):
        """Resend every step of the move the moment the tap sees it, until
        ``done()`` holds; the steps that were doubled."""
        wanted = {tuple(step.split('.')) for step in steps}
        doubled, seen = [], set()
        deadline = time.monotonic() + 60
        while not done():
            self.assertLess(time.monotonic(), deadline, 'move never ended')
            for captured in self.tap.find(None, mentioning=server_id):
                key = (captured.topic, captured.method)
                unique = captured.message.get(rpc_injector.UNIQUE_ID)
                if key in wanted and unique not in seen:
                    seen.add(unique)
                    seen.add(self.tap.resend(captured)[
                        rpc_injector.UNIQUE_ID])
                    doubled.append('.'.join(key))
            time.sleep(0.02)
        time.sleep(SETTLE)
        return doubled

    def test_cold_migrate_with_every_step_doubled_in_flight(self):
        server = self.boot('dup-inflight', host='compute1')
        self.admin.action(server['id'], {'migrate': None}, version='2.56',
                          expect=202)
        steps = compute_steps(RESIZE_STEPS)
        doubled = self.doubled_in_flight(
            server['id'], steps, lambda: self.admin.server(
                server['id'])['status'] in ('VERIFY_RESIZE', 'ACTIVE',
                                            'ERROR'))
        self.assertEqual(set(steps), set(doubled))
        shown = self.admin.wait_for_status(server['id'], 'VERIFY_RESIZE')
        self.assertEqual('compute2', shown['OS-EXT-SRV-ATTR:host'])
        self.assertIsNone(shown['OS-EXT-STS:task_state'])
        done = self.confirm(server)
        self.assertEqual('compute2', done['OS-EXT-SRV-ATTR:host'])

    def test_live_migration_with_every_step_doubled_in_flight(self):
        server = self.boot('dup-live-inflight', host='compute1')
        self.admin.action(server['id'], {'os-migrateLive': {
            'host': None, 'block_migration': 'auto'}},
            version='2.34', expect=202)

        def over():
            return self.migration_status(server) in (
                'completed', 'error', 'failed')
        steps = compute_steps(LIVE_STEPS)
        doubled = self.doubled_in_flight(server['id'], steps, over)
        self.assertEqual(set(steps), set(doubled))
        shown = self.admin.wait_for_status(server['id'], 'ACTIVE')
        self.assertEqual('compute2', shown['OS-EXT-SRV-ATTR:host'])
        self.assertEqual('completed', self.admin.migrations(
            instance_uuid=server['id'])[0]['status'])
