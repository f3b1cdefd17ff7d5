"""GET /limits, /os-availability-zone[/detail] and
/os-hypervisors/statistics through the WSGI app on a real (SQLite)
database: Nova's keys per microversion, and who may see what."""
import testtools
from tests.unit import fixtures as nm_fixtures


ADMIN = {'X-Auth-Token': 'admin:admin'}
ALICE = {'X-Auth-Token': 'alice:p1'}


def at(version, headers):
    return dict(headers, **{'OpenStack-API-Version': 'compute %s' % version})


class LimitsAndZonesTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.client = nm_fixtures.app_client(self, 'h1')

    def absolute(self, version, headers=ALICE, query=''):
        response = self.client.get('/v2.1/limits' + query,
                                   headers=at(version, headers))
        self.assertEqual(200, response.status_code, response.get_json())
        self.assertEqual([], response.get_json()['limits']['rate'])
        return response.get_json()['limits']['absolute']

    def test_limit_names_follow_the_microversion(self):
        old = self.absolute('2.1')
        self.assertEqual(20, old['maxTotalCores'])
        self.assertEqual(0, old['totalInstancesUsed'])
        self.assertIn('maxTotalFloatingIps', old)
        self.assertIn('totalSecurityGroupsUsed', old)
        self.assertIn('maxImageMeta', old)
        self.assertIn('maxPersonality', old)
        at_236 = self.absolute('2.36')
        self.assertNotIn('maxTotalFloatingIps', at_236)
        self.assertNotIn('totalSecurityGroupsUsed', at_236)
        self.assertIn('maxImageMeta', at_236)
        self.assertNotIn('maxImageMeta', self.absolute('2.39'))
        latest = self.absolute('2.95')
        self.assertNotIn('maxPersonality', latest)
        self.assertEqual(
            {'maxTotalRAMSize', 'maxTotalInstances', 'maxTotalCores',
             'maxTotalKeypairs', 'maxServerMeta', 'maxServerGroups',
             'maxServerGroupMembers', 'totalRAMUsed', 'totalInstancesUsed',
             'totalCoresUsed', 'totalServerGroupsUsed'}, set(latest))

    def test_another_projects_limits_are_the_admins(self):
        self.client.put('/v2.1/os-quota-sets/p2', headers=ADMIN,
                        json={'quota_set': {'cores': 7}})
        self.assertEqual(7, self.absolute('2.95', ADMIN,
                                          '?tenant_id=p2')['maxTotalCores'])
        response = self.client.get('/v2.1/limits?tenant_id=p2',
                                   headers=ALICE)
        self.assertEqual(403, response.status_code)
        self.assertIn('os_compute_api:limits:other_project',
                      response.get_json()['forbidden']['message'])
        # Her own project by name is hers to see.
        self.assertEqual(20, self.absolute('2.95', ALICE,
                                           '?tenant_id=p1')['maxTotalCores'])

    def test_zones(self):
        listed = self.client.get('/v2.1/os-availability-zone',
                                 headers=ALICE).get_json()
        self.assertEqual([{'zoneName': 'nova', 'zoneState': {
            'available': True}, 'hosts': None}],
            listed['availabilityZoneInfo'])
        self.assertEqual(403, self.client.get(
            '/v2.1/os-availability-zone/detail',
            headers=ALICE).status_code)
        detail = self.client.get('/v2.1/os-availability-zone/detail',
                                 headers=ADMIN).get_json()
        zone = detail['availabilityZoneInfo'][0]
        self.assertEqual('nova', zone['zoneName'])
        self.assertEqual({'available', 'active', 'updated_at'},
                         set(zone['hosts']['h1']['nova-compute']))
        self.assertTrue(zone['hosts']['h1']['nova-compute']['active'])

    def test_hypervisor_statistics_until_287(self):
        response = self.client.get('/v2.1/os-hypervisors/statistics',
                                   headers=at('2.87', ADMIN))
        self.assertEqual(200, response.status_code, response.get_json())
        stats = response.get_json()['hypervisor_statistics']
        self.assertEqual(1, stats['count'])
        self.assertEqual(0, stats['running_vms'])
        self.assertEqual(404, self.client.get(
            '/v2.1/os-hypervisors/statistics',
            headers=at('2.88', ADMIN)).status_code)
        self.assertEqual(403, self.client.get(
            '/v2.1/os-hypervisors/statistics',
            headers=at('2.87', ALICE)).status_code)
