"""MigrationTask on a real (temporary SQLite) database, with the
scheduler's claim logic and a recording stand-in for the compute RPC."""

import testtools

from nova_moves.conductor import db_proxy
from nova_moves.conductor.tasks import migrate
from nova_moves import conf
from nova_moves import context as nm_context
from nova_moves.db import api as db_api
from nova_moves import exception
from tests.fixtures import scheduler as fake_scheduler
from tests.unit import fixtures as nm_fixtures

CONF = conf.CONF


def _node(host, memory_mb=4096, disk_provider='root'):
    return {'host': host, 'hypervisor_type': 'QEMU', 'cpu_model': 'Haswell',
            'host_ip': '127.0.0.1', 'vcpus': 8, 'memory_mb': memory_mb,
            'disk_gb': 100, 'reserved_host_memory_mb': 0,
            'cpu_allocation_ratio': 1.0, 'ram_allocation_ratio': 1.0,
            'disk_allocation_ratio': 1.0, 'disk_provider': disk_provider}


class RecordingComputeAPI:
    def __init__(self):
        self.casts = []

    def prep_resize(self, ctxt, host, instance_uuid, migration_uuid, flavor,
                    request_spec, alternates, source=None):
        self.casts.append((host, instance_uuid, migration_uuid,
                           [a['host'] for a in alternates]))


class MigrationTaskTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        CONF([], project='nova_moves', default_config_files=[])
        self.useFixture(nm_fixtures.Database())
        for host in ('h1', 'h2', 'h3'):
            db_api.compute_node_sync(_node(host))
        self.small = db_api.flavor_create({
            'flavorid': '1', 'name': 'small', 'vcpus': 1, 'memory_mb': 512,
            'root_gb': 1})
        self.big = db_api.flavor_create({
            'flavorid': '2', 'name': 'big', 'vcpus': 2, 'memory_mb': 3000,
            'root_gb': 1})
        self.ctxt = nm_context.RequestContext(
            user_id='u', project_id='p', is_admin=True, roles=['admin'],
            request_id='req-1')
        self.scheduler = fake_scheduler.FakeScheduler()
        self.compute = RecordingComputeAPI()
        self.instance = self._boot('h1', self.small)

    def _boot(self, host, flavor):
        instance = db_api.instance_create({
            'display_name': 'vm', 'user_id': 'u', 'project_id': 'p',
            'vm_state': 'active', 'task_state': 'resize_prep',
            'host': host, 'node': host, 'flavor': flavor})
        rp = [c for c in db_api.allocation_candidates(
            db_api.resources_from_flavor(flavor), hosts=[host])][0]
        db_api.allocations_replace(instance['uuid'], rp['allocations'])
        return instance

    def _task(self, flavor=None, host=None, force=False, migration_uuid=None,
              alternates=None):
        return migrate.MigrationTask(
            self.ctxt, self.instance['uuid'], flavor=flavor, host=host,
            force=force, migration_uuid=migration_uuid,
            alternates=alternates, db=db_proxy.ComputeDBProxy(),
            scheduler=self.scheduler, compute_rpcapi=self.compute)

    def _held_by_host(self, consumer):
        names = {v['uuid']: k for k, v in db_api.provider_usages().items()}
        return {names[rp]: r for rp, r in
                db_api.allocations_get(consumer).items()}

    def test_resize_parks_source_and_casts_prep_resize(self):
        self._task(flavor=self.big).run()
        mig = db_api.migration_get_all(instance_uuid=self.instance['uuid'])[0]
        self.assertEqual(('resize', 'pre-migrating', 'h1', 'h2', '1', '2'),
                         (mig['migration_type'], mig['status'],
                          mig['source_compute'], mig['dest_compute'],
                          mig['old_flavor_id'], mig['new_flavor_id']))
        self.assertEqual({'h1': {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}},
                         self._held_by_host(mig['uuid']))
        self.assertEqual({'h2': {'VCPU': 2, 'MEMORY_MB': 3000, 'DISK_GB': 1}},
                         self._held_by_host(self.instance['uuid']))
        self.assertEqual([('h2', self.instance['uuid'], mig['uuid'], ['h3'])],
                         self.compute.casts)
        self.assertEqual(['h1'], self.scheduler.specs[0]['ignore_hosts'])
        instance = db_api.instance_get(self.instance['uuid'])
        self.assertEqual('2', instance['new_flavor']['flavorid'])
        self.assertEqual('1', instance['old_flavor']['flavorid'])

    def test_same_flavor_is_a_migration_to_requested_host(self):
        self._task(host='h3').run()
        mig = db_api.migration_get_all(instance_uuid=self.instance['uuid'])[0]
        self.assertEqual(('migration', 'h3'), (mig['migration_type'],
                                               mig['dest_compute']))
        self.assertEqual({'host': 'h3'},
                         self.scheduler.specs[0]['requested_destination'])

    def _assert_rolled_back(self, before):
        mig = db_api.migration_get_all(instance_uuid=self.instance['uuid'])[0]
        self.assertEqual('error', mig['status'])
        self.assertEqual({}, db_api.allocations_get(mig['uuid']))
        self.assertEqual(before, db_api.allocations_all())
        instance = db_api.instance_get(self.instance['uuid'])
        self.assertEqual((None, 'active', 'h1', None),
                         (instance['task_state'], instance['vm_state'],
                          instance['host'], instance['new_flavor']))
        self.assertIsNotNone(db_api.instance_fault_get_latest(
            self.instance['uuid']))
        self.assertEqual([], self.compute.casts)

    def test_no_valid_host_rolls_back_everything(self):
        huge = db_api.flavor_create({
            'flavorid': '3', 'name': 'huge', 'vcpus': 1, 'memory_mb': 9000,
            'root_gb': 1})
        before = db_api.allocations_all()
        self.assertRaises(exception.NoValidHost,
                          self._task(flavor=huge).run)
        self._assert_rolled_back(before)

    def test_forced_host_claims_directly(self):
        self._task(host='h3', force=True).run()
        self.assertEqual([], self.scheduler.specs)
        self.assertEqual({'h3': {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}},
                         self._held_by_host(self.instance['uuid']))
        self.assertEqual('h3', self.compute.casts[0][0])

    def test_forced_host_that_cannot_fit_rolls_back(self):
        filler = db_api.instance_create({
            'display_name': 'f', 'user_id': 'u', 'project_id': 'p',
            'vm_state': 'active', 'host': 'h3', 'node': 'h3',
            'flavor': self.big})
        rp = db_api.allocation_candidates(
            db_api.resources_from_flavor(self.big), hosts=['h3'])[0]
        db_api.allocations_replace(filler['uuid'], rp['allocations'])
        before = db_api.allocations_all()
        exc = self.assertRaises(exception.NoValidHost,
                                self._task(flavor=self.big, host='h3',
                                           force=True).run)
        self.assertIn('MEMORY_MB', str(exc))
        self._assert_rolled_back(before)

    def test_forced_move_of_nested_allocation_is_refused(self):
        db_api.compute_node_sync(_node('n1', disk_provider='nested'))
        self.instance = self._boot('n1', self.small)
        before = db_api.allocations_all()
        exc = self.assertRaises(exception.NoValidHost,
                                self._task(host='h3', force=True).run)
        self.assertIn('single root', str(exc))
        self.assertEqual(before, db_api.allocations_all())

    def test_reschedule_claims_next_alternate(self):
        self._task(flavor=self.big).run()
        host, _, mig_uuid, alternates = self.compute.casts[0]
        # The failed destination drops its claim, then calls back.
        db_api.allocations_delete(self.instance['uuid'])
        alt = self.scheduler_alternates()
        self.compute.casts = []
        self._task(flavor=self.big, migration_uuid=mig_uuid,
                   alternates=alt).run()
        self.assertEqual([('h3', self.instance['uuid'], mig_uuid, [])],
                         self.compute.casts)
        self.assertEqual('h3', db_api.migration_get(mig_uuid)['dest_compute'])
        self.assertEqual({'h3': {'VCPU': 2, 'MEMORY_MB': 3000, 'DISK_GB': 1}},
                         self._held_by_host(self.instance['uuid']))

    def scheduler_alternates(self):
        rp = db_api.allocation_candidates(
            db_api.resources_from_flavor(self.big), hosts=['h3'])[0]
        return [{'host': 'h3', 'nodename': 'h3',
                 'compute_node_uuid': rp['root_uuid'],
                 'allocation_request': rp['allocations']}]

    def test_reschedule_without_alternates_rolls_back(self):
        before = db_api.allocations_all()
        self._task(flavor=self.big).run()
        mig_uuid = self.compute.casts[0][2]
        db_api.allocations_delete(self.instance['uuid'])
        self.compute.casts = []
        self.assertRaises(exception.MaxRetriesExceeded,
                          self._task(flavor=self.big, migration_uuid=mig_uuid,
                                     alternates=[]).run)
        self._assert_rolled_back(before)

    def test_start_is_all_or_nothing_when_the_server_moved_on(self):
        db_api.instance_update(self.instance['uuid'], {'task_state': None})
        before = db_api.allocations_all()
        self.assertRaises(exception.UnexpectedTaskState,
                          self._task(flavor=self.big).run)
        self.assertEqual([], db_api.migration_get_all(
            instance_uuid=self.instance['uuid']))
        self.assertEqual(before, db_api.allocations_all())
        self.assertEqual([], self.compute.casts)
