"""Where a cold migration lands when a destination fails it
(reschedule to the scheduler's alternates) and when an admin forces a
host that cannot take the allocation as it is."""
from tests.functional import base
from tests.functional import resize_base


class RescheduleTest(resize_base.ResizeMixinTest, base.StackTestCase):
    COMPUTES = 3

    def test_prep_resize_failure_reschedules_to_alternate(self):
        server = self.boot('resched', host='compute1')
        # compute3 has less free RAM, so the scheduler picks compute2
        # first and keeps compute3 as the alternate.
        filler = self.boot('filler', self.flavor('mid', 1, 4096),
                           host='compute3')
        self.admin.set_faults('compute2', ['prep_resize'])
        self.addCleanup(self.admin.set_faults, 'compute2', [])
        resp = self.migrate(server, None)
        request_id = resp.headers['x-openstack-request-id']
        moved = self.wait(server, 'VERIFY_RESIZE')
        self.assertEqual('compute3', moved['OS-EXT-SRV-ATTR:host'])
        detail = self.admin.action_detail(server['id'], request_id)
        prep = [(e['host'], e['result']) for e in detail['events']
                if e['event'] == 'compute_prep_resize']
        self.assertEqual([('compute2', 'Error'), ('compute3', 'Success')],
                         prep)
        conductor = [e['result'] for e in detail['events']
                     if e['event'] == 'conductor_migrate_server']
        self.assertEqual(['Success', 'Success'], conductor)
        self.confirm(server)
        self.admin.delete('/servers/%s' % filler['id'], expect=204)

    def test_reschedule_exhausted_rolls_back(self):
        server = self.boot('exhaust', host='compute1')
        for host in ('compute2', 'compute3'):
            self.admin.set_faults(host, ['prep_resize'])
            self.addCleanup(self.admin.set_faults, host, [])
        before = self.admin.placement()['allocations']
        resp = self.migrate(server, None)
        request_id = resp.headers['x-openstack-request-id']
        self.assert_rolled_back(server, 'compute1', before)
        detail = self.admin.action_detail(server['id'], request_id)
        conductor = [e for e in detail['events']
                     if e['event'] == 'conductor_migrate_server']
        self.assertEqual(['Success', 'Success', 'Error'],
                         [e['result'] for e in conductor])
        self.assertIn('MaxRetriesExceeded', conductor[-1]['traceback'])


class ForcedNestedTest(resize_base.ResizeMixinTest, base.StackTestCase):
    """Nova spec "Remove force flag from live-migrate and evacuate" on
    cold migrate: a forced move can only copy an allocation held by one
    root provider; compute1 serves DISK_GB from a nested
    child provider."""
    COMPUTES = [{'name': 'compute1', 'compute': {'disk_provider': 'nested'}},
                {'name': 'compute2'}]

    def test_forced_migrate_of_nested_allocation_fails_cleanly(self):
        server = self.boot('nested', host='compute1')
        before = self.admin.placement()['allocations']
        resp = self.migrate(server, {'host': 'compute2', 'force': True})
        request_id = resp.headers['x-openstack-request-id']
        event = self.assert_error_event(server, request_id,
                                        'conductor_migrate_server')
        self.assertIn('single root', event['traceback'])
        back = self.wait(server, 'ACTIVE')
        self.assertEqual('compute1', back['OS-EXT-SRV-ATTR:host'])
        self.assertEqual('error', self.migration_status(server))
        self.assertEqual(before, self.admin.placement()['allocations'])
        # Through the scheduler the same move works.
        self.migrate(server, {'host': 'compute2'})
        moved = self.wait(server, 'VERIFY_RESIZE')
        self.assertEqual('compute2', moved['OS-EXT-SRV-ATTR:host'])
        self.confirm(server)
