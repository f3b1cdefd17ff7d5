"""The transfer part of a live migration on real processes: progress in
the server migrations API, abort, force-complete, the per-host queue
(max_concurrent_live_migrations=1), and python-openstackclient."""
import json
import os
import subprocess
import time

from tests.functional import base
from tests.functional import test_live_migration
from tests.functional import test_openstackclient


class LiveMigrationTransferTest(test_live_migration.LiveMigrationHelpers,
                                base.StackTestCase):

    COMPUTES = 2
    EXTRA_CONF = {'DEFAULT': {'max_concurrent_live_migrations': 1}}

    def slow_transfer(self, host, seconds):
        self.admin.set_faults(host, [], {'live_migration': seconds})
        self.addCleanup(self.admin.set_faults, host, [], {})

    def server_migrations(self, server_id, version='2.80'):
        return self.admin.get('/servers/%s/migrations' % server_id,
                              version=version,
                              expect=200).json()['migrations']

    def test_progress_then_abort_running(self):
        server = self.boot('abort', host='compute1')
        self.slow_transfer('compute1', 5)
        self.live(server['id'], '2.34', host='compute2',
                  block_migration=True, expect=202)
        mig = self.wait_for_migration(server['id'], 'running')
        self.assertEqual('MIGRATING', self.admin.server(server['id'])[
            'status'])
        # Progress advances while it runs.
        time.sleep(1.0)
        first = self.server_migrations(server['id'])[0]
        time.sleep(1.0)
        second = self.server_migrations(server['id'])[0]
        self.assertGreater(self.admin.server(server['id'])['progress'], 0)
        self.assertEqual(512 * 1024 * 1024, first['memory_total_bytes'])
        self.assertEqual(1024 ** 3, first['disk_total_bytes'])
        self.assertGreater(first['memory_processed_bytes'], 0)
        self.assertGreater(second['memory_processed_bytes'],
                           first['memory_processed_bytes'])
        self.assertEqual(second['memory_total_bytes'],
                         second['memory_processed_bytes'] +
                         second['memory_remaining_bytes'])
        for key in ('id', 'server_uuid', 'status', 'source_compute',
                    'source_node', 'dest_compute', 'dest_node', 'dest_host',
                    'disk_processed_bytes', 'disk_remaining_bytes',
                    'created_at', 'updated_at', 'uuid', 'user_id',
                    'project_id'):
            self.assertIn(key, second)
        self.assertEqual(('compute1', 'compute2', server['id']),
                         (second['source_compute'], second['dest_compute'],
                          second['server_uuid']))
        shown = self.admin.get('/servers/%s/migrations/%s' % (
            server['id'], mig['id']), version='2.23',
            expect=200).json()['migration']
        self.assertNotIn('uuid', shown)
        self.assertEqual('running', shown['status'])
        self.assertNotIn('phases', shown)
        # nova_moves-migration-phases, asked for: when each status began.
        shown = self.admin.get('/servers/%s/migrations/%s' % (
            server['id'], mig['id']), version='2.80', expect=200,
            headers={'Nova-Moves-Extensions': 'nova_moves-migration-phases'}
        ).json()['migration']
        self.assertEqual(['accepted', 'queued', 'preparing', 'running'],
                         [p['phase'] for p in shown['phases']])
        # Not before 2.24.
        self.admin.delete('/servers/%s/migrations/%s' % (server['id'],
                                                           mig['id']),
                          version='2.23', expect=404)
        self.admin.delete('/servers/%s/migrations/%s' % (server['id'],
                                                           mig['id']),
                          version='2.24', expect=202)
        self.wait_for_migration(server['id'], 'cancelled', timeout=10)
        phases = self.admin.get('/os-migrations/%s' % mig['id'],
                                expect=200).json()['migration']['phases']
        self.assertEqual('cancelled', phases[-1]['phase'])
        self.assert_untouched(server['id'], 'compute1')
        self.assertEqual([], self.server_migrations(server['id']))
        self.admin.get('/servers/%s/migrations/%s' % (server['id'],
                                                       mig['id']),
                       version='2.23', expect=404)

    def test_force_complete(self):
        server = self.boot('force', host='compute1')
        self.slow_transfer('compute1', 60)
        self.live(server['id'], '2.34', host='compute2', expect=202)
        mig = self.wait_for_migration(server['id'], 'running')
        path = '/servers/%s/migrations/%s/action' % (server['id'], mig['id'])
        self.admin.post(path, {'force_complete': None}, version='2.21',
                        expect=404)
        self.admin.post(path, {'force_complete': {}}, version='2.22',
                        expect=400)
        started = time.monotonic()
        self.admin.post(path, {'force_complete': None}, version='2.22',
                        expect=202)
        self.wait_for_migration(server['id'], 'completed', timeout=15)
        self.assertLess(time.monotonic() - started, 15)
        self.assert_untouched(server['id'], 'compute2')
        # Not running any more: 400.
        response = self.admin.post(path, {'force_complete': None},
                                   version='2.22', expect=400)
        self.assertIn('completed', response.json()['badRequest']['message'])

    def test_second_migration_waits_in_queue(self):
        first = self.boot('q1', host='compute1')
        second = self.boot('q2', host='compute1')
        self.slow_transfer('compute1', 3)
        self.live(first['id'], '2.34', host='compute2', expect=202)
        self.wait_for_migration(first['id'], 'running')
        self.live(second['id'], '2.34', host='compute2', expect=202)
        queued = self.wait_for_migration(second['id'], 'queued')
        self.assertEqual('running',
                         self.live_migrations(first['id'])[0]['status'])
        # queued cannot be aborted before 2.65, nor force-completed.
        base_path = '/servers/%s/migrations/%s' % (second['id'],
                                                   queued['id'])
        response = self.admin.delete(base_path, version='2.64', expect=400)
        self.assertIn('queued', response.json()['badRequest']['message'])
        self.admin.post(base_path + '/action', {'force_complete': None},
                        version='2.22', expect=400)
        self.wait_for_migration(first['id'], 'completed', timeout=20)
        self.wait_for_migration(second['id'], 'running', timeout=10)
        self.wait_for_migration(second['id'], 'completed', timeout=20)
        self.assert_untouched(first['id'], 'compute2')
        self.assert_untouched(second['id'], 'compute2')

    def test_abort_queued_from_265(self):
        first = self.boot('a1', host='compute1')
        second = self.boot('a2', host='compute1')
        self.slow_transfer('compute1', 3)
        self.live(first['id'], '2.65', host='compute2', expect=202)
        self.wait_for_migration(first['id'], 'running')
        self.live(second['id'], '2.65', host='compute2', expect=202)
        queued = self.wait_for_migration(second['id'], 'queued')
        self.admin.delete('/servers/%s/migrations/%s' % (
            second['id'], queued['id']), version='2.65', expect=202)
        self.wait_for_migration(second['id'], 'cancelled', timeout=10)
        self.assert_untouched(second['id'], 'compute1')
        self.wait_for_migration(first['id'], 'completed', timeout=20)
        self.assert_untouched(first['id'], 'compute2')

    def test_server_migrations_unknown_and_other_server(self):
        one = self.boot('m1', host='compute1')
        two = self.boot('m2', host='compute1')
        self.slow_transfer('compute1', 3)
        self.live(one['id'], '2.34', host='compute2', expect=202)
        mig = self.wait_for_migration(one['id'], 'running')
        self.admin.get('/servers/%s/migrations' % one['id'], version='2.22',
                       expect=404)
        self.admin.get('/servers/%s/migrations/%s' % (two['id'], mig['id']),
                       version='2.23', expect=404)
        self.admin.delete('/servers/%s/migrations/999999' % one['id'],
                          version='2.24', expect=404)
        user = self.admin.as_user('alice:admin')
        user.get('/servers/%s/migrations' % one['id'], version='2.23',
                 expect=(403, 404))
        self.wait_for_migration(one['id'], 'completed', timeout=20)


class LiveMigrationOpenStackClientTest(
        test_live_migration.LiveMigrationHelpers, base.StackTestCase):
    """python-openstackclient against the API, unmodified."""

    COMPUTES = 2

    def osc(self, version, *args, expect_ok=True):
        argv = [test_openstackclient.openstack_binary(),
                '--os-auth-type', 'admin_token',
                '--os-token', 'admin:admin',
                '--os-endpoint', self.stack.endpoint,
                '--os-compute-api-version', version] + list(args)
        # `server migration list` builds an identity v3 proxy it never
        # uses; without a keystone the SDK would discover the compute
        # endpoint's version (2) for it and refuse.
        env = dict(os.environ, OS_IDENTITY_API_VERSION='3',
                   OS_IDENTITY_ENDPOINT_OVERRIDE=self.stack.endpoint)
        result = subprocess.run(argv, capture_output=True, text=True,
                                timeout=120, env=env)
        if expect_ok:
            self.assertEqual(0, result.returncode,
                             'openstack %s failed: %s %s' % (
                                 ' '.join(args), result.stdout,
                                 result.stderr))
        return result

    def test_live_migrate_with_and_without_host(self):
        server = self.boot('osc', host='compute1')
        self.osc('2.30', 'server', 'migrate', '--live-migration', '--host',
                 'compute2', server['id'])
        self.wait_for_migration(server['id'], 'completed')
        self.assert_untouched(server['id'], 'compute2')
        # 2.25: block_migration "auto", no host (the scheduler picks).
        # (OSC 10.5 cannot live-migrate below 2.25: it passes
        # disk_overcommit= to an SDK that expects disk_over_commit=.)
        self.osc('2.25', 'server', 'migrate', '--live-migration',
                 server['id'])
        self.wait_for_migration(server['id'], 'completed')
        self.assert_untouched(server['id'], 'compute1')
        self.osc('2.68', 'server', 'migrate', '--live-migration',
                 '--block-migration', '--host', 'compute2', server['id'])
        self.wait_for_migration(server['id'], 'completed')
        self.assert_untouched(server['id'], 'compute2')
        listed = json.loads(self.osc(
            '2.80', 'server', 'migration', 'list', '--server', server['id'],
            '-f', 'json').stdout)
        self.assertEqual(3, len(listed))
        self.assertEqual({'completed'}, {m['Status'] for m in listed})

    def test_abort_and_force_complete(self):
        server = self.boot('osc-ctl', host='compute1')
        self.admin.set_faults('compute1', [], {'live_migration': 60})
        self.addCleanup(self.admin.set_faults, 'compute1', [], {})
        self.osc('2.34', 'server', 'migrate', '--live-migration',
                 server['id'])
        mig = self.wait_for_migration(server['id'], 'running')
        listed = json.loads(self.osc(
            '2.23', 'server', 'migration', 'list', '--server', server['id'],
            '-f', 'json').stdout)
        self.assertEqual('running', listed[0]['Status'])
        self.osc('2.24', 'server', 'migration', 'abort', server['id'],
                 str(mig['id']))
        self.wait_for_migration(server['id'], 'cancelled', timeout=10)
        self.assert_untouched(server['id'], 'compute1')

        self.osc('2.34', 'server', 'migrate', '--live-migration', '--host',
                 'compute2', server['id'])
        mig = self.wait_for_migration(server['id'], 'running')
        self.osc('2.59', 'server', 'migration', 'force', 'complete',
                 server['id'], mig['uuid'])
        self.wait_for_migration(server['id'], 'completed', timeout=15)
        self.assert_untouched(server['id'], 'compute2')
