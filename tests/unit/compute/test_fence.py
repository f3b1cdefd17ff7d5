"""Self-fencing (compute/fence.py): the start-up check, the fence of a
host silent for fence_after, and the restore once it reports again,
with the fake hypervisor and the conductor's writes on a real SQLite
database (reached without RPC)."""
import json
import os
import time
from unittest import mock

import testtools

from nova_moves.compute import base
from nova_moves.compute import fence
from nova_moves.compute import manager as compute_manager
from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves import states
from nova_moves.virt import fake
from tests.unit import fixtures as nm_fixtures

CONF = conf.CONF


class _Conductor:
    """The conductor rpcapi's signatures, straight onto the database."""

    def instance_get(self, ctxt, uuid, read_deleted=False):
        return db_api.instance_get(uuid, read_deleted=read_deleted)

    def instance_update(self, ctxt, uuid, values, **expected):
        return db_api.instance_update(uuid, values, **expected)

    def instance_fault_create(self, ctxt, uuid, code, message,
                              details=None, host=None):
        return db_api.instance_fault_create(uuid, code, message, details,
                                            host)

    def migration_get_all(self, ctxt, **filters):
        return db_api.migration_get_all(**filters)


class CheckConfigTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        CONF([], project='nova_moves', default_config_files=[])

    def _set(self, **values):
        for name, value in values.items():
            group = None if name in ('service_down_time',
                                     'report_interval') else 'compute'
            self.useFixture(nm_fixtures.Override(name, value, group))

    def test_off_by_default(self):
        self.assertEqual(0, CONF.compute.fence_after)
        self.assertEqual('pause', CONF.compute.fence_action)
        fence.check_config()

    def test_refused_unless_before_service_down_time(self):
        self._set(fence_after=60, service_down_time=60)
        exc = self.assertRaises(fence.FenceConfigError, fence.check_config)
        self.assertIn('[compute] fence_after (60s)', str(exc))
        self.assertIn('[DEFAULT] service_down_time (60s)', str(exc))
        self._set(fence_after=30)
        fence.check_config()

    def test_refused_within_a_heartbeat(self):
        self._set(fence_after=10, report_interval=10)
        exc = self.assertRaises(fence.FenceConfigError, fence.check_config)
        self.assertIn('[DEFAULT] report_interval (10s)', str(exc))

    def test_qemu_stop_counts_the_clean_power_down(self):
        self._set(fence_after=30, fence_action='stop', driver='qemu')
        self.useFixture(nm_fixtures.Override('shutdown_timeout', 30,
                                             'qemu'))
        exc = self.assertRaises(fence.FenceConfigError, fence.check_config)
        self.assertIn('[qemu] shutdown_timeout (30s)', str(exc))
        self._set(fence_action='pause')
        fence.check_config()


class FenceTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        CONF([], project='nova_moves', default_config_files=[])
        self.useFixture(nm_fixtures.Database())
        self.useFixture(nm_fixtures.FakeHosts())
        self.useFixture(nm_fixtures.Override('fence_after', 5, 'compute'))
        self.flavor = db_api.flavor_create({
            'flavorid': 'f1', 'name': 'small', 'vcpus': 1,
            'memory_mb': 512, 'root_gb': 1})
        self.driver = fake.FakeDriver('h1')
        self.fence = fence.Fence(base.Deps('h1', self.driver, _Conductor()))
        self.ctxt = object()

    def _server(self, host='h1', **values):
        instance = db_api.instance_create(dict({
            'display_name': 'vm', 'user_id': 'u', 'project_id': 'p',
            'vm_state': states.ACTIVE, 'task_state': None,
            'power_state': states.POWER_RUNNING, 'host': host,
            'node': host, 'flavor': self.flavor}, **values))
        self.driver.spawn(instance['uuid'], self.flavor)
        return instance['uuid']

    def _powers(self):
        return {u: g['power'] for u, g in self.driver.guests().items()}

    def _silent(self, seconds):
        self.fence._last_report = time.monotonic() - seconds

    def _record(self):
        path = os.path.join(CONF.state_path, 'fence', 'h1.json')
        if not os.path.exists(path):
            return None
        with open(path) as f:
            return json.load(f)

    def test_not_before_fence_after(self):
        uuid = self._server()
        self._silent(4)
        self.fence.tick(self.ctxt)
        self.assertEqual({uuid: 'running'}, self._powers())
        self.assertIsNone(self._record())

    def test_pauses_running_guests_and_records_them(self):
        running = self._server()
        stopped = self._server()
        self.driver.set_power(stopped, 'shutdown', 'power_off')
        self._silent(6)
        self.fence.tick(self.ctxt)
        self.assertEqual({running: 'paused', stopped: 'shutdown'},
                         self._powers())
        self.assertEqual([running], list(self._record()))
        self.assertEqual('pause', self._record()[running]['action'])
        # A restarted compute reads the record back.
        again = fence.Fence(base.Deps('h1', self.driver, _Conductor()))
        self.assertEqual([running], list(again.fenced()))

    def test_stop_action(self):
        self.useFixture(nm_fixtures.Override('fence_action', 'stop',
                                             'compute'))
        uuid = self._server()
        self._silent(6)
        self.fence.tick(self.ctxt)
        self.assertEqual({uuid: 'shutdown'}, self._powers())

    def test_restore_after_report(self):
        ours = self._server()
        resized = self._server(vm_state=states.RESIZED)
        evacuated = self._server()
        failed = self._server()
        busy = self._server()
        self._silent(6)
        self.fence.tick(self.ctxt)
        self.assertEqual({'paused'}, set(self._powers().values()))
        # Meanwhile: one evacuated to h2 (its copy here is the clean-up's
        # to remove), one left in ERROR by a failed evacuation, one with
        # its evacuation still in flight.
        db_api.instance_update(evacuated, {'host': 'h2', 'node': 'h2'})
        db_api.instance_update(failed, {'vm_state': states.ERROR})
        db_api.instance_update(busy, {'task_state': states.REBUILDING})
        db_api.migration_create({
            'instance_uuid': busy, 'source_compute': 'h1',
            'dest_compute': 'h2', 'migration_type': states.EVACUATION,
            'status': states.M_PRE_MIGRATING})
        self.fence.reported()
        self.fence.tick(self.ctxt)
        powers = self._powers()
        self.assertEqual(('running', 'running', 'paused', 'paused',
                          'paused'), (
            powers[ours], powers[resized], powers[evacuated],
            powers[failed], powers[busy]))
        row = db_api.instance_get(ours)
        self.assertEqual((states.ACTIVE, None, states.POWER_RUNNING),
                         (row['vm_state'], row['task_state'],
                          row['power_state']))
        # The row of the one kept fenced says what its guest is.
        self.assertEqual(states.POWER_PAUSED,
                         db_api.instance_get(failed)['power_state'])
        for uuid, outcome in ((ours, 'restored'),
                              (evacuated, 'not restored: the server is on'),
                              (failed, 'is error now')):
            fault = db_api.instance_fault_get_latest(uuid)
            self.assertIn('Self-fenced', fault['message'])
            self.assertEqual('h1', fault['host'])
            self.assertIn(outcome, fault['message'])
        self.assertIsNone(db_api.instance_fault_get_latest(busy))
        self.assertEqual([busy], list(self._record()))
        # Its evacuation failed: the server is back, nothing in flight.
        db_api.migration_get_all(instance_uuid=busy)
        for migration in db_api.migration_get_all(instance_uuid=busy):
            db_api.migration_update(migration['uuid'],
                                    {'status': states.M_FAILED})
        db_api.instance_update(busy, {'task_state': None})
        self.fence._next_restore = 0
        self.fence.tick(self.ctxt)
        self.assertEqual('running', self._powers()[busy])
        self.assertIsNone(self._record())

    def test_restore_loses_to_an_action_taken_meanwhile(self):
        uuid = self._server()
        self._silent(6)
        self.fence.tick(self.ctxt)
        real_get = self.fence.conductor.instance_get

        def racing_get(ctxt, instance_uuid, read_deleted=False):
            # The claim is read free, then taken before the restore's
            # compare-and-swap: the guest must stay fenced.
            row = real_get(ctxt, instance_uuid)
            db_api.instance_update(uuid, {'task_state': states.REBUILDING})
            return row
        self.fence.conductor.instance_get = racing_get
        self.fence.reported()
        self.fence.tick(self.ctxt)
        self.assertEqual({uuid: 'paused'}, self._powers())
        self.assertEqual([uuid], list(self._record()))

    def test_watch_thread_fences_then_restores(self):
        uuid = self._server()
        thread = self.fence.start()
        self.addCleanup(thread.join, 5)
        self.addCleanup(self.fence.stop)
        self._silent(6)
        deadline = time.monotonic() + 5
        while self._powers()[uuid] != 'paused' and \
                time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual({uuid: 'paused'}, self._powers())
        self.fence.reported()
        while self._powers()[uuid] != 'running' and \
                time.monotonic() < deadline + 5:
            time.sleep(0.05)
        self.assertEqual({uuid: 'running'}, self._powers())

    def test_forced_down_host_stays_fenced(self):
        uuid = self._server()
        evacuated = self._server()
        self._silent(6)
        self.fence.tick(self.ctxt)
        db_api.instance_update(evacuated, {'host': 'h2', 'node': 'h2'})
        self.fence.reported(forced_down=True)
        self.fence.tick(self.ctxt)
        self.fence._next_restore = 0
        self.fence.tick(self.ctxt)
        # What is settled is reported; only the restore waits.
        self.assertEqual('paused', self._powers()[uuid])
        self.assertEqual([uuid], list(self._record()))
        self.assertIn('on h2 now', db_api.instance_fault_get_latest(
            evacuated)['message'])
        self.fence.reported(forced_down=False)
        self.fence.tick(self.ctxt)
        self.assertEqual('running', self._powers()[uuid])

    def test_conductor_tells_forced_down(self):
        from nova_moves.conductor import db_proxy
        proxy = db_proxy.ComputeDBProxy()
        answer = proxy.service_report(None, 'h1', 'nova-moves-compute',
                                      'compute')
        self.assertFalse(answer['forced_down'])
        service = db_api.service_get_by_host_and_binary(
            'h1', 'nova-moves-compute')
        db_api.service_update(service['id'], {'forced_down': True})
        answer = proxy.service_report(None, 'h1', 'nova-moves-compute',
                                      'compute', settled=False)
        self.assertTrue(answer['forced_down'])

    def test_stopped_agent_does_not_fence(self):
        uuid = self._server()
        thread = self.fence.start()
        self.fence.stop()
        thread.join(5)
        self.assertFalse(thread.is_alive())
        self._silent(60)
        time.sleep(2 * fence.CHECK_INTERVAL)
        self.assertEqual({uuid: 'running'}, self._powers())


class HeartbeatTellsTheFenceTest(testtools.TestCase):

    def test_counted_report_only(self):
        CONF([], project='nova_moves', default_config_files=[])
        manager = compute_manager.ComputeManager.__new__(
            compute_manager.ComputeManager)
        manager.host = 'h1'
        manager.driver = mock.Mock(**{'node_info.return_value': {
            'availability_zone': 'nova'}})
        manager.conductor = mock.Mock(**{
            'service_report.side_effect': [{'settle_first': True},
                                           {'conductors': ['c1']}]})
        manager.before_reporting_up = mock.Mock(
            side_effect=lambda ctxt, evacuations=None: self.assertFalse(
                manager.fence.reported.called))
        manager.fence = mock.Mock()
        manager.report('ctxt', 'h1', 'nova-moves-compute', 'compute')
        manager.before_reporting_up.assert_called_once()
        manager.fence.reported.assert_called_once_with(forced_down=False)
