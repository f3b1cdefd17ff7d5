"""POST /os-host-drains with "check": the plan (move kind, the
scheduler's destination with server groups respected, estimates from
past moves, ETA), changing nothing; a real drain's report sets its
estimate against what happened."""
from tests.functional import base


class DrainPlanTest(base.StackTestCase):

    COMPUTES = 3

    def _service(self, host):
        return [s for s in self.admin.services(version='2.53')
                if s['host'] == host and 'compute' in s['binary']][0]

    def _live(self, server_id, host):
        self.admin.action(server_id, {'os-migrateLive': {
            'host': host, 'block_migration': 'auto'}}, version='2.34',
            expect=202)
        self.admin.wait_for(lambda: self.admin.server(
            server_id, version='2.47')['OS-EXT-SRV-ATTR:host'] == host and
            self.admin.server(server_id)['status'] == 'ACTIVE',
            what='%s on %s' % (server_id, host))

    def test_plan_then_drain(self):
        group = self.admin.post('/os-server-groups', {'server_group': {
            'name': 'plan', 'policy': 'anti-affinity'}}, version='2.64',
            expect=200).json()['server_group']
        servers = []
        for host in ('compute1', 'compute2'):
            body = self.admin.post('/servers', {
                'server': {'name': 'p-%s' % host,
                           'flavorRef': self.flavor('small')['id'],
                           'imageRef': 'fake', 'networks': 'none',
                           'availability_zone': 'nova:%s' % host},
                'os:scheduler_hints': {'group': group['id']}},
                expect=202).json()['server']
            servers.append(self.admin.wait_for_status(body['id'], 'ACTIVE'))
        spare = self.boot('spare', host='compute1')
        # History: three live migrations of the spare server.
        for host in ('compute3', 'compute1', 'compute3', 'compute1'):
            self._live(spare['id'], host)
        self.addCleanup(self.admin.put, '/os-services/%s' % self._service(
            'compute1')['id'], {'status': 'enabled'}, version='2.53')
        plan = self.admin.post('/os-host-drains', {
            'host': 'compute1', 'mode': 'live', 'check': True},
            expect=200).json()['host_drain_plan']
        self.assertEqual(2, plan['movable'])
        self.assertEqual(2, plan['concurrency'])
        # One live migration out of a host at a time (the default
        # max_concurrent_live_migrations): the ETA's transfers queue.
        self.assertEqual(1, plan['live_concurrency'])
        by_id = {s['id']: s for s in plan['servers']}
        member = by_id[servers[0]['id']]
        self.assertEqual('live', member['kind'])
        # Anti-affine with the member on compute2: only compute3 is left.
        self.assertEqual('compute3', member['destination'])
        basis = by_id[spare['id']]['estimate_basis']
        self.assertGreaterEqual(basis['samples'], 3)
        self.assertTrue(basis['p50'])
        self.assertGreater(plan['eta_seconds'], 0)
        # Two moves one after the other: at least two transfers of the
        # history's p50, and not the old N x (whole move + a pass).
        self.assertLess(plan['eta_seconds'],
                        2 * by_id[spare['id']]['estimate_seconds'] + 1.0)
        # Nothing changed: no drain, the host still enabled.
        self.assertEqual([], self.admin.get('/os-host-drains', expect=200)
                         .json()['host_drains'])
        self.assertEqual('enabled', self._service('compute1')['status'])
        # The real drain carries the estimate and, once over, the error.
        drain = self.admin.post('/os-host-drains', {
            'host': 'compute1', 'mode': 'live'}, expect=202).json()[
                'host_drain']
        self.assertEqual(plan['movable'], drain['estimate']['movable'])
        done = self.admin.wait_for(lambda: (lambda d: d if d['status'] ==
                                            'completed' else None)(
            self.admin.get('/os-host-drains/%s' % drain['id'],
                           expect=200).json()['host_drain']),
            timeout=120, what='drain completed')
        self.assertEqual(2, done['counts']['done'])
        self.assertGreater(done['estimate']['actual_seconds'], 0)
        self.assertIn('error_percent', done['estimate'])
        self.assertEqual('compute3', self.admin.server(
            servers[0]['id'], version='2.47')['OS-EXT-SRV-ATTR:host'])
        print('drain plan: eta %.1f s, actual %.1f s (%+.0f%%)' % (
            done['estimate']['eta_seconds'],
            done['estimate']['actual_seconds'],
            done['estimate']['error_percent']))
