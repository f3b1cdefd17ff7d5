"""A drain waits for a host that returns: its compute is killed during
the drain (a restart, a blink) and started again; the servers not moved
yet stay pending with a reason saying they wait for the host (the
drain's report shows it), and the drain completes once the host is back
instead of failing them at once ("host is down")."""
from tests.functional import base


class DrainWaitsForHostTest(base.StackTestCase):
    COMPUTES = 3
    EXTRA_CONF = {
        'DEFAULT': {'stuck_move_timeout': 20},
        'conductor': {'queue_poll_interval': '0.5',
                      'max_outbound_migrations_per_host': 1},
        'compute': {'operation_seconds': 'live_migration:1.5'}}

    def _drain(self, drain_id):
        return self.admin.get('/os-host-drains/%s' % drain_id,
                              expect=200).json()['host_drain']

    def _service(self, host):
        return [s for s in self.admin.services()
                if s['host'] == host and
                s['binary'] == 'nova-compute'][0]

    def test_servers_wait_for_a_host_that_blinks(self):
        flavor = self.flavor('blink', ram=256)
        ids = [self.admin.boot('blink%d' % i, flavor['id'], host='compute2',
                               wait=False)['id'] for i in range(6)]
        for server_id in ids:
            self.admin.wait_for_status(server_id, 'ACTIVE', timeout=120)
        drain_id = self.admin.post(
            '/os-host-drains', {'host': 'compute2'},
            expect=202).json()['host_drain']['id']
        self.admin.wait_for(
            lambda: self._drain(drain_id)['counts'].get('done', 0) >= 1,
            timeout=60, interval=0.3, what='a first server moved')
        self.stack.kill('compute2')
        self.admin.wait_for(
            lambda: self._service('compute2')['state'] == 'down',
            timeout=40, interval=0.5, what='compute2 down')

        def waiting():
            servers = self._drain(drain_id)['servers']
            return [s for s in servers if s['state'] == 'pending' and
                    (s['reason'] or '').startswith('waiting: host compute2')]
        shown = self.admin.wait_for(waiting, timeout=30, interval=0.5,
                                    what='servers waiting for compute2')
        self.assertIn('is down', shown[0]['reason'])
        self.assertEqual(0, self._drain(drain_id)['counts']['failed'])
        self.stack.restart('compute2')
        self.stack.wait_until_ready(60)
        self.admin.wait_for(
            lambda: self._drain(drain_id)['status'] == 'completed',
            timeout=180, interval=0.5, what='drain completed')
        drain = self._drain(drain_id)
        self.assertEqual(len(ids), drain['counts']['done'], drain['servers'])
        for server_id in ids:
            server = self.admin.server(server_id, version='2.47')
            self.assertNotEqual('compute2', server['OS-EXT-SRV-ATTR:host'])
        # The host stays disabled after a drain; give it back.
        self.admin.put('/os-services/%s' % self._service('compute2')['id'],
                       {'status': 'enabled'}, version='2.53', expect=200)
