"""Resize and cold migrate on real processes (seeds 000, 002, 003): the
moves, their checks and their rollbacks on one stack. Reschedules and
forced moves are in test_resize_reschedule, many at once in
test_resize_concurrent."""
import concurrent.futures

from tests.functional import base
from tests.functional import resize_base
from tests.functional import stack_db


class ResizeTest(resize_base.ResizeMixinTest, base.StackTestCase):

    def test_resize_and_confirm(self):
        small, medium = self.flavor('small'), self.flavor('medium', 2, 1024)
        server = self.boot('r1', small)
        source = server['OS-EXT-SRV-ATTR:host']
        self.resize(server, medium)
        resized = self.wait(server, 'VERIFY_RESIZE')
        self.assertEqual(self.other_host(source),
                         resized['OS-EXT-SRV-ATTR:host'])
        self.assertEqual(2, resized['flavor']['vcpus'])
        self.assertEqual('resized', resized['OS-EXT-STS:vm_state'])
        mig = self.migration_of(server)
        self.assertEqual(('finished', 'resize', source),
                         (mig['status'], mig['migration_type'],
                          mig['source_compute']))
        # Nova's old/new_instance_type_id: the flavors' internal ids.
        with stack_db.stack_database(self.stack) as db:
            ids = [db.flavor_get(f['id'])['id'] for f in (small, medium)]
        self.assertEqual(ids, [mig['old_instance_type_id'],
                               mig['new_instance_type_id']])
        # The migration holds the old flavor on the source meanwhile.
        held = self.admin.placement()['allocations'][mig['uuid']]
        self.assertEqual({'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1},
                         list(held.values())[0])
        active = self.confirm(server)
        self.assertEqual('ACTIVE', active['status'])
        self.assertEqual(2, active['flavor']['vcpus'])
        mig = self.migration_of(server)
        self.assertEqual('confirmed', mig['status'])
        self.assertNotIn('phases', mig)
        # GET /os-migrations/{id} (nova_moves): when each status began.
        shown = self.admin.get('/os-migrations/%s' % mig['uuid'],
                               expect=200).json()['migration']
        self.assertEqual(
            ['pre-migrating', 'migrating', 'post-migrating', 'finished',
             'confirming', 'confirmed'],
            [p['phase'] for p in shown['phases']])
        times = [p['started_at'] for p in shown['phases']]
        self.assertEqual(sorted(times), times)
        self.admin.get('/os-migrations/999999', expect=404)
        self.assertNotIn(mig['uuid'], self.admin.placement()['allocations'])
        actions = [a['action'] for a in self.admin.actions(server['id'])]
        self.assertEqual(['confirmResize', 'resize', 'create'], actions)
        resize_action = self.admin.actions(server['id'])[1]
        self.assertEqual(
            [('conductor_migrate_server', 'Success'),
             ('compute_prep_resize', 'Success'),
             ('compute_resize_instance', 'Success'),
             ('compute_finish_resize', 'Success')],
            resize_base.events_of(self.admin, server['id'],
                                  resize_action['request_id']))

    def test_resize_and_revert(self):
        small, medium = self.flavor('small'), self.flavor('medium', 2, 1024)
        server = self.boot('r2', small)
        source = server['OS-EXT-SRV-ATTR:host']
        self.resize(server, medium)
        self.wait(server, 'VERIFY_RESIZE')
        resp = self.admin.action(server['id'], {'revertResize': None})
        self.assertEqual(202, resp.status_code, resp.text)
        reverted = self.wait(server, 'ACTIVE')
        self.assertEqual(source, reverted['OS-EXT-SRV-ATTR:host'])
        self.assertEqual(1, reverted['flavor']['vcpus'])
        self.assertEqual('reverted', self.migration_of(server)['status'])
        # A second revert or a confirm now is refused: no longer resized.
        resp = self.admin.action(server['id'], {'revertResize': None})
        self.assertEqual(409, resp.status_code)
        resp = self.admin.action(server['id'], {'confirmResize': None})
        self.assertEqual(409, resp.status_code)

    def test_resize_bad_requests(self):
        small = self.flavor('small')
        server = self.boot('bad', small)
        resp = self.admin.action(server['id'], {'resize': {
            'flavorRef': small['id']}})
        self.assertEqual(400, resp.status_code)
        self.assertIn('When resizing, instances must change flavor!',
                      resp.text)
        resp = self.admin.action(server['id'], {'resize': {
            'flavorRef': 'no-such-flavor'}})
        self.assertEqual(400, resp.status_code)
        self.assertIn('no-such-flavor', resp.text)
        resp = self.admin.action(server['id'], {'resize': {
            'flavorRef': small['id'], 'bogus': 1}})
        self.assertEqual(400, resp.status_code)
        self.assertIn('bogus', resp.text)
        resp = self.admin.action(server['id'], {'resize': {}})
        self.assertEqual(400, resp.status_code)
        self.assertIn('flavorRef', resp.text)
        resp = self.admin.action(server['id'], {'confirmResize': None})
        self.assertEqual(409, resp.status_code)
        # Nothing was recorded or changed by the refused requests.
        self.assertEqual(['create'], [a['action'] for a in
                                      self.admin.actions(server['id'])])
        self.assertEqual([], self.admin.migrations(instance_uuid=server['id']))

    def test_owner_resizes_but_cannot_migrate(self):
        user = self.admin.as_user('carol:proj-c')
        server = self.boot('own', client=user)
        resp = user.action(server['id'], {'migrate': None})
        self.assertEqual(403, resp.status_code)
        self.resize(server, self.flavor('medium', 2, 1024), client=user)
        self.wait(server, 'VERIFY_RESIZE')
        resp = user.action(server['id'], {'confirmResize': None})
        self.assertEqual(204, resp.status_code, resp.text)
        self.wait(server, 'ACTIVE')
        other = self.admin.as_user('dave:proj-d')
        resp = other.action(server['id'], {'resize': {
            'flavorRef': self.flavor('small')['id']}})
        self.assertEqual(404, resp.status_code)

    def test_cold_migrate_without_host(self):
        server = self.boot('m1')
        source = server['OS-EXT-SRV-ATTR:host']
        self.migrate(server, None, version='2.1')
        migrated = self.wait(server, 'VERIFY_RESIZE')
        self.assertEqual(self.other_host(source),
                         migrated['OS-EXT-SRV-ATTR:host'])
        mig = self.migration_of(server)
        self.assertEqual('migration', mig['migration_type'])
        self.assertEqual(mig['old_instance_type_id'],
                         mig['new_instance_type_id'])
        self.confirm(server)

    def test_cold_migrate_to_checked_host(self):
        server = self.boot('m2')
        target = self.other_host(server['OS-EXT-SRV-ATTR:host'])
        self.migrate(server, {'host': target})
        migrated = self.wait(server, 'VERIFY_RESIZE')
        self.assertEqual(target, migrated['OS-EXT-SRV-ATTR:host'])
        self.assertEqual(target, self.migration_of(server)['dest_compute'])
        self.confirm(server)

    def test_cold_migrate_to_forced_host(self):
        server = self.boot('m3')
        target = self.other_host(server['OS-EXT-SRV-ATTR:host'])
        # A disabled host is refused by the scheduler but a forced move
        # bypasses it (Nova spec "Enable cold migration with target host").
        self.disable_host(target)
        self.migrate(server, {'host': target, 'force': True})
        migrated = self.wait(server, 'VERIFY_RESIZE')
        self.assertEqual(target, migrated['OS-EXT-SRV-ATTR:host'])
        self.confirm(server)
        # Without force (or with force null) the scheduler refuses the
        # disabled host.
        source = target
        target = self.other_host(source)
        self.disable_host(target)
        # force null is no force ("Enable cold migration with target
        # host"): the destination is checked.
        resp = self.migrate(server, {'host': target, 'force': None})
        back = self.wait(server, 'ACTIVE')
        self.assertEqual(source, back['OS-EXT-SRV-ATTR:host'])
        event = self.assert_error_event(
            server, resp.headers['x-openstack-request-id'],
            'conductor_migrate_server')
        self.assertIn('NoValidHost', event['traceback'])

    def test_cold_migrate_to_unfit_host(self):
        owner = self.admin.as_user('erin:proj-e', version='2.84')
        big = self.flavor('big', 2, 20000)
        server = self.boot_big('fits', big, client=owner)
        server = self.admin.server(server['id'])
        source = server['OS-EXT-SRV-ATTR:host']
        target = self.other_host(source)
        self.boot_big('filler', big, host=target)
        before = self.admin.placement()['allocations']
        resp = self.migrate(server, {'host': target})
        self.assertEqual(b'', resp.content)
        request_id = resp.headers['x-openstack-request-id']
        back = self.admin.wait_for(
            lambda: (self.admin.actions(server['id'])[0].get('message')
                     == 'Error' and
                     self.admin.server(server['id'], '2.47')), timeout=30,
            what='migrate action in Error')
        back = self.wait(server, 'ACTIVE')
        self.assertEqual(source, back['OS-EXT-SRV-ATTR:host'])
        self.assertIsNone(back['OS-EXT-STS:task_state'])
        self.assertEqual('active', back['OS-EXT-STS:vm_state'])
        mig = self.migration_of(server)
        self.assertEqual('error', mig['status'])
        self.assertEqual(before, self.admin.placement()['allocations'])
        # Admin sees the traceback; the owner (2.51+) sees the event only.
        event = self.assert_error_event(server, request_id,
                                        'conductor_migrate_server')
        self.assertIn('NoValidHost', event['traceback'])
        detail = owner.action_detail(server['id'], request_id)
        events = {e['event']: e for e in detail['events']}
        self.assertEqual('Error', events['conductor_migrate_server']['result'])
        self.assertNotIn('traceback', events['conductor_migrate_server'])

    def test_check_destination_valid_and_invalid(self):
        big = self.flavor('big', 2, 20000)
        server = self.boot_big('chk', big)
        target = self.other_host(server['OS-EXT-SRV-ATTR:host'])
        resp = self.migrate(server, {'host': target, 'check': True},
                            expect=200)
        self.assertEqual({'valid': True, 'reasons': []}, resp.json())
        self.boot_big('filler2', big, host=target)
        resp = self.migrate(server, {'host': target, 'check': True},
                            expect=200)
        verdict = resp.json()
        self.assertFalse(verdict['valid'])
        self.assertTrue(any('MEMORY_MB' in r for r in verdict['reasons']),
                        verdict)
        # Disable the host: the reason names the filter.
        self.disable_host(target)
        verdict = self.migrate(server, {'host': target, 'check': 'true'},
                               expect=200).json()
        self.assertTrue(any('ComputeFilter' in r
                            for r in verdict['reasons']), verdict)
        # A dry run: no action, no migration, no state.
        self.assertEqual(['create'], [a['action'] for a in
                                      self.admin.actions(server['id'])])
        self.assertEqual([], self.admin.migrations(instance_uuid=server['id']))
        self.assertIsNone(self.admin.server(server['id'], '2.47')[
            'OS-EXT-STS:task_state'])

    def test_migrate_bad_requests(self):
        server = self.boot('mbad')
        host = server['OS-EXT-SRV-ATTR:host']
        other = self.other_host(host)
        resp = self.migrate(server, {'force': True}, expect=400)
        self.assertIn('force', resp.text)
        resp = self.migrate(server, {'check': True}, expect=400)
        self.assertIn('check', resp.text)
        resp = self.migrate(server, {'host': other}, version='2.55',
                            expect=400)
        self.assertIn('Additional properties are not allowed', resp.text)
        self.assertIn('host', resp.text)
        resp = self.migrate(server, {'host': 'no-such-host'}, expect=400)
        self.assertIn('no-such-host', resp.text)
        resp = self.migrate(server, {'host': host}, expect=400)
        self.assertIn('same', resp.text)
        resp = self.migrate(server, {'host': other, 'bogus': 1}, expect=400)
        self.assertIn('bogus', resp.text)
        resp = self.migrate(server, {'host': other, 'force': 'maybe'},
                            expect=400)
        self.assertIn('force', resp.text)
        self.assertEqual(['create'], [a['action'] for a in
                                      self.admin.actions(server['id'])])

    def test_concurrent_migrates_of_one_server(self):
        server = self.boot('race')

        def one(_):
            return self.admin.as_user('admin:admin').action(
                server['id'], {'migrate': None}).status_code
        with concurrent.futures.ThreadPoolExecutor(20) as pool:
            codes = list(pool.map(one, range(20)))
        self.assertEqual(1, codes.count(202), codes)
        self.assertEqual(19, codes.count(409), codes)
        self.wait(server, 'VERIFY_RESIZE')
        self.assertEqual(1, len(self.admin.migrations(
            instance_uuid=server['id'])))
        self.assertEqual(['migrate', 'create'], [
            a['action'] for a in self.admin.actions(server['id'])])
        self.confirm(server)

    def test_prep_resize_failure_with_no_alternate_rolls_back(self):
        server = self.boot('noalt')
        source = server['OS-EXT-SRV-ATTR:host']
        target = self.other_host(source)
        self.admin.set_faults(target, ['prep_resize'])
        self.addCleanup(self.admin.set_faults, target, [])
        before = self.admin.placement()['allocations']
        resp = self.migrate(server, None)
        request_id = resp.headers['x-openstack-request-id']
        self.assert_rolled_back(server, source, before)
        events = resize_base.events_of(self.admin, server['id'], request_id)
        self.assertIn(('compute_prep_resize', 'Error'), events)
        self.assertEqual(('conductor_migrate_server', 'Error'), events[-1])

    def test_source_failure_puts_server_back(self):
        server = self.boot('srcfail')
        source = server['OS-EXT-SRV-ATTR:host']
        self.admin.set_faults(source, ['migrate_disk_and_power_off'])
        self.addCleanup(self.admin.set_faults, source, [])
        before = self.admin.placement()['allocations']
        resp = self.migrate(server, None)
        request_id = resp.headers['x-openstack-request-id']
        self.assert_rolled_back(server, source, before)
        self.assert_error_event(server, request_id, 'compute_resize_instance')

    def test_destination_finish_failure_puts_server_back(self):
        small, medium = self.flavor('small'), self.flavor('medium', 2, 1024)
        server = self.boot('dstfail', small)
        source = server['OS-EXT-SRV-ATTR:host']
        target = self.other_host(source)
        self.admin.set_faults(target, ['finish_migration'])
        self.addCleanup(self.admin.set_faults, target, [])
        before = self.admin.placement()['allocations']
        resp = self.resize(server, medium)
        request_id = resp.headers['x-openstack-request-id']
        back = self.assert_rolled_back(server, source, before)
        self.assertEqual(1, back['flavor']['vcpus'])
        self.assert_error_event(server, request_id, 'compute_finish_resize')


class AutoConfirmTest(resize_base.ResizeMixinTest, base.StackTestCase):
    EXTRA_CONF = {'DEFAULT': {'resize_confirm_window': 2}}

    def test_resize_is_confirmed_automatically(self):
        server = self.boot('auto')
        self.resize(server, self.flavor('medium', 2, 1024))
        # Straight to ACTIVE: the source compute confirms after 2 s.
        active = self.admin.wait_for_status(server['id'], 'ACTIVE',
                                            timeout=60)
        self.assertEqual(2, active['flavor']['vcpus'])
        self.admin.wait_for(lambda: self.migration_status(server) ==
                            'confirmed', timeout=30, what='confirmed')
