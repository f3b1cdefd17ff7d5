"""os-aggregates through the WSGI app on a real (SQLite) database:
Nova's answers, the zone rules, and the zone an aggregate gives its
hosts in os-availability-zone, os-services and the scheduler's view."""
import testtools

from nova_moves.db import api as db_api
from tests.unit import fixtures as nm_fixtures

ADMIN = {'X-Auth-Token': 'admin:admin'}
ALICE = {'X-Auth-Token': 'alice:p1'}
AGGS = '/v2.1/os-aggregates'


def at(version, headers=ADMIN):
    return dict(headers, **{'OpenStack-API-Version': 'compute %s' % version})


class AggregatesTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.client = nm_fixtures.app_client(self, 'h1', 'h2')

    def create(self, name='a1', zone=None, expect=200, headers=ADMIN):
        body = {'name': name}
        if zone is not None:
            body['availability_zone'] = zone
        response = self.client.post(AGGS, json={'aggregate': body},
                                    headers=headers)
        self.assertEqual(expect, response.status_code, response.get_json())
        return (response.get_json() or {}).get('aggregate')

    def action(self, agg_id, body, expect=200, headers=ADMIN):
        response = self.client.post('%s/%s/action' % (AGGS, agg_id),
                                    json=body, headers=headers)
        self.assertEqual(expect, response.status_code, response.get_json())
        return (response.get_json() or {}).get('aggregate')

    def test_create_show_list_update_delete(self):
        agg = self.create('a1', 'z1')
        self.assertEqual({'id', 'name', 'availability_zone', 'created_at',
                          'updated_at', 'deleted', 'deleted_at'}, set(agg))
        self.assertEqual(('a1', 'z1', False),
                         (agg['name'], agg['availability_zone'],
                          agg['deleted']))
        self.create('a1', expect=409)
        shown = self.client.get('%s/%s' % (AGGS, agg['id']),
                                headers=at('2.41')).get_json()['aggregate']
        self.assertEqual([], shown['hosts'])
        self.assertEqual({'availability_zone': 'z1'}, shown['metadata'])
        self.assertEqual(36, len(shown['uuid']))
        listed = self.client.get(AGGS, headers=ADMIN).get_json()
        self.assertEqual(['a1'], [a['name'] for a in listed['aggregates']])
        self.assertNotIn('uuid', listed['aggregates'][0])
        response = self.client.put('%s/%s' % (AGGS, agg['id']), headers=ADMIN,
                                   json={'aggregate': {'name': 'a2',
                                                       'availability_zone':
                                                       'z2'}})
        self.assertEqual(200, response.status_code, response.get_json())
        self.assertEqual(('a2', 'z2'), (
            response.get_json()['aggregate']['name'],
            response.get_json()['aggregate']['availability_zone']))
        other = self.create('b')
        response = self.client.put('%s/%s' % (AGGS, other['id']),
                                   headers=ADMIN,
                                   json={'aggregate': {'name': 'a2'}})
        self.assertEqual(409, response.status_code)
        self.assertEqual(200, self.client.delete(
            '%s/%s' % (AGGS, agg['id']), headers=ADMIN).status_code)
        self.assertEqual(404, self.client.get(
            '%s/%s' % (AGGS, agg['id']), headers=ADMIN).status_code)
        self.assertEqual(404, self.client.delete(
            '%s/%s' % (AGGS, agg['id']), headers=ADMIN).status_code)

    def test_hosts(self):
        agg = self.create('a1', 'z1')
        self.action(agg['id'], {'add_host': {'host': 'nohost'}}, 404)
        added = self.action(agg['id'], {'add_host': {'host': 'h1'}})
        self.assertEqual(['h1'], added['hosts'])
        self.action(agg['id'], {'add_host': {'host': 'h1'}}, 409)
        # Not deletable while it has hosts (Nova: 400).
        self.assertEqual(400, self.client.delete(
            '%s/%s' % (AGGS, agg['id']), headers=ADMIN).status_code)
        # h1 cannot be in another zone, but in a zoneless aggregate yes.
        other = self.create('a2', 'z2')
        self.action(other['id'], {'add_host': {'host': 'h1'}}, 409)
        plain = self.create('a3')
        self.action(plain['id'], {'add_host': {'host': 'h1'}})
        self.action(plain['id'], {'set_metadata': {'metadata': {
            'availability_zone': 'z2'}}}, 400)
        self.action(plain['id'], {'set_metadata': {'metadata': {
            'availability_zone': 'z1', 'ssd': 'true'}}})
        self.action(agg['id'], {'remove_host': {'host': 'h2'}}, 404)
        removed = self.action(agg['id'], {'remove_host': {'host': 'h1'}})
        self.assertEqual([], removed['hosts'])
        self.assertEqual(200, self.client.delete(
            '%s/%s' % (AGGS, agg['id']), headers=ADMIN).status_code)

    def test_set_metadata(self):
        agg = self.create('a1')
        got = self.action(agg['id'], {'set_metadata': {'metadata': {
            'k1': 'v1', 'k2': 'v2'}}})
        self.assertEqual({'k1': 'v1', 'k2': 'v2'}, got['metadata'])
        got = self.action(agg['id'], {'set_metadata': {'metadata': {
            'k1': None, 'k2': 'v3', 'availability_zone': 'z9'}}})
        self.assertEqual({'k2': 'v3', 'availability_zone': 'z9'},
                         got['metadata'])
        self.assertEqual('z9', got['availability_zone'])
        # An empty zone, and the internal zone, are refused (Nova).
        for zone in (None, 'internal'):
            self.action(agg['id'], {'set_metadata': {'metadata': {
                'availability_zone': zone}}}, 400)

    def test_zone_of_hosts(self):
        agg = self.create('a1', 'z1')
        self.action(agg['id'], {'add_host': {'host': 'h1'}})
        detail = self.client.get('/v2.1/os-availability-zone/detail',
                                 headers=ADMIN).get_json()
        zones = {z['zoneName']: sorted(z['hosts'] or {})
                 for z in detail['availabilityZoneInfo']}
        self.assertEqual(['h1'], zones['z1'])
        self.assertEqual(['h2'], zones['nova'])
        services = self.client.get('/v2.1/os-services', headers=ADMIN)
        by_host = {s['host']: s['zone']
                   for s in services.get_json()['services']
                   if s['binary'] == 'nova-compute'}
        self.assertEqual({'h1': 'z1', 'h2': 'nova'}, by_host)
        # What the scheduler's AvailabilityZoneFilter reads.
        self.assertEqual('z1', db_api.service_get_all(
            binary='nova-moves-compute', hosts=['h1'])[0][
                'availability_zone'])

    def test_policy_and_hostile_input(self):
        self.create('a1', headers=ALICE, expect=403)
        agg = self.create('a1')
        for method, url, body in (
                ('get', AGGS, None),
                ('get', '%s/%s' % (AGGS, agg['id']), None),
                ('put', '%s/%s' % (AGGS, agg['id']),
                 {'aggregate': {'name': 'x'}}),
                ('delete', '%s/%s' % (AGGS, agg['id']), None),
                ('post', '%s/%s/action' % (AGGS, agg['id']),
                 {'add_host': {'host': 'h1'}})):
            response = getattr(self.client, method)(url, json=body,
                                                    headers=ALICE)
            self.assertEqual(403, response.status_code, (method, url))
        for body in ({}, {'aggregate': {'name': ''}},
                     {'aggregate': {'name': 'x' * 256}},
                     {'aggregate': {'name': 'x', 'availability_zone': 'a:b'}},
                     {'aggregate': {'name': 'x', 'bogus': 1}}, [], 'x'):
            response = self.client.post(AGGS, json=body, headers=ADMIN)
            self.assertEqual(400, response.status_code, body)
        for agg_id, code in (('abc', 400), ('99999999999999999999', 404),
                             ('-1', 404), ('1-', 400), ('--1', 400),
                             ('1.5', 400), ('424242', 404),
                             ('%C2%B2', 400), ('%D9%A3', 400),
                             ('0x10', 400), ('9' * 50, 400)):
            self.assertEqual(code, self.client.get(
                '%s/%s' % (AGGS, agg_id), headers=ADMIN).status_code)
        for body in ({}, {'bogus': {}}, {'add_host': {}},
                     {'add_host': {'host': 'h1'},
                      'remove_host': {'host': 'h1'}},
                     {'add_host': {'host': 'a b'}},
                     {'set_metadata': {'metadata': {'k': 1}}},
                     {'set_metadata': {'metadata': {'': 'v'}}},
                     {'set_metadata': {'metadata': {'k': 'v' * 256}}},
                     {'set_metadata': {}}, None):
            self.action(agg['id'], body, 400)
        self.assertEqual(400, self.client.put(
            '%s/%s' % (AGGS, agg['id']), headers=ADMIN,
            json={'aggregate': {}}).status_code)

    def test_zone_of_hosts_with_servers_does_not_change(self):
        agg = self.create('a1', 'z1')
        self.action(agg['id'], {'add_host': {'host': 'h1'}})
        db_api.instance_create({
            'display_name': 'vm', 'project_id': 'p1', 'user_id': 'u',
            'host': 'h1', 'node': 'h1', 'vm_state': 'active',
            'flavor': '{}'})
        self.action(agg['id'], {'set_metadata': {'metadata': {
            'availability_zone': 'z2'}}}, 400)
        response = self.client.put('%s/%s' % (AGGS, agg['id']), headers=ADMIN,
                                   json={'aggregate': {
                                       'availability_zone': 'z2'}})
        self.assertEqual(400, response.status_code)
        # The same zone, and other keys, are fine.
        self.action(agg['id'], {'set_metadata': {'metadata': {
            'availability_zone': 'z1', 'k': 'v'}}})
        self.assertEqual('z1', self.client.get(
            '%s/%s' % (AGGS, agg['id']),
            headers=ADMIN).get_json()['aggregate']['availability_zone'])
