"""Host drains run by two conductors, through the API and through
nova-moves-manage, with the cluster and per-host limits held (measured
from the move queue's admission times and the migrations' end times) and
the drain's conductor killed half-way."""
import datetime
import json
import os
import re
import subprocess
import sys
import time

from nova_moves.db import api as db_api
from nova_moves.harness.drain_phase import max_overlap
from nova_moves import states
from tests.functional import base
from tests.functional import stack_db

CLUSTER_LIMIT = 3
HOST_LIMIT = 2


def _time(value):
    return datetime.datetime.fromisoformat(value)


class HostDrainTest(base.StackTestCase):
    COMPUTES = 3
    CONDUCTORS = 2
    EXTRA_CONF = {
        'DEFAULT': {'stuck_move_timeout': 8},
        'quota': {'instances': -1, 'cores': -1, 'ram': -1},
        'conductor': {'max_concurrent_migrations_per_cluster':
                      str(CLUSTER_LIMIT), 'queue_poll_interval': '0.5'},
        'compute': {'operation_seconds': 'live_migration:0.4'}}

    def setUp(self):
        super().setUp()
        stack_db.use_stack_database(self)

    def _boot_many(self, count, host, prefix):
        flavor = self.flavor('drain', ram=256)
        ids = [self.admin.boot('%s%d' % (prefix, i), flavor['id'], host=host,
                               wait=False)['id'] for i in range(count)]
        for server_id in ids:
            self.assertEqual('ACTIVE', self.admin.wait_for_status(
                server_id, ('ACTIVE', 'ERROR'), timeout=120)['status'])
        return ids

    def _drain(self, drain_id):
        return self.admin.get('/os-host-drains/%s' % drain_id,
                              expect=200).json()['host_drain']

    def _wait_drain(self, drain_id, timeout=150):
        self.admin.wait_for(
            lambda: self._drain(drain_id)['status'] in ('completed',
                                                        'cancelled'),
            timeout=timeout, interval=0.5, what='drain %s ends' % drain_id)
        return self._drain(drain_id)

    def assert_limits_held(self, since):
        """From the database: each move's slot [admitted, released) and
        each migration's [admitted, last update) never overlap beyond
        the limits, for the cluster and for every source host."""
        rows = [r for r in db_api.move_queue_get_all()
                if r['admitted_at'] and _time(r['admitted_at']) >= since]
        self.assertTrue(rows)
        migrations = {m['uuid']: m for m in db_api.migration_get_all(
            uuids=[r['migration_uuid'] for r in rows])}
        slots, moves = [], []
        for row in rows:
            start = _time(row['admitted_at'])
            end = _time(row['released_at']) if row['released_at'] else \
                datetime.datetime.max
            slots.append((row['source_host'], start, end))
            # The migration's own per-phase timestamps: it stops moving
            # when it enters its first settled status.
            migration = migrations[row['migration_uuid']]
            settled = [at for status, at in json.loads(
                migration['phases'] or '[]')
                if status in states.MIGRATION_SETTLED_STATUSES]
            moves.append((row['source_host'], start,
                          _time(settled[0]) if settled else end))
        observed = {}
        for name, intervals in (('slots', slots), ('migrations', moves)):
            cluster = max_overlap([(s, e) for _, s, e in intervals])
            self.assertLessEqual(cluster, CLUSTER_LIMIT, name)
            for host in {h for h, _, _ in intervals}:
                per_host = max_overlap([(s, e) for h, s, e in intervals
                                        if h == host])
                self.assertLessEqual(per_host, HOST_LIMIT, (name, host))
                observed[(name, host)] = per_host
            observed[name] = cluster
        return observed

    def report(self, what, value):
        print('%s: %s' % (what, value))

    def _enable(self, host):
        self.admin.put('/os-services/%s' % self._service(host)['id'],
                       {'status': 'enabled'}, version='2.53', expect=200)

    def test_api_drain_with_a_conductor_killed(self):
        since = db_api.utcnow()
        ids = self._boot_many(22, 'compute1', 'api-drain')
        started = time.monotonic()
        created = self.admin.post('/os-host-drains', {
            'host': 'compute1', 'mode': 'auto',
            'target_hosts': ['compute3']}, expect=202).json()
        drain_id = created['host_drain']['id']
        self.addCleanup(self._enable, 'compute1')
        # Half-way, kill the conductor running the drain.
        self.admin.wait_for(
            lambda: self._drain(drain_id)['counts']['done'] >= 6,
            timeout=90, interval=0.3, what='6 servers moved')
        owner = self._drain(drain_id)['conductor']
        self.stack.kill(owner)
        self.addCleanup(self.stack.restart, owner)
        drain = self._wait_drain(drain_id, timeout=150)
        took = time.monotonic() - started
        self.assertEqual('completed', drain['status'], drain)
        self.assertEqual(22, drain['counts']['done'], drain['servers'])
        self.assertEqual(0, drain['counts']['failed'])
        self.assertNotEqual(owner, drain['conductor'])
        for server_id in ids:
            server = self.admin.server(server_id, version='2.47')
            self.assertEqual('compute3', server['OS-EXT-SRV-ATTR:host'])
            self.assertEqual('ACTIVE', server['status'])
        service = [s for s in self.admin.services('nova-moves-compute')
                   if s['host'] == 'compute1'][0]
        self.assertEqual('disabled', service['status'])
        self.assertIn(drain_id, service['disabled_reason'])
        observed = self.assert_limits_held(since)
        self.report('API drain of 22 servers (conductor killed)',
                    '%.1fs, max concurrency %s' % (took, observed))

    def test_auto_drain_cold_migrates_shutoff_and_reports_failures(self):
        ids = self._boot_many(3, 'compute1', 'auto')
        stopped, broken, active = ids
        # What a stop and an earlier failure leave (no os-stop here).
        db_api.instance_update(stopped, {'vm_state': 'stopped',
                                         'power_state': 4})
        db_api.instance_update(broken, {'vm_state': 'error'})
        drain_id = self.admin.post('/os-host-drains', {
            'host': 'compute1', 'target_hosts': ['compute3']},
            expect=202).json()['host_drain']['id']
        self.addCleanup(self._enable, 'compute1')
        self.addCleanup(self.admin.delete, '/servers/%s' % broken)
        # One drain per host at a time.
        self.admin.post('/os-host-drains', {'host': 'compute1'},
                        expect=409)
        drain = self._wait_drain(drain_id, timeout=90)
        servers = {s['server_uuid']: s for s in drain['servers']}
        self.assertEqual('completed', drain['status'])
        self.assertEqual({'done': 2, 'failed': 1},
                         {k: drain['counts'][k] for k in ('done', 'failed')})
        self.assertEqual(('cold', 'done'), (servers[stopped]['action'],
                                            servers[stopped]['state']))
        self.assertEqual(('live', 'done'), (servers[active]['action'],
                                            servers[active]['state']))
        self.assertEqual('failed', servers[broken]['state'])
        self.assertIn('vm_state error', servers[broken]['reason'])
        for server_id, status in ((stopped, 'SHUTOFF'), (active, 'ACTIVE')):
            server = self.admin.server(server_id, version='2.47')
            self.assertEqual(('compute3', status),
                             (server['OS-EXT-SRV-ATTR:host'],
                              server['status']))
        # Over: nothing to cancel; listed with its counts.
        self.admin.delete('/os-host-drains/%s' % drain_id, expect=409)
        listed = self.admin.get('/os-host-drains?host=compute1',
                                expect=200).json()['host_drains']
        self.assertIn(drain_id, [x['id'] for x in listed])
        # Admin only.
        self.admin.as_user('alice:p1').get('/os-host-drains', expect=403)

    def test_cancel_leaves_pending_servers(self):
        ids = self._boot_many(10, 'compute1', 'cancel')
        drain_id = self.admin.post('/os-host-drains', {
            'host': 'compute1', 'mode': 'live'},
            expect=202).json()['host_drain']['id']
        self.addCleanup(self._enable, 'compute1')
        self.admin.wait_for(
            lambda: self._drain(drain_id)['counts']['moving'] > 0,
            timeout=30, interval=0.2, what='a move started')
        self.admin.delete('/os-host-drains/%s' % drain_id, expect=202)
        drain = self._wait_drain(drain_id, timeout=60)
        self.assertEqual('cancelled', drain['status'])
        self.assertGreater(drain['counts']['pending'], 0, drain['counts'])
        self.assertEqual(0, drain['counts']['moving'])
        left = [s for s in ids if self.admin.server(s, version='2.47')[
            'OS-EXT-SRV-ATTR:host'] == 'compute1']
        self.assertEqual(drain['counts']['pending'], len(left))

    def _service(self, host):
        return [s for s in self.admin.services('nova-moves-compute')
                if s['host'] == host][0]

    def _bring_back(self, host):
        """Restart, unforce, enable: the evacuated copies are cleaned up
        by the host's start-up."""
        if not self.stack.processes[host].alive():
            self.stack.restart(host)
        self.admin.put('/os-services/%s' % self._service(host)['id'],
                       {'forced_down': False, 'status': 'enabled'},
                       version='2.53', expect=200)
        self.admin.wait_for(
            lambda: self._service(host)['state'] == 'up' and not [
                m for m in self.admin.migrations(migration_type='evacuation')
                if m['source_compute'] == host and m['status'] == 'done'],
            timeout=60, interval=0.3, what='%s back and clean' % host)

    def test_dead_host_is_evacuated_only_when_asked(self):
        ids = self._boot_many(3, 'compute2', 'dead')
        self.stack.kill('compute2')
        self.addCleanup(self._bring_back, 'compute2')
        self.admin.wait_for(
            lambda: self._service('compute2')['state'] == 'down',
            timeout=40, interval=0.5, what='compute2 down')
        refused = self.admin.post('/os-host-drains', {'host': 'compute2'},
                                  expect=202).json()['host_drain']['id']
        drain = self._wait_drain(refused, timeout=60)
        # Every server of compute2 (ours and any an earlier test left).
        self.assertGreaterEqual(drain['counts']['total'], 3)
        self.assertEqual(drain['counts']['total'], drain['counts']['failed'],
                         drain['servers'])
        self.assertIn('force_down_if_dead', drain['servers'][0]['reason'])
        evacuated = self.admin.post('/os-host-drains', {
            'host': 'compute2', 'force_down_if_dead': True,
            'target_hosts': ['compute3']}, expect=202).json()['host_drain']
        drain = self._wait_drain(evacuated['id'], timeout=90)
        self.assertEqual(drain['counts']['total'], drain['counts']['done'],
                         drain['servers'])
        self.assertEqual({'evacuate'},
                         {s['action'] for s in drain['servers']})
        self.assertTrue(self._service('compute2')['forced_down'])
        for server_id in ids:
            server = self.admin.server(server_id, version='2.47')
            self.assertEqual(('compute3', 'ACTIVE'),
                             (server['OS-EXT-SRV-ATTR:host'],
                              server['status']))

    def test_manage_drain_while_other_moves_run(self):
        since = db_api.utcnow()
        ids = self._boot_many(20, 'compute2', 'mng-drain')
        others = self._boot_many(4, 'compute3', 'mng-other')
        manage = [os.path.join(os.path.dirname(sys.executable),
                               'nova-moves-manage'),
                  '--config-file', self.stack.config_path, 'host', 'drain',
                  'compute2', '--os-auth-type', 'none', '--endpoint',
                  self.stack.endpoint, '--wait',
                  '--target', 'compute1', '--timeout', '150']
        started = time.monotonic()
        self.addCleanup(self._enable, 'compute2')
        proc = subprocess.Popen(manage, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        # Moves asked of the API meanwhile share the cluster's limit:
        # they wait in queued instead of being refused.
        time.sleep(1.0)
        for server_id in others:
            self.admin.action(server_id, {'os-migrateLive': {
                'host': None, 'block_migration': 'auto'}},
                version='2.30', expect=202)
        queued = [m for m in self.admin.migrations()
                  if m['status'] == 'queued']
        out, err = proc.communicate(timeout=200)
        took = time.monotonic() - started
        self.assertEqual(0, proc.returncode, out + err)
        self.assertIn('completed', out)
        # Every server of compute2 (ours and any an earlier test left).
        done, total = re.findall(r'(\d+)/(\d+) done', out)[-1]
        self.assertEqual(done, total, out)
        self.assertGreaterEqual(int(done), 20, out)
        self.assertTrue(queued, 'no move waited in queued')
        for server_id in ids:
            server = self.admin.server(server_id, version='2.47')
            self.assertEqual('compute1', server['OS-EXT-SRV-ATTR:host'])
        for server_id in others:
            self.admin.wait_for(
                lambda: self.admin.server(server_id, version='2.47')[
                    'OS-EXT-SRV-ATTR:host'] != 'compute3',
                timeout=60, what='%s moved' % server_id)
        observed = self.assert_limits_held(since)
        self.report('manage drain of 20 servers + 4 other moves',
                    '%.1fs, max concurrency %s' % (took, observed))
