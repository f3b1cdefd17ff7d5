"""Unit tests of live migration: body schemas per microversion, the
conductor task's destination choice and rollback, and the source's
transfer loop (progress, force-complete, abort, queue)."""
import threading
import time
from unittest import mock

import testtools

from nova_moves.api import live_migrate as api
from nova_moves.api import microversion
from nova_moves.api import validation
from nova_moves.compute import base as compute_base
from nova_moves.compute import live_migration as compute_lm
from nova_moves.conductor.tasks import live_migrate as task_mod
from nova_moves import conf
from nova_moves import exception
from nova_moves.virt import fake as virt_fake
from tests.fixtures import scheduler as fake_scheduler


def _v(text):
    return microversion.APIVersion(text)


class BodySchemaTest(testtools.TestCase):

    def check(self, version, body):
        schema = validation.schema_for(api.live_migrate, _v(version))
        return validation.validate({api.ACTION: body}, schema)

    def bad(self, version, body, word):
        exc = self.assertRaises(exception.ValidationError, self.check,
                                version, body)
        self.assertIn(word, exc.message)

    def test_before_225_all_three_required(self):
        self.check('2.1', {'block_migration': False,
                           'disk_over_commit': 'true', 'host': None})
        self.bad('2.24', {'block_migration': False, 'host': 'h'},
                 'disk_over_commit')
        self.bad('2.24', {'block_migration': 'auto', 'host': 'h',
                          'disk_over_commit': False}, 'block_migration')

    def test_225_auto_and_no_disk_over_commit(self):
        self.check('2.25', {'block_migration': 'auto', 'host': None})
        self.bad('2.25', {'block_migration': 'auto', 'host': None,
                          'disk_over_commit': False}, 'disk_over_commit')
        self.bad('2.29', {'block_migration': 'auto', 'host': 'h',
                          'force': True}, 'force')

    def test_force_from_230_until_267(self):
        for version in ('2.30', '2.34', '2.67'):
            self.check(version, {'block_migration': 'auto', 'host': 'h',
                                 'force': True})
        for version in ('2.68', '2.95'):
            self.bad(version, {'block_migration': 'auto', 'host': 'h',
                               'force': False}, 'force')
        self.check('2.68', {'block_migration': True, 'host': None})

    def test_host_must_be_a_hostname(self):
        self.bad('2.34', {'block_migration': 'auto', 'host': 'a b'}, 'host')
        self.bad('2.34', {'block_migration': 'auto'}, 'host')

    def test_force_complete_body(self):
        schema = validation.schema_for(api.action, _v('2.22'))
        validation.validate({'force_complete': None}, schema)
        self.assertRaises(exception.ValidationError, validation.validate,
                          {'force_complete': {}}, schema)
        self.assertRaises(exception.NotFound, validation.schema_for,
                          api.action, _v('2.21'))


class FakeDB:
    """The conductor's db proxy, recording what the task does."""

    def __init__(self, instance):
        self.instance = instance
        self.calls = []
        self.allocations = {instance['uuid']: {'src-rp': {'VCPU': 1}}}

    def instance_get(self, ctxt, uuid):
        return dict(self.instance)

    def allocations_move(self, ctxt, src, dst):
        self.calls.append(('move', src, dst))
        self.allocations[dst] = self.allocations.pop(src, {})

    def allocations_delete(self, ctxt, consumer, root_host=None):
        self.calls.append(('delete', consumer))
        self.allocations.pop(consumer, None)

    def allocations_replace(self, ctxt, consumer, allocs,
                            from_consumer=None, consumer_generation=None):
        self.calls.append(('replace', consumer))
        self.allocations[consumer] = allocs

    def migration_update(self, ctxt, mid, values, expected_status=None):
        self.calls.append(('migration', values.get('status')))

    def instance_update(self, ctxt, uuid, values, expected=None):
        self.calls.append(('instance', values))

    # 1.1: the guarded steps, as db/transitions.py does them
    def move_advance(self, ctxt, mid, status=None, allocations=None,
                     **kwargs):
        if status and len(status) > 1:
            self.calls.append(('migration', status[1]))
        op = (allocations or {}).get('op')
        if op == 'park_source':
            self.allocations_move(ctxt, 'inst', mid)
        elif op == 'drop_dest':
            self.allocations_delete(ctxt, 'inst')
        return {'migration': {'uuid': mid}, 'instance': dict(self.instance)}

    def move_failed(self, ctxt, mid=None, fault=None, **kwargs):
        self.calls.append(('migration', 'error'))
        if self.allocations.get(mid):
            self.allocations_move(ctxt, mid, 'inst')
        self.calls.append(('fault', fault['code']))

    def consumer_generation_get(self, ctxt, consumer):
        return 1

    def instance_fault_create(self, ctxt, uuid, code, message, details=None,
                              host=None):
        self.calls.append(('fault', code))


class FakeCompute:
    def __init__(self, bad_hosts=()):
        self.bad = set(bad_hosts)
        self.checked = []
        self.cast = []

    def check_can_live_migrate_destination(self, ctxt, host, uuid, block,
                                           mig_uuid):
        self.checked.append(host)
        if host in self.bad:
            raise exception.MigrationPreCheckError(reason='CPU model '
                                                   'mismatch on %s' % host)
        return {'dest_ip': '10.0.0.%d' % len(self.checked)}

    def live_migration(self, ctxt, host, uuid, dest, mig_uuid, data):
        self.cast.append((host, dest))


class LiveMigrationTaskTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.instance = {'uuid': 'inst', 'host': 'src', 'node': 'src',
                         'task_state': 'migrating', 'project_id': 'p',
                         'user_id': 'u', 'requested_az': None,
                         'flavor': {'vcpus': 1, 'memory_mb': 64,
                                    'root_gb': 1}}
        self.db = FakeDB(self.instance)
        patcher = mock.patch.multiple(
            task_mod.db_api, service_get_by_host_and_binary=mock.DEFAULT,
            service_is_up=mock.Mock(return_value=True))
        patcher.start()
        self.addCleanup(patcher.stop)
        conf.CONF.set_override('migrate_max_retries', -1)
        self.addCleanup(conf.CONF.clear_override, 'migrate_max_retries')

    def task(self, scheduler, compute, host=None, force=False):
        return task_mod.LiveMigrationTask(
            None, 'inst', 'mig', host, force, 'auto', self.db, scheduler,
            compute)

    def test_retries_past_a_failed_check(self):
        scheduler = fake_scheduler.FakeScheduler(['bad1', 'bad2', 'good'])
        compute = FakeCompute(bad_hosts=['bad1', 'bad2'])
        self.task(scheduler, compute).run()
        self.assertEqual(['bad1', 'bad2', 'good'], compute.checked)
        self.assertEqual([('src', 'good')], compute.cast)
        self.assertEqual(['src', 'bad1', 'bad2'],
                         scheduler.specs[-1]['ignore_hosts'])
        # Each failed host's claim was dropped before the next try.
        self.assertEqual(2, self.db.calls.count(('delete', 'inst')))
        self.assertIn(('migration', 'queued'), self.db.calls)
        self.assertEqual({'VCPU': 1}, self.db.allocations['mig']['src-rp'])

    def test_max_retries(self):
        conf.CONF.set_override('migrate_max_retries', 1)
        scheduler = fake_scheduler.FakeScheduler(['bad1', 'bad2', 'good'])
        compute = FakeCompute(bad_hosts=['bad1', 'bad2'])
        self.assertRaises(exception.MaxRetriesExceeded,
                          self.task(scheduler, compute).run)
        self.assertEqual(['bad1', 'bad2'], compute.checked)
        self.assertEqual([], compute.cast)
        self.assertEqual({'inst': {'src-rp': {'VCPU': 1}}},
                         self.db.allocations)
        self.assertIn(('migration', 'error'), self.db.calls)

    def test_requested_host_is_not_retried(self):
        scheduler = fake_scheduler.FakeScheduler(['bad1', 'good'])
        compute = FakeCompute(bad_hosts=['bad1'])
        self.assertRaises(exception.MigrationPreCheckError,
                          self.task(scheduler, compute, host='bad1').run)
        self.assertEqual(['bad1'], compute.checked)
        self.assertEqual({'host': 'bad1'},
                         scheduler.specs[0]['requested_destination'])
        self.assertEqual({'inst': {'src-rp': {'VCPU': 1}}},
                         self.db.allocations)

    def test_forced_complex_allocation_is_no_valid_host(self):
        compute = FakeCompute()
        with mock.patch.object(task_mod.db_api, 'allocation_is_single_root',
                               return_value=False):
            exc = self.assertRaises(
                exception.NoValidHost,
                self.task(fake_scheduler.FakeScheduler([]), compute,
                          host='dst', force=True).run)
        self.assertIn('complex allocations', exc.message)
        self.assertEqual([], compute.checked)
        self.assertEqual({'inst': {'src-rp': {'VCPU': 1}}},
                         self.db.allocations)

    def test_forced_single_root_skips_scheduler(self):
        compute = FakeCompute()
        scheduler = fake_scheduler.FakeScheduler(['other'])
        with mock.patch.object(task_mod.db_api, 'allocation_is_single_root',
                               return_value=True), \
                mock.patch.object(task_mod.db_api, 'root_only_candidate',
                                  return_value={'dst-rp': {'VCPU': 1}}):
            self.task(scheduler, compute, host='dst', force=True).run()
        self.assertEqual([], scheduler.specs)
        self.assertEqual([('src', 'dst')], compute.cast)
        self.assertEqual({'dst-rp': {'VCPU': 1}}, self.db.allocations['inst'])

    def test_source_down_changes_nothing(self):
        task_mod.db_api.service_is_up.return_value = False
        compute = FakeCompute()
        scheduler = fake_scheduler.FakeScheduler(['good'])
        self.assertRaises(exception.Invalid,
                          self.task(scheduler, compute).run)
        self.assertNotIn(('move', 'inst', 'mig'), self.db.calls)
        self.assertIn(('migration', 'error'), self.db.calls)


class FakeConductor:
    def __init__(self):
        self.statuses = []
        self.progress = []
        self.faults = []
        self.lock = threading.Lock()

    def migration_update(self, ctxt, mid, values, expected_status=None):
        with self.lock:
            if 'status' in values:
                self.statuses.append(values['status'])
            if 'memory_processed' in values:
                self.progress.append(values['memory_processed'])

    def migration_get(self, ctxt, mid):
        return {'id': mid, 'uuid': 'mig-%s' % mid, 'status': 'queued'}

    # 1.1: the guarded steps record the same status changes
    def move_advance(self, ctxt, mid, status=None, values=None, **kwargs):
        mid = mid[4:] if str(mid).startswith('mig-') else mid
        self.migration_update(ctxt, mid, dict(
            values or {}, **({'status': status[1]} if status and
                             len(status) > 1 else {})))
        # The server row as the real step returns it (with its flavor).
        return {'migration': self.migration_get(ctxt, mid),
                'instance': {'uuid': 'inst',
                             'flavor': {'memory_mb': 1, 'root_gb': 1}}}

    def move_failed(self, ctxt, mid, status='error', fault=None, **kwargs):
        with self.lock:
            self.statuses.append(status)
            self.faults += [fault] if fault else []
        return {'migration': None, 'instance': None}

    def allocations_move(self, ctxt, src, dst):
        pass

    def allocations_delete(self, ctxt, consumer, root_host=None):
        pass


class FakeDriver(virt_fake.FakeDriver):
    """The fake's transfer, timed by the test (no state file)."""

    def __init__(self, seconds, failing=()):
        self.host = 'src'
        self.seconds = seconds
        self.failing = set(failing)

    def duration(self, op):
        return self.seconds

    def injected(self, op):
        return op in self.failing

    def destroy(self, uuid, operation=None):
        pass


class TransferTest(testtools.TestCase):

    def manager(self, seconds, failing=()):
        manager = compute_lm.LiveMigrationEndpoint(compute_base.Deps(
            'src', FakeDriver(seconds, failing), FakeConductor(),
            compute_rpcapi=mock.Mock()))
        manager._instance = lambda ctxt, uuid: {
            'uuid': uuid, 'flavor': {'memory_mb': 1, 'root_gb': 1}}
        manager._update = mock.Mock()
        manager._fault = mock.Mock()
        manager.event_backend = mock.Mock()
        return manager

    def run_migration(self, manager, mid='a'):
        manager.live_migration(mock.Mock(request_id='r'),
                               instance_uuid='inst', dest='dst',
                               migration_uuid=mid,
                               migrate_data={'block_migration': True})

    def test_progress_then_completed(self):
        manager = self.manager(0.8)
        self.run_migration(manager)
        # The destination completes it (post_live_migration_at_destination,
        # a mock here).
        self.assertEqual(['preparing', 'running', 'post-migrating'],
                         manager.conductor.statuses)
        progress = manager.conductor.progress
        self.assertEqual(0, progress[0])
        self.assertEqual(1024 * 1024, progress[-1])
        self.assertEqual(sorted(progress), progress)
        self.assertGreater(len(progress), 2)

    def test_force_complete_ends_early(self):
        manager = self.manager(30)
        thread = threading.Thread(target=self.run_migration,
                                  args=(manager,))
        started = time.monotonic()
        thread.start()
        while manager.conductor.statuses[-1:] != ['running']:
            time.sleep(0.01)
        manager.live_migration_force_complete(
            mock.Mock(), instance_uuid='inst', migration_id='a')
        thread.join(5)
        self.assertLess(time.monotonic() - started, 5)
        self.assertEqual('post-migrating', manager.conductor.statuses[-1])

    def test_abort_rolls_back_cancelled(self):
        manager = self.manager(30)
        thread = threading.Thread(target=self.run_migration,
                                  args=(manager,))
        thread.start()
        while manager.conductor.statuses[-1:] != ['running']:
            time.sleep(0.01)
        manager.live_migration_abort(mock.Mock(), instance_uuid='inst',
                                     migration_id='a')
        thread.join(5)
        self.assertEqual('cancelled', manager.conductor.statuses[-1])
        manager.compute_rpcapi.rollback_live_migration_at_destination.\
            assert_called_once()
        self.assertEqual([], manager.conductor.faults)

    def test_injected_failure_is_error_with_fault(self):
        manager = self.manager(0.1, failing=['live_migration'])
        self.assertRaises(exception.HypervisorOperationFailed,
                          self.run_migration, manager)
        self.assertEqual('error', manager.conductor.statuses[-1])
        self.assertEqual(1, len(manager.conductor.faults))
        manager.compute_rpcapi.post_live_migration_at_destination.\
            assert_not_called()

    def test_second_waits_for_the_slot(self):
        conf.CONF.set_override('max_concurrent_live_migrations', 1)
        self.addCleanup(conf.CONF.clear_override,
                        'max_concurrent_live_migrations')
        manager = self.manager(0.6)
        threads = [threading.Thread(target=self.run_migration,
                                    args=(manager, mid)) for mid in 'ab']
        for thread in threads:
            thread.start()
        time.sleep(0.3)
        # One transfer runs; the other has not even started preparing.
        self.assertEqual(['preparing', 'running'],
                         manager.conductor.statuses)
        for thread in threads:
            thread.join(5)
        self.assertEqual(['preparing', 'running', 'post-migrating'] * 2,
                         manager.conductor.statuses)


class SourceCheckTest(testtools.TestCase):

    def manager(self, **info):
        node = {'hypervisor_type': 'QEMU', 'cpu_model': 'Haswell'}
        node.update(info)
        return compute_lm.LiveMigrationEndpoint(compute_base.Deps(
            'src', mock.Mock(node_info=lambda: node,
                             has_guest=lambda uuid: True), mock.Mock()))

    def check(self, manager, **dest):
        data = {'dest_host': 'dst', 'hypervisor_type': 'QEMU',
                'cpu_model': 'Haswell'}
        data.update(dest)
        return manager.check_can_live_migrate_source(
            mock.Mock(), instance_uuid='inst', dest_check_data=data)

    def test_same_hypervisor_and_cpu_passes(self):
        self.assertEqual('src', self.check(self.manager())['source_host'])

    def test_hypervisor_type_mismatch(self):
        exc = self.assertRaises(exception.MigrationPreCheckError, self.check,
                                self.manager(), hypervisor_type='Xen')
        self.assertIn('hypervisor type mismatch', exc.message)

    def test_cpu_model_mismatch(self):
        exc = self.assertRaises(exception.MigrationPreCheckError, self.check,
                                self.manager(cpu_model='Skylake'))
        self.assertIn('CPU model mismatch', exc.message)
