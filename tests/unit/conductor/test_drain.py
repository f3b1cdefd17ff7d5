"""The conductor's drain pass on a real (SQLite) database, with the gate
and the compute RPC faked: which move each server gets, the host
disabled, completion, the cold migration confirmed, failures reported,
and a dead owner's drain taken over."""
import datetime

import testtools

from nova_moves.conductor import drain as nm_drain
from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves import servicegroup
from nova_moves import states
from tests.unit import fixtures as nm_fixtures

CONF = conf.CONF
FLAVOR = {'id': 1, 'flavorid': 's', 'name': 'small', 'vcpus': 1,
          'memory_mb': 512, 'root_gb': 1}


class _Gate:
    def __init__(self):
        self.submitted = []

    def submit(self, fn, *args):
        self.submitted.append(args)


class _Compute:
    def __init__(self):
        self.confirmed = []
        self.facts = []

    def confirm_resize(self, ctxt, host, instance_uuid, migration_uuid,
                       confirm=None):
        self.confirmed.append((host, instance_uuid, migration_uuid))
        self.facts.append(confirm)


class DrainRunnerTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        CONF([], project='nova_moves', default_config_files=[])
        self.useFixture(nm_fixtures.Database())
        CONF.set_override('host', 'cond1')
        self.addCleanup(CONF.clear_override, 'host')
        nm_fixtures.compute('h1')
        nm_fixtures.compute('h2')
        self.gate, self.compute = _Gate(), _Compute()
        self.group = servicegroup.ServiceGroup()
        self.addCleanup(self.group.stop)
        self.runner = nm_drain.DrainRunner(self.gate, None, self.compute,
                                           self.group)

    def _server(self, vm_state):
        return db_api.instance_create({
            'display_name': vm_state, 'project_id': 'p', 'user_id': 'u',
            'host': 'h1', 'node': 'h1', 'flavor': FLAVOR,
            'vm_state': vm_state, 'power_state': 1})['uuid']

    def _servers(self, drain):
        return {s['instance_uuid']: s
                for s in db_api.drain_get(drain['uuid'])['servers']}

    def _moved(self, instance_uuid):
        """What a finished move leaves: the server elsewhere, idle."""
        db_api.instance_update(instance_uuid, {
            'host': 'h2', 'node': 'h2', 'task_state': None})

    def test_auto_drain_start_follow_finish(self):
        active = self._server(states.ACTIVE)
        stopped = self._server(states.STOPPED)
        broken = self._server(states.ERROR)
        drain = db_api.drain_create('h1', 'auto', user_id='admin',
                                    project_id='admin')
        self.runner.tick()
        service = db_api.service_get_by_host_and_binary(
            'h1', 'nova-moves-compute')
        self.assertTrue(service['disabled'])
        self.assertIn(drain['uuid'], service['disabled_reason'])
        servers = self._servers(drain)
        self.assertEqual(('moving', 'live'), (servers[active]['state'],
                                              servers[active]['action']))
        self.assertEqual(('moving', 'cold'), (servers[stopped]['state'],
                                              servers[stopped]['action']))
        self.assertEqual('failed', servers[broken]['state'])
        self.assertIn('vm_state error', servers[broken]['reason'])
        self.assertEqual(states.MIGRATING,
                         db_api.instance_get(active)['task_state'])
        live = db_api.migration_get(servers[active]['migration_uuid'])
        self.assertEqual((states.M_ACCEPTED, 'h1'),
                         (live['status'], live['source_compute']))
        self.assertEqual({'live', 'cold'},
                         {args[0] for args in self.gate.submitted})
        # The live migration completes; the cold one reaches finished
        # (its conductor made the migration with the drain's uuid).
        db_api.migration_update(live['uuid'],
                                {'status': states.M_COMPLETED})
        self._moved(active)
        cold = db_api.migration_create({
            'uuid': servers[stopped]['migration_uuid'],
            'instance_uuid': stopped, 'migration_type': states.MIGRATION,
            'status': states.M_FINISHED, 'source_compute': 'h1',
            'dest_compute': 'h2'})
        self.runner.tick()
        servers = self._servers(drain)
        self.assertEqual('done', servers[active]['state'])
        self.assertEqual([('h1', stopped, cold['uuid'])],
                         self.compute.confirmed)
        # The same start as the API's: the cast carries the 1.8 facts.
        self.assertEqual('h2', self.compute.facts[0]['dest'])
        self.assertEqual(states.M_CONFIRMING,
                         db_api.migration_get(cold['uuid'])['status'])
        self.assertEqual('running', db_api.drain_get(drain['uuid'])['status'])
        db_api.migration_update(cold['uuid'], {'status': states.M_CONFIRMED})
        self.runner.tick()
        final = db_api.drain_get(drain['uuid'])
        self.assertEqual('completed', final['status'])
        self.assertIsNotNone(final['finished_at'])
        # Still disabled, ready for maintenance.
        self.assertTrue(db_api.service_get_by_host_and_binary(
            'h1', 'nova-moves-compute')['disabled'])

    def test_failed_move_is_retried_then_reported(self):
        CONF.set_override('drain_max_attempts', 2, group='conductor')
        self.addCleanup(CONF.clear_override, 'drain_max_attempts',
                        group='conductor')
        server = self._server(states.ACTIVE)
        drain = db_api.drain_create('h1', 'live')
        for attempt in (1, 2):
            self.runner.tick()
            row = self._servers(drain)[server]
            self.assertEqual(('moving', attempt), (row['state'],
                                                   row['attempts']))
            db_api.move_failed(row['migration_uuid'], fault={
                'code': 400, 'message': 'No valid host %d' % attempt})
            self.runner.tick()
        row = self._servers(drain)[server]
        self.assertEqual('failed', row['state'])
        self.assertEqual('No valid host 2', row['reason'])
        self.assertEqual('completed', db_api.drain_get(drain['uuid'])[
            'status'])

    def test_a_dead_owners_drain_is_taken_over(self):
        drain = db_api.drain_create('h1', 'auto')
        self.assertTrue(db_api.drain_claim(
            drain['uuid'], 'cond0', datetime.datetime(2000, 1, 1)))
        # cond0's heartbeat is fresh: not ours.
        self.runner.tick()
        self.assertEqual('cond0', db_api.drain_get(drain['uuid'])['owner'])
        old = datetime.datetime.utcnow() - datetime.timedelta(hours=1)
        db_api.drain_update(drain['uuid'], {'heartbeat_at': old})
        self.runner.tick()
        taken = db_api.drain_get(drain['uuid'])
        self.assertEqual('cond1', taken['owner'])
        self.assertEqual('completed', taken['status'])  # nothing on h1
