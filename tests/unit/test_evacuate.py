"""Evacuate without processes: the API body schemas per microversion, and
the conductor's EvacuateTask on a real (SQLite file) database with a
recording scheduler and compute client in place of RPC."""
import shutil
import tempfile

import testtools

from nova_moves.api import evacuate as api_evacuate
from nova_moves.api import microversion
from nova_moves.api import validation
from nova_moves import conf
from nova_moves.conductor import db_proxy
from nova_moves.conductor.tasks import rebuild
from nova_moves import context as nm_context
from nova_moves.db import api as db_api
from nova_moves import exception
from tests.fixtures import scheduler as fake_scheduler
from tests.unit import fixtures as nm_fixtures

CONF = conf.CONF


def _valid(version, body):
    schema = validation.schema_for(api_evacuate.evacuate,
                                   microversion.APIVersion(version))
    try:
        validation.validate({'evacuate': body}, schema)
        return True
    except exception.ValidationError:
        return False


class SchemaTest(testtools.TestCase):

    def test_on_shared_storage_required_below_214_and_gone_after(self):
        self.assertTrue(_valid('2.1', {'onSharedStorage': False}))
        self.assertTrue(_valid('2.13', {'onSharedStorage': 'true',
                                        'host': 'h1', 'adminPass': 'x'}))
        self.assertFalse(_valid('2.13', {}))
        self.assertFalse(_valid('2.14', {'onSharedStorage': False}))
        self.assertTrue(_valid('2.14', {}))

    def test_force_only_from_229_to_267(self):
        self.assertFalse(_valid('2.28', {'host': 'h1', 'force': True}))
        self.assertTrue(_valid('2.29', {'host': 'h1', 'force': True}))
        self.assertTrue(_valid('2.67', {'host': 'h1', 'force': 'false'}))
        self.assertFalse(_valid('2.68', {'host': 'h1', 'force': True}))
        self.assertFalse(_valid('2.95', {'force': False}))
        self.assertTrue(_valid('2.95', {'host': 'h1'}))

    def test_bad_values(self):
        self.assertFalse(_valid('2.29', {'host': 'bad host!'}))
        self.assertFalse(_valid('2.29', {'host': 'h1', 'force': 'maybe'}))
        self.assertFalse(_valid('2.68', {'other': 1}))

    def test_body_schemas_cover_every_version_once(self):
        ranges = validation.schemas_of(api_evacuate.evacuate)
        for minor in range(1, 96):
            version = microversion.APIVersion('2.%d' % minor)
            matching = [r for r in ranges if r[0] <= version <= r[1]]
            self.assertEqual(1, len(matching), version)


class _Compute:
    def __init__(self):
        self.casts = []

    def rebuild_instance(self, ctxt, host, instance_uuid, migration_uuid,
                         allocations, recreate=True, stop_after=False):
        self.casts.append((host, instance_uuid, recreate, stop_after))


def _node(host, disk_provider='root'):
    return {'host': host, 'hypervisor_type': 'QEMU', 'cpu_model': 'Haswell',
            'host_ip': '127.0.0.1', 'vcpus': 4, 'memory_mb': 4096,
            'disk_gb': 100, 'reserved_host_memory_mb': 0,
            'cpu_allocation_ratio': 1.0, 'ram_allocation_ratio': 1.0,
            'disk_allocation_ratio': 1.0, 'disk_provider': disk_provider,
            'availability_zone': 'nova'}


class EvacuateTaskTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.Database())
        self.ctxt = nm_context.get_admin_context()
        self.flavor = db_api.flavor_create({
            'flavorid': 'f1', 'name': 'small', 'vcpus': 1, 'memory_mb': 512,
            'root_gb': 1})

    def _server_on(self, host):
        instance = db_api.instance_create({
            'display_name': 'vm', 'user_id': 'u', 'project_id': 'p',
            'vm_state': 'active', 'task_state': 'rebuilding',
            'host': host, 'node': host, 'flavor': self.flavor})
        resources = db_api.resources_from_flavor(self.flavor)
        candidate = db_api.allocation_candidates(resources, [host])[0]
        db_api.allocations_replace(instance['uuid'],
                                   candidate['allocations'])
        mig = db_api.migration_create({
            'instance_uuid': instance['uuid'],
            'migration_type': 'evacuation', 'status': 'accepted',
            'source_compute': host, 'source_node': host})
        return instance, mig

    def _task(self, instance, mig, host=None, force=False):
        self.scheduler = fake_scheduler.FakeScheduler()
        self.compute = _Compute()
        return rebuild.EvacuateTask(
            self.ctxt, instance['uuid'], mig['uuid'], host, force, False,
            db=db_proxy.ComputeDBProxy(), scheduler=self.scheduler,
            compute_rpcapi=self.compute)

    def test_scheduled_evacuation_moves_source_half_to_migration(self):
        for host in ('h1', 'h2'):
            db_api.compute_node_sync(_node(host))
        instance, mig = self._server_on('h1')
        source = db_api.allocations_get(instance['uuid'])
        self._task(instance, mig).run()
        spec, alternates = (self.scheduler.specs[0],
                           self.scheduler.alternates[0])
        self.assertEqual(['h1'], spec['ignore_hosts'])
        self.assertFalse(alternates)
        self.assertEqual([('h2', instance['uuid'], True, False)],
                         self.compute.casts)
        self.assertEqual(source, db_api.allocations_get(mig['uuid']))
        mig = db_api.migration_get(mig['uuid'])
        self.assertEqual(('pre-migrating', 'h2'), (mig['status'],
                                                   mig['dest_compute']))

    def test_no_valid_host_puts_everything_back(self):
        db_api.compute_node_sync(_node('h1'))
        instance, mig = self._server_on('h1')
        source = db_api.allocations_get(instance['uuid'])
        self.assertRaises(exception.NoValidHost,
                          self._task(instance, mig).run)
        self.assertEqual(source, db_api.allocations_get(instance['uuid']))
        self.assertEqual({}, db_api.allocations_get(mig['uuid']))
        self.assertEqual('error', db_api.migration_get(mig['uuid'])['status'])
        shown = db_api.instance_get(instance['uuid'])
        self.assertEqual(('error', None, 'h1'), (
            shown['vm_state'], shown['task_state'], shown['host']))
        self.assertIn('No valid host',
                      db_api.instance_fault_get_latest(
                          instance['uuid'])['message'])
        self.assertEqual([], self.compute.casts)

    def test_forced_single_root_copies_the_flavor(self):
        for host in ('h1', 'h2'):
            db_api.compute_node_sync(_node(host))
        instance, mig = self._server_on('h1')
        self._task(instance, mig, host='h2', force=True).run()
        self.assertEqual([], self.scheduler.specs)
        h2 = db_api.compute_node_get_by_host('h2')['uuid']
        self.assertEqual({h2: {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}},
                         db_api.allocations_get(instance['uuid']))

    def test_forced_nested_source_is_no_valid_host_cleanly(self):
        db_api.compute_node_sync(_node('h1', 'nested'))
        db_api.compute_node_sync(_node('h2'))
        instance, mig = self._server_on('h1')
        source = db_api.allocations_get(instance['uuid'])
        self.assertEqual(2, len(source))
        exc = self.assertRaises(
            exception.NoValidHost,
            self._task(instance, mig, host='h2', force=True).run)
        self.assertIn('single root', str(exc))
        self.assertEqual(source, db_api.allocations_get(instance['uuid']))
        self.assertEqual({}, db_api.allocations_get(mig['uuid']))
        self.assertEqual([], self.compute.casts)

    def test_forced_to_sharing_destination_is_no_valid_host(self):
        db_api.compute_node_sync(_node('h1'))
        db_api.compute_node_sync(_node('h2', 'sharing:agg1'))
        instance, mig = self._server_on('h1')
        exc = self.assertRaises(
            exception.NoValidHost,
            self._task(instance, mig, host='h2', force=True).run)
        self.assertIn('root provider cannot hold', str(exc))
        self.assertEqual(1, len(db_api.allocations_get(instance['uuid'])))
        self.assertEqual({}, db_api.allocations_get(mig['uuid']))


class _Conductor:
    """The few ConductorDBAPI calls the returning source makes."""

    def __init__(self, instances, migrations):
        self.instances = instances
        self.migrations = {m['uuid']: m for m in migrations}
        self.deleted_allocations = []

    def migration_get_all(self, ctxt, **filters):
        return [m for m in self.migrations.values()
                if m['source_compute'] == filters['source_compute']
                and m['status'] in filters['status']]

    def migration_get(self, ctxt, uuid):
        return self.migrations[uuid]

    def instance_get(self, ctxt, uuid, read_deleted=False):
        if uuid not in self.instances:
            raise exception.InstanceNotFound(instance_id=uuid)
        return self.instances[uuid]

    def allocations_delete(self, ctxt, consumer_id, root_host=None):
        self.deleted_allocations.append(consumer_id)

    def move_advance(self, ctxt, migration_id, status=None,
                     allocations=None, **kwargs):
        """The guarded step, as db/transitions.py does it."""
        mig = next(m for m in self.migrations.values()
                   if migration_id in (m['id'], m['uuid']))
        if mig['status'] not in status[0]:
            raise exception.MoveConflict(migration=mig['uuid'],
                                         instance_uuid='?', reason='moved')
        if (allocations or {}).get('op') == 'drop_source':
            self.deleted_allocations.append(mig['uuid'])
        mig['status'] = status[1]
        return {'migration': mig, 'instance': None}

    def migration_update(self, ctxt, migration_id, values,
                         expected_status=None):
        mig = next(m for m in self.migrations.values()
                   if migration_id in (m['id'], m['uuid']))
        if expected_status and mig['status'] not in expected_status:
            raise exception.Conflict(reason='status %s' % mig['status'])
        mig.update(values)
        return mig


class ReturningSourceTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        tmp = tempfile.mkdtemp(prefix='nm-unit-evacuate-')
        self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        CONF.set_override('state_path', tmp)
        self.addCleanup(CONF.clear_override, 'state_path')
        CONF.set_override('default_operation_seconds', 0, group='compute')
        self.addCleanup(CONF.clear_override, 'default_operation_seconds',
                        group='compute')

    def _source(self, instances, migrations):
        from nova_moves.compute import base
        from nova_moves.virt import fake as driver
        from nova_moves.compute import evacuate

        fake = driver.FakeDriver('h1')
        for uuid in ('moved', 'own', 'deleted', 'running', 'back'):
            fake.spawn(uuid, {'name': 'small'})
        return evacuate.EvacuationCleanup(base.Deps(
            'h1', fake, _Conductor(instances, migrations)))

    @staticmethod
    def _mig(n, uuid, status):
        return {'id': n, 'uuid': 'mig-%s' % uuid, 'instance_uuid': uuid,
                'source_compute': 'h1', 'status': status,
                'migration_type': 'evacuation'}

    def test_cleans_evacuated_and_never_touches_its_own(self):
        instances = {
            'moved': {'host': 'h2', 'vm_state': 'active'},
            'own': {'host': 'h1', 'vm_state': 'active'},
            'running': {'host': 'h1', 'vm_state': 'active'},
            # Evacuated away and later back here: the copy here is live.
            'back': {'host': 'h1', 'vm_state': 'active'}}
        migrations = [self._mig(1, 'moved', 'done'),
                      self._mig(2, 'deleted', 'done'),
                      self._mig(3, 'running', 'pre-migrating'),
                      self._mig(4, 'back', 'done'),
                      self._mig(5, 'own', 'error')]
        source = self._source(instances, migrations)
        source._watch_evacuations = lambda ctxt, waiting: \
            setattr(source, 'waiting', waiting)
        source.run(None)
        guests = source.driver.guests()
        self.assertEqual({'own', 'running', 'back'}, set(guests))
        status = {m['instance_uuid']: m['status']
                  for m in source.conductor.migrations.values()}
        self.assertEqual({'moved': 'completed', 'deleted': 'completed',
                          'running': 'pre-migrating', 'back': 'completed',
                          'own': 'error'}, status)
        self.assertEqual(['mig-moved', 'mig-deleted', 'mig-back'],
                         source.conductor.deleted_allocations)
        self.assertEqual(['mig-running'], source.waiting)

    def test_watch_cleans_once_landed_and_leaves_failed_alone(self):
        instances = {'running': {'host': 'h1', 'vm_state': 'active'},
                     'moved': {'host': 'h1', 'vm_state': 'active'}}
        migrations = [self._mig(1, 'running', 'pre-migrating'),
                      self._mig(2, 'moved', 'accepted')]
        source = self._source(instances, migrations)
        # One evacuation fails (the server stays ours), one lands on h2.
        source.conductor.migrations['mig-running']['status'] = 'error'
        instances['moved']['host'] = 'h2'
        from nova_moves.compute import evacuate
        self.patch(evacuate, 'WATCH_INTERVAL', 0.01)
        source._watch_evacuations(None, ['mig-running', 'mig-moved'],
                                  timeout=5)
        self.assertIn('running', source.driver.guests())
        self.assertNotIn('moved', source.driver.guests())
        self.assertEqual(
            'completed', source.conductor.migrations['mig-moved']['status'])
        self.assertEqual(['mig-moved'], source.conductor.deleted_allocations)


class _Response:
    def __init__(self, status, body=None):
        self.status_code = status
        self._body = body or {}
        self.text = str(body)

    def json(self):
        return self._body


class _HostClient:
    """The compute API as nova-moves-manage host sees it: five servers on
    h1, one of which no host can take."""

    def __init__(self):
        import threading
        self.lock = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0
        self.servers = {'s%d' % i: {'id': 's%d' % i, 'name': 'vm%d' % i,
                                    'status': 'ACTIVE',
                                    'OS-EXT-SRV-ATTR:host': 'h1'}
                        for i in range(5)}

    def get(self, path, params=None, version=None, expect=None):
        page = [] if params.get('marker') else list(self.servers.values())
        return _Response(200, {'servers': page})

    def action(self, server_id, body, version=None):
        if server_id == 's4':
            return _Response(409, {'conflictingRequest': {
                'message': 'busy', 'code': 409}})
        return _Response(200)

    def wait_for_status(self, server_id, statuses, timeout=60):
        import time
        with self.lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        time.sleep(0.05)
        with self.lock:
            self.in_flight -= 1
        server = dict(self.servers[server_id])
        if server_id == 's3':
            server.update(status='ERROR', fault={'message': 'No valid host'})
        else:
            server['OS-EXT-SRV-ATTR:host'] = 'h2'
        return server


class ManageHostTest(testtools.TestCase):

    def test_evacuate_host_reports_each_and_bounds_concurrency(self):
        from nova_moves.cmd import manage_host
        client = _HostClient()
        lines = []
        failed = manage_host.evacuate_host(client, 'h1', concurrency=2,
                                           out=lines.append)
        self.assertEqual(2, failed)
        self.assertLessEqual(client.most_in_flight, 2)
        by_server = {line.split()[0]: line for line in lines[:-1]}
        self.assertIn('OK', by_server['s0'])
        self.assertIn('evacuated to h2', by_server['s0'])
        self.assertIn('FAIL failed: No valid host', by_server['s3'])
        self.assertIn('FAIL refused (409): busy', by_server['s4'])
        self.assertEqual('3 of 5 servers evacuated from h1', lines[-1])
