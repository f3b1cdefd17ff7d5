"""Live migration on real processes: the blocking checks below 2.34, the
asynchronous ones from 2.34, forced moves until 2.68, body rules per
microversion, and concurrent requests."""
import concurrent.futures
import time

from tests.functional import base


class LiveMigrationHelpers:

    def live(self, server_id, version, host=None, block_migration=False,
             disk_over_commit=None, force=None, expect=None):
        body = {'block_migration': block_migration, 'host': host}
        if disk_over_commit is not None:
            body['disk_over_commit'] = disk_over_commit
        if force is not None:
            body['force'] = force
        return self.admin.action(server_id, {'os-migrateLive': body},
                                 version=version, expect=expect)

    def live_migrations(self, server_id):
        return [m for m in self.admin.migrations(instance_uuid=server_id)
                if m['migration_type'] == 'live-migration']

    def wait_for_migration(self, server_id, statuses, timeout=60):
        statuses = (statuses,) if isinstance(statuses, str) else statuses

        def _check():
            migrations = self.live_migrations(server_id)
            if migrations and migrations[0]['status'] in statuses:
                return migrations[0]
            return None
        return self.admin.wait_for(_check, timeout=timeout,
                                   what='live migration of %s in %s'
                                   % (server_id, statuses))

    def events(self, server_id, request_id, client=None, timeout=30):
        # A step records its event's end after its last database step
        # (which is what the test waited for): give it a moment.
        deadline = time.monotonic() + timeout
        while True:
            detail = (client or self.admin).action_detail(server_id,
                                                          request_id)
            events = {e['event']: e for e in detail['events']}
            if all(e.get('result') for e in events.values()) or \
                    time.monotonic() > deadline:
                return events
            time.sleep(0.2)

    def host_of(self, server_id):
        return self.admin.server(server_id)['OS-EXT-SRV-ATTR:host']

    def assert_untouched(self, server_id, host):
        server = self.admin.wait_for_status(server_id, 'ACTIVE')
        self.assertEqual(host, server['OS-EXT-SRV-ATTR:host'])
        self.assertIsNone(server['OS-EXT-STS:task_state'])


class LiveMigrationChecksTest(LiveMigrationHelpers, base.StackTestCase):
    """compute1 and compute2 are alike; skylake has another CPU model, so
    every live migration to or from it fails the source check."""

    COMPUTES = [{'name': 'compute1'}, {'name': 'compute2'},
                {'name': 'skylake', 'compute': {'cpu_model': 'Skylake'}}]

    def test_233_bad_destination_is_400_and_good_one_moves(self):
        server = self.boot('sync', host='compute1')
        response = self.live(server['id'], '2.33', host='skylake',
                             disk_over_commit=None, expect=400)
        message = response.json()['badRequest']['message']
        self.assertIn('CPU model mismatch', message)
        self.assert_untouched(server['id'], 'compute1')
        self.assertEqual('error',
                         self.live_migrations(server['id'])[0]['status'])
        # The events of the blocking path are recorded too.
        events = self.events(server['id'],
                             response.headers['x-openstack-request-id'])
        self.assertEqual('Error', events['conductor_migrate_server']['result'])
        self.assertEqual(
            'Error', events['compute_check_can_live_migrate_source']['result'])

        response = self.live(server['id'], '2.33', host='compute2',
                             expect=202)
        migration = self.wait_for_migration(server['id'], 'completed')
        self.assertEqual('compute2', migration['dest_compute'])
        self.assert_untouched(server['id'], 'compute2')
        names = ('conductor_migrate_server',
                 'compute_check_can_live_migrate_destination',
                 'compute_check_can_live_migrate_source',
                 'compute_pre_live_migration', 'compute_live_migration',
                 'compute_post_live_migration_at_destination')
        request_id = response.headers['x-openstack-request-id']
        # The source records its event's end just after the migration row
        # says completed.
        events = self.admin.wait_for(
            lambda: (lambda e: e if all(
                e.get(n, {}).get('result') for n in names) else None)(
                self.events(server['id'], request_id)),
            timeout=10, what='every event finished')
        for name in names:
            self.assertEqual('Success', events[name]['result'], name)

    def test_check_is_a_dry_run(self):
        server = self.boot('dry', host='compute1')
        body = {'host': 'compute2', 'block_migration': 'auto', 'check': True}
        for version in ('2.33', '2.95'):
            verdict = self.admin.action(server['id'], {'os-migrateLive': body},
                                        version=version, expect=200).json()
            self.assertEqual({'valid': True, 'reasons': []}, verdict)
        svc = [s for s in self.admin.services('nova-moves-compute')
               if s['host'] == 'compute2'][0]
        self.admin.put('/os-services/%s' % svc['id'],
                       {'status': 'disabled', 'disabled_reason': 'test'},
                       version='2.53', expect=200)
        self.addCleanup(self.admin.put, '/os-services/%s' % svc['id'],
                        {'status': 'enabled'}, version='2.53')
        verdict = self.admin.action(server['id'], {'os-migrateLive': body},
                                    version='2.95', expect=200).json()
        self.assertFalse(verdict['valid'])
        self.assertTrue(any('ComputeFilter' in r for r in verdict['reasons']),
                        verdict)
        resp = self.admin.action(
            server['id'], {'os-migrateLive': dict(body, host=None)},
            version='2.95', expect=400)
        self.assertIn('check', resp.text)
        # Nothing happened.
        self.assertEqual(['create'], [a['action'] for a in
                                      self.admin.actions(server['id'])])
        self.assertEqual([], self.live_migrations(server['id']))
        self.assert_untouched(server['id'], 'compute1')

    def test_234_bad_destination_is_202_and_error_event(self):
        user = self.admin.as_user('alice:proj-a')
        # An admin token scoped to alice's project places her server.
        server = self.boot('async', host='compute1',
                           client=self.admin.as_user('admin:proj-a'))
        response = self.live(server['id'], '2.34', host='skylake',
                             block_migration='auto', expect=202)
        request_id = response.headers['x-openstack-request-id']
        self.wait_for_migration(server['id'], 'error')
        self.assert_untouched(server['id'], 'compute1')
        events = self.events(server['id'], request_id)
        conductor = events['conductor_live_migrate_instance']
        self.assertEqual('Error', conductor['result'])
        self.assertIn('CPU model mismatch', conductor['traceback'])
        self.assertEqual(
            'Error', events['compute_check_can_live_migrate_source']['result'])
        self.assertEqual(
            'Error',
            events['compute_check_can_live_migrate_destination']['result'])
        # The owner sees the events but not the traceback.
        mine = self.events(server['id'], request_id, client=user)
        self.assertEqual(
            'Error', mine['conductor_live_migrate_instance']['result'])
        self.assertNotIn('traceback', mine['conductor_live_migrate_instance'])

        response = self.live(server['id'], '2.34', host='compute2',
                             block_migration='auto', expect=202)
        self.wait_for_migration(server['id'], 'completed')
        self.assert_untouched(server['id'], 'compute2')

    def test_scheduler_skips_host_failing_the_checks(self):
        # Fill compute2 so the scheduler prefers skylake (most free RAM),
        # whose check fails; the retry then lands on compute2.
        server = self.boot('retry', host='compute1')
        big = self.boot('filler', host='compute2',
                        flavor=self.flavor('filler', ram=4096))
        response = self.live(server['id'], '2.34', expect=202)
        migration = self.wait_for_migration(server['id'], 'completed')
        self.assertEqual('compute2', migration['dest_compute'])
        self.assert_untouched(server['id'], 'compute2')
        detail = self.admin.action_detail(
            server['id'], response.headers['x-openstack-request-id'])
        checks = sorted(
            (e['host'], e['result']) for e in detail['events']
            if e['event'] == 'compute_check_can_live_migrate_destination')
        self.assertEqual([('compute2', 'Success'), ('skylake', 'Error')],
                         checks)
        conductor = [e for e in detail['events']
                     if e['event'] == 'conductor_live_migrate_instance']
        self.assertEqual('Success', conductor[0]['result'])
        for vm in (server, big):
            self.admin.delete('/servers/%s' % vm['id'], expect=204)

    def test_no_host_at_233_when_every_destination_fails_is_400(self):
        server = self.boot('lonely', host='skylake')
        response = self.live(server['id'], '2.33', expect=400)
        self.assertIn('No valid host',
                      response.json()['badRequest']['message'])
        self.assert_untouched(server['id'], 'skylake')
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_forced_move_at_230(self):
        server = self.boot('forced', host='compute1')
        self.live(server['id'], '2.30', host='compute2', force=True,
                  expect=202)
        self.wait_for_migration(server['id'], 'completed')
        self.assert_untouched(server['id'], 'compute2')

    def test_force_rules(self):
        server = self.boot('rules', host='compute1')
        # 2.68 removed force, whatever its value.
        for force in (True, False):
            response = self.live(server['id'], '2.68', host='compute2',
                                 force=force, expect=400)
            self.assertIn('force', response.json()['badRequest']['message'])
        # Before 2.30 it did not exist.
        self.live(server['id'], '2.29', host='compute2', force=True,
                  expect=400)
        # force without a host means nothing to force to.
        response = self.live(server['id'], '2.67', force=True, expect=400)
        self.assertIn("Can't force",
                      response.json()['badRequest']['message'])
        self.live(server['id'], '2.67', host='nowhere', expect=400)
        self.live(server['id'], '2.67', host='compute1', expect=400)
        self.assertEqual([], self.live_migrations(server['id']))
        self.assert_untouched(server['id'], 'compute1')

    def test_body_rules_around_225(self):
        server = self.boot('bodies', host='compute1')
        # Below 2.25 all three fields are required, "auto" is not a value.
        self.live(server['id'], '2.24', host='compute2', expect=400)
        self.live(server['id'], '2.24', host='compute2',
                  block_migration='auto', disk_over_commit=False,
                  expect=400)
        self.admin.action(server['id'], {'os-migrateLive': {
            'block_migration': False, 'disk_over_commit': False}},
            version='2.24', expect=400)
        # From 2.25 disk_over_commit is gone.
        response = self.live(server['id'], '2.25', host='compute2',
                             disk_over_commit=False, expect=400)
        self.assertIn('disk_over_commit',
                      response.json()['badRequest']['message'])
        self.live(server['id'], '2.25', host='compute2',
                  block_migration='yes-please', expect=400)
        self.assertEqual([], self.live_migrations(server['id']))
        self.live(server['id'], '2.24', host='compute2',
                  disk_over_commit=True, block_migration='True', expect=202)
        self.wait_for_migration(server['id'], 'completed')
        self.live(server['id'], '2.25', host='compute1',
                  block_migration='auto', expect=202)
        self.wait_for_migration(server['id'], 'completed')
        self.assert_untouched(server['id'], 'compute1')

    def test_non_admin_is_forbidden(self):
        user = self.admin.as_user('bob:proj-b')
        server = self.boot('notmine', host='compute1',
                           client=self.admin.as_user('admin:proj-b'))
        user.action(server['id'], {'os-migrateLive': {
            'block_migration': 'auto', 'host': None}}, version='2.34',
            expect=403)
        self.assert_untouched(server['id'], 'compute1')

    def test_concurrent_requests_one_wins(self):
        server = self.boot('race', host='compute1')
        self.admin.set_faults('compute1', [], {'live_migration': 1})
        self.addCleanup(self.admin.set_faults, 'compute1', [], {})

        def one(_):
            client = self.stack.client()
            return client.action(server['id'], {'os-migrateLive': {
                'block_migration': 'auto', 'host': 'compute2'}},
                version='2.34').status_code

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            codes = sorted(pool.map(one, range(8)))
        self.assertEqual([202] + [409] * 7, codes)
        self.wait_for_migration(server['id'], 'completed')
        self.assertEqual(1, len(self.live_migrations(server['id'])))
        self.assert_untouched(server['id'], 'compute2')

    def test_failed_pre_live_migration_rolls_back(self):
        server = self.boot('prefail', host='compute1')
        self.admin.set_faults('compute2', ['pre_live_migration'])
        self.addCleanup(self.admin.set_faults, 'compute2', [])
        response = self.live(server['id'], '2.34', host='compute2',
                             block_migration='auto', expect=202)
        self.wait_for_migration(server['id'], 'error')
        self.assert_untouched(server['id'], 'compute1')
        events = self.events(server['id'],
                             response.headers['x-openstack-request-id'])
        self.assertEqual('Error', events['compute_live_migration']['result'])
        self.assertEqual('Error',
                         events['compute_pre_live_migration']['result'])

    def test_failed_transfer_rolls_back(self):
        server = self.boot('xferfail', host='compute1')
        self.admin.set_faults('compute1', ['live_migration'])
        self.addCleanup(self.admin.set_faults, 'compute1', [])
        self.live(server['id'], '2.33', host='compute2', expect=202)
        self.wait_for_migration(server['id'], 'error')
        self.assert_untouched(server['id'], 'compute1')

    def test_wrong_state_is_409(self):
        server = self.boot('busy', host='compute1')
        self.admin.set_faults('compute1', [], {'live_migration': 1.5})
        self.addCleanup(self.admin.set_faults, 'compute1', [], {})
        self.live(server['id'], '2.34', host='compute2',
                  block_migration='auto', expect=202)
        self.wait_for_migration(server['id'], 'running')
        self.live(server['id'], '2.34', host='compute2',
                  block_migration='auto', expect=409)
        self.wait_for_migration(server['id'], 'completed')
        self.assert_untouched(server['id'], 'compute2')


class LiveMigrationComplexAllocationTest(LiveMigrationHelpers,
                                         base.StackTestCase):
    """Nova spec "Remove force flag from live-migrate and evacuate": a
    forced move cannot copy an allocation that uses a nested child
    (nested) or a sharing provider (shared1, shared2)."""

    COMPUTES = [{'name': 'nested', 'compute': {'disk_provider': 'nested'}},
                {'name': 'shared', 'hosts': ['shared1', 'shared2'],
                 'compute': {'disk_provider': 'sharing:agg1'}},
                {'name': 'plain'},
                # Placement over-commits RAM 4x; the host check does not.
                {'name': 'tiny', 'compute': {'memory_mb': 1024,
                                             'ram_allocation_ratio': 4.0}}]

    def test_destination_without_free_memory_fails_its_check(self):
        fillers = [self.boot('fill%d' % i, host='tiny') for i in range(2)]
        server = self.boot('mover', host='plain')
        response = self.live(server['id'], '2.33', host='tiny', expect=400)
        self.assertIn('Lack of memory',
                      response.json()['badRequest']['message'])
        self.assert_untouched(server['id'], 'plain')
        for vm in fillers + [server]:
            self.admin.delete('/servers/%s' % vm['id'], expect=204)

    def test_forced_nested_at_233_is_400(self):
        server = self.boot('nest', host='nested')
        before = self.admin.placement()['allocations'][server['id']]
        response = self.live(server['id'], '2.33', host='plain', force=True,
                             expect=400)
        self.assertIn('No valid host',
                      response.json()['badRequest']['message'])
        self.assert_untouched(server['id'], 'nested')
        self.assertEqual(before,
                         self.admin.placement()['allocations'][server['id']])
        self.assertEqual('error',
                         self.live_migrations(server['id'])[0]['status'])
        # Not forced, the scheduler finds a candidate and the move works.
        self.live(server['id'], '2.67', host='plain', expect=202)
        self.wait_for_migration(server['id'], 'completed')
        self.assert_untouched(server['id'], 'plain')
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_forced_sharing_at_267_is_error_event(self):
        server = self.boot('share', host='shared1')
        before = self.admin.placement()['allocations'][server['id']]
        response = self.live(server['id'], '2.67', host='plain', force=True,
                             block_migration='auto', expect=202)
        self.wait_for_migration(server['id'], 'error')
        self.assert_untouched(server['id'], 'shared1')
        self.assertEqual(before,
                         self.admin.placement()['allocations'][server['id']])
        events = self.events(server['id'],
                             response.headers['x-openstack-request-id'])
        event = events['conductor_live_migrate_instance']
        self.assertEqual('Error', event['result'])
        self.assertIn('NoValidHost', event['traceback'])
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_forced_to_sharing_host_at_267_is_error_event(self):
        # A single-root allocation forced onto a host whose disk is only
        # in a sharing provider: the root alone cannot take it.
        server = self.boot('toshare', host='plain')
        response = self.live(server['id'], '2.67', host='shared2',
                             force=True, block_migration='auto', expect=202)
        self.wait_for_migration(server['id'], 'error')
        self.assert_untouched(server['id'], 'plain')
        events = self.events(server['id'],
                             response.headers['x-openstack-request-id'])
        self.assertEqual(
            'Error', events['conductor_live_migrate_instance']['result'])
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_force_at_268_is_400(self):
        server = self.boot('gone', host='nested')
        self.live(server['id'], '2.68', host='plain', force=True,
                  block_migration='auto', expect=400)
        self.assertEqual([], self.live_migrations(server['id']))
        self.admin.delete('/servers/%s' % server['id'], expect=204)
