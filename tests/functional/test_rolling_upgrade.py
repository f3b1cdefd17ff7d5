"""Rolling upgrade: services pinned with [upgrade_levels] to the older
RPC version work with the new ones, moving a server both ways.

- OldConductorApiTest: compute2 may only speak conductor 1.0 (as if the
  conductors were not upgraded yet): its guarded steps fall back to 1.0
  calls (conductor/compat.py) while compute1 uses the 1.1 ones.
- OldComputeApiTest: every service sends compute and conductor messages
  capped at 1.0 (as if computes were not upgraded yet): no 1.1 message is
  sent (live_migration_status, migrate_server's failed_host).
"""
from tests.functional import base


class _BothWays:

    def _migrate(self, server, host):
        resp = self.admin.action(server['id'], {'migrate': {'host': host}},
                                 version='2.56')
        self.assertEqual(202, resp.status_code, resp.text)
        self.admin.wait_for_status(server['id'], ('VERIFY_RESIZE',),
                                   timeout=90)
        resp = self.admin.action(server['id'], {'confirmResize': None})
        self.assertEqual(204, resp.status_code, resp.text)
        done = self.admin.wait_for_status(server['id'], ('ACTIVE',),
                                          timeout=90)
        self.assertEqual(host, done['OS-EXT-SRV-ATTR:host'])

    def _live(self, server, host):
        resp = self.admin.action(
            server['id'], {'os-migrateLive': {'host': host,
                                              'block_migration': 'auto'}},
            version='2.30')
        self.assertEqual(202, resp.status_code, resp.text)
        self.admin.wait_for(
            lambda: self.admin.server(server['id'], version='2.47')[
                'OS-EXT-SRV-ATTR:host'] == host and self.admin.server(
                    server['id'], version='2.47')[
                        'OS-EXT-STS:task_state'] is None,
            timeout=90, what='live migration to %s' % host)

    def _revert(self, server):
        resp = self.admin.action(
            server['id'], {'resize': {'flavorRef': self.flavor(
                'big', vcpus=2)['id']}})
        self.assertEqual(202, resp.status_code, resp.text)
        self.admin.wait_for_status(server['id'], ('VERIFY_RESIZE',),
                                   timeout=90)
        resp = self.admin.action(server['id'], {'revertResize': None})
        self.assertEqual(202, resp.status_code, resp.text)
        self.admin.wait_for_status(server['id'], ('ACTIVE',), timeout=90)

    def test_cold_migrate_both_ways(self):
        server = self.boot('both-ways', host='compute1')
        self._migrate(server, 'compute2')
        self._migrate(server, 'compute1')

    def test_live_migrate_both_ways_and_revert(self):
        server = self.boot('live-both-ways', host='compute2')
        self._live(server, 'compute1')
        self._live(server, 'compute2')
        self._revert(server)


class OldConductorApiTest(_BothWays, base.StackTestCase):
    COMPUTES = 1

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # compute2 talks to the conductors as if they were still 1.0.
        overlay = cls.stack._overlay('compute2', {
            'DEFAULT': {'host': 'compute2'},
            'upgrade_levels': {'conductor': '1.0'}})
        cls.stack.compute_specs.append({'name': 'compute2'})
        cls.stack.add_process('compute2', 'nova-moves-compute', overlay)
        cls.admin.wait_for(
            lambda: any(s['host'] == 'compute2' and s['state'] == 'up'
                        for s in cls.admin.services('nova-moves-compute')),
            timeout=60, what='compute2 up')


class OldComputeApiTest(_BothWays, base.StackTestCase):
    COMPUTES = 2
    EXTRA_CONF = {'upgrade_levels': {'compute': '1.0', 'conductor': '1.0',
                                     'scheduler': '1.0'}}
