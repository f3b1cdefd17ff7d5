"""Cold migrate, resize and evacuate end to end in one process
(tests/fixtures/inprocess.py): every hop of the brief's flows over
fake://, checked through the API as a user sees them -- server states,
the migration record and its statuses, the allocations held by the
server and by the migration, the instance action's events, the guests
on the fake hypervisors -- plus the invariants after each test, and
every guarded write each flow made checked against its step table
(tests/unit/flows/drift.py: a table that drifts from its handlers fails
here)."""
from nova_moves import moves
from tests.fixtures import inprocess
from tests.unit.flows import drift

SMALL = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}
MEDIUM = {'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 1}
# A confirmed cold migration's statuses, in order (brief: States).
CONFIRMED = ['pre-migrating', 'migrating', 'post-migrating', 'finished',
             'confirming', 'confirmed']


class _MoveTest(inprocess.TestCase):

    # The kind of move each test makes (its table is checked).
    KIND = None

    def setUp(self):
        super().setUp()
        self.recorder = self.useFixture(drift.GuardRecorder())
        self.addCleanup(self.assert_no_drift)

    def assert_no_drift(self):
        self.assertEqual([], self.recorder.problems())
        # The flow's writes were seen: the check cannot pass empty.
        self.assertIn(self.KIND, self.recorder.kinds())

    def allocations(self, consumer):
        """{host: resources} held by ``consumer``."""
        placement = self.admin.placement()
        hosts = {p['uuid']: name
                 for name, p in placement['resource_providers'].items()}
        return {hosts[rp]: resources for rp, resources in
                placement['allocations'].get(consumer, {}).items()}

    def migration_of(self, server):
        migrations = self.admin.migrations(instance_uuid=server['id'])
        self.assertEqual(1, len(migrations), migrations)
        return migrations[0]

    def events(self, server, action_index=0):
        """{event: result} of the server's newest action (or older ones
        by index), once every event has finished."""
        request_id = self.admin.actions(server['id'])[action_index][
            'request_id']

        def finished():
            detail = self.admin.action_detail(server['id'], request_id)
            if all(e['finish_time'] for e in detail['events']):
                return {e['event']: e['result'] for e in detail['events']}
        return self.admin.wait_for(finished, timeout=10,
                                   what='events finished')

    def host_of(self, server):
        return server['OS-EXT-SRV-ATTR:host']


class ColdMigrateTest(_MoveTest):

    KIND = moves.cold

    def test_cold_migrate_then_confirm(self):
        server = self.boot(self.flavor(), host='compute1')
        self.admin.action(server['id'], {'migrate': None}, version='2.56',
                          expect=202)
        shown = self.admin.wait_for_status(server['id'], 'VERIFY_RESIZE')
        self.assertEqual(('compute2', 'resized'), (
            self.host_of(shown), shown['OS-EXT-STS:vm_state']))
        mig = self.migration_of(server)
        self.assertEqual(
            ('finished', 'migration', 'compute1', 'compute2'),
            (mig['status'], mig['migration_type'], mig['source_compute'],
             mig['dest_compute']))
        # The source half is held by the migration until the confirm.
        self.assertEqual({'compute1': SMALL}, self.allocations(mig['uuid']))
        self.assertEqual({'compute2': SMALL}, self.allocations(server['id']))
        self.assertIn(server['id'], self.stack.guests('compute2'))
        self.assertEqual(
            {'conductor_migrate_server': 'Success',
             'compute_prep_resize': 'Success',
             'compute_resize_instance': 'Success',
             'compute_finish_resize': 'Success'}, self.events(server))

        self.admin.action(server['id'], {'confirmResize': None},
                          expect=204)
        shown = self.admin.wait_for_status(server['id'], 'ACTIVE')
        self.assertEqual('compute2', self.host_of(shown))
        self.admin.wait_for(
            lambda: self.migration_of(server)['status'] == 'confirmed',
            timeout=10, what='migration confirmed')
        self.assertEqual({}, self.allocations(mig['uuid']))
        self.assertEqual({'compute2': SMALL}, self.allocations(server['id']))
        self.admin.wait_for(
            lambda: server['id'] not in self.stack.guests('compute1'),
            timeout=10, what='source guest deleted')
        self.assertEqual(['confirmResize', 'migrate', 'create'], [
            a['action'] for a in self.admin.actions(server['id'])])
        phases = self.admin.get('/os-migrations/%s' % mig['uuid'],
                                expect=200).json()['migration']['phases']
        self.assertEqual(CONFIRMED, [p['phase'] for p in phases])


class ResizeTest(_MoveTest):

    KIND = moves.cold

    def test_resize_then_revert(self):
        small = self.flavor()
        medium = self.flavor('medium', vcpus=2, ram=1024)
        server = self.boot(small, host='compute1')
        self.admin.action(server['id'],
                          {'resize': {'flavorRef': medium['id']}},
                          expect=202)
        shown = self.admin.wait_for_status(server['id'], 'VERIFY_RESIZE')
        self.assertEqual(('compute2', 2), (self.host_of(shown),
                                           shown['flavor']['vcpus']))
        mig = self.migration_of(server)
        self.assertEqual(('finished', 'resize'),
                         (mig['status'], mig['migration_type']))
        # Old flavor held on the source by the migration, new one on the
        # destination by the server.
        self.assertEqual({'compute1': SMALL}, self.allocations(mig['uuid']))
        self.assertEqual({'compute2': MEDIUM},
                         self.allocations(server['id']))

        self.admin.action(server['id'], {'revertResize': None}, expect=202)
        shown = self.admin.wait_for_status(server['id'], 'ACTIVE')
        self.assertEqual(('compute1', 1), (self.host_of(shown),
                                           shown['flavor']['vcpus']))
        self.assertEqual('reverted', self.migration_of(server)['status'])
        self.assertEqual({}, self.allocations(mig['uuid']))
        self.assertEqual({'compute1': SMALL}, self.allocations(server['id']))
        self.assertNotIn(server['id'], self.stack.guests('compute2'))
        self.assertIn(server['id'], self.stack.guests('compute1'))
        # Neither a second revert nor a confirm: no longer resized.
        self.admin.action(server['id'], {'revertResize': None}, expect=409)
        self.admin.action(server['id'], {'confirmResize': None},
                          expect=409)


class EvacuateTest(_MoveTest):

    KIND = moves.evacuate

    HOSTS = ('compute1', 'compute2', 'compute3')

    def set_forced_down(self, host, forced):
        service, = [s for s in self.admin.services('nova-compute')
                    if s['host'] == host]
        self.admin.put('/os-services/%s' % service['id'],
                       {'forced_down': forced}, version='2.53', expect=200)

    def test_evacuate_then_source_returns_and_cleans_up(self):
        flavor = self.flavor()
        server = self.boot(flavor, host='compute1')
        stay = self.boot(flavor, host='compute1', name='stay')
        # The source is up: refused, nothing changed.
        resp = self.admin.action(server['id'], {'evacuate': {}},
                                 version='2.68', expect=400)
        self.assertIn('still in use', resp.text)
        self.assertEqual([], self.admin.migrations(
            instance_uuid=server['id']))

        self.stack.stop_compute('compute1')
        self.set_forced_down('compute1', True)
        resp = self.admin.action(server['id'], {'evacuate': {}},
                                 version='2.68', expect=200)
        self.assertEqual(b'', resp.content)
        shown = self.admin.wait_for_status(server['id'], 'ACTIVE')
        dest = self.host_of(shown)
        self.assertIn(dest, ('compute2', 'compute3'))
        mig = self.migration_of(server)
        self.admin.wait_for(
            lambda: self.migration_of(server)['status'] == 'done',
            timeout=10, what='evacuation done')
        self.assertEqual(('evacuation', 'compute1', dest), (
            mig['migration_type'], mig['source_compute'],
            mig['dest_compute']))
        # The dead source's half waits on the migration for its return.
        self.assertEqual({'compute1': SMALL}, self.allocations(mig['uuid']))
        self.assertEqual({dest: SMALL}, self.allocations(server['id']))
        self.assertEqual({'conductor_rebuild_instance': 'Success',
                          'compute_rebuild_instance': 'Success'},
                         self.events(server))
        # Its disk still lists the guest while it is dead.
        self.assertIn(server['id'], self.stack.guests('compute1'))

        self.stack.start_compute('compute1')
        self.set_forced_down('compute1', False)
        self.admin.wait_for(
            lambda: self.migration_of(server)['status'] == 'completed',
            timeout=10, what='evacuation completed')
        self.assertEqual({}, self.allocations(mig['uuid']))
        guests = self.stack.guests('compute1')
        self.assertNotIn(server['id'], guests)
        self.assertIn(stay['id'], guests)
        self.assertEqual('compute1', self.host_of(
            self.admin.server(stay['id'], version='2.47')))


class LiveMigrateTest(_MoveTest):

    KIND = moves.live

    def test_live_migrate(self):
        server = self.boot(self.flavor(), host='compute1')
        self.admin.action(server['id'], {'os-migrateLive': {
            'host': None, 'block_migration': 'auto'}}, version='2.30',
            expect=202)
        self.admin.wait_for(
            lambda: self.migration_of(server)['status'] == 'completed',
            timeout=20, what='live migration completed')
        shown = self.admin.wait_for_status(server['id'], 'ACTIVE')
        self.assertEqual('compute2', self.host_of(shown))
        mig = self.migration_of(server)
        self.assertEqual(('live-migration', 'compute1', 'compute2'),
                         (mig['migration_type'], mig['source_compute'],
                          mig['dest_compute']))
        self.assertEqual({}, self.allocations(mig['uuid']))
        self.assertEqual({'compute2': SMALL}, self.allocations(server['id']))
        self.admin.wait_for(
            lambda: server['id'] not in self.stack.guests('compute1'),
            timeout=10, what='source guest deleted')
