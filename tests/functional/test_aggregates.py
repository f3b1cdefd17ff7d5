"""os-aggregates on a real stack (3 fake computes, real processes and
database): an aggregate's zone is where the scheduler puts a server
created in that zone, and what os-availability-zone and os-services
show for its hosts."""
from tests.functional import base


class AggregatesTest(base.StackTestCase):

    COMPUTES = 3

    def test_zone_of_an_aggregate_places_servers(self):
        admin = self.admin
        hosts = sorted(s['host'] for s in admin.services()
                       if s['binary'] == 'nova-compute')
        self.assertEqual(3, len(hosts))
        chosen = hosts[1]
        agg = admin.post('/os-aggregates', {'aggregate': {
            'name': 'rack-b', 'availability_zone': 'zone-b'}},
            version='2.41', expect=200).json()['aggregate']
        self.assertEqual('zone-b', agg['availability_zone'])
        admin.post('/os-aggregates', {'aggregate': {'name': 'rack-b'}},
                   expect=409)
        admin.post('/os-aggregates/%s/action' % agg['id'],
                   {'add_host': {'host': chosen}}, expect=200)
        zones = admin.get('/os-availability-zone/detail',
                          expect=200).json()['availabilityZoneInfo']
        by_zone = {z['zoneName']: sorted(z['hosts'] or {}) for z in zones}
        self.assertEqual([chosen], by_zone['zone-b'])
        self.assertNotIn(chosen, by_zone['nova'])
        self.assertEqual({chosen: 'zone-b'}, {
            s['host']: s['zone'] for s in admin.services()
            if s['zone'] == 'zone-b'})
        flavor = self.flavor('small')
        placed = []
        for i in range(2):
            server = admin.post('/servers', {'server': {
                'name': 'in-b-%d' % i, 'flavorRef': flavor['id'],
                'imageRef': 'fake', 'networks': 'none',
                'availability_zone': 'zone-b'}}, expect=202).json()['server']
            self.addCleanup(self._delete, server['id'])
            shown = admin.wait_for_status(server['id'], ('ACTIVE', 'ERROR'))
            self.assertEqual('ACTIVE', shown['status'], shown)
            shown = admin.server(server['id'], version='2.47')
            placed.append((shown['OS-EXT-SRV-ATTR:host'],
                           shown['OS-EXT-AZ:availability_zone']))
        self.assertEqual([(chosen, 'zone-b')] * 2, placed)
        # Servers on its host: the zone cannot change, nor can the
        # aggregate go while it has hosts (Nova's 400s).
        admin.post('/os-aggregates/%s/action' % agg['id'],
                   {'set_metadata': {'metadata': {
                       'availability_zone': 'zone-c'}}}, expect=400)
        admin.delete('/os-aggregates/%s' % agg['id'], expect=400)
        self.assert_invariants()

    def _delete(self, server_id):
        self.admin.request('DELETE', '/servers/%s' % server_id)
        self.admin.wait_for(lambda: self.admin.get(
            '/servers/%s' % server_id).status_code == 404, timeout=30,
            what='%s deleted' % server_id)
