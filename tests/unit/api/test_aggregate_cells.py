"""os-aggregates and availability zones across cells
(api/aggregate_cells.py, db/aggregate_mirrors.py, api/boot_cells.py
zone_cells) on SQLite: an API database, cell1 (the API's own, host h1),
cell2 (host h2) and cell0. A cell2 host joins an aggregate through its
host mapping; cell2's own zone logic reads the mirror the API writes
there; a boot into a zone goes to a cell that has it; a cell that
cannot be written is a 503 that changes nothing. End to end:
tests/functional/test_cells_aggregates.py."""
import os
from unittest import mock

import testtools

from nova_moves.api import aggregate_cells
from nova_moves.api import cell_routing
from nova_moves.db import aggregate_mirrors
from nova_moves.db import api as db_api
from nova_moves.db import mappings
from nova_moves.db import migration
from nova_moves import states
from tests.unit.api import test_cell_routing
from tests.unit import fixtures as nm_fixtures

ADMIN = test_cell_routing.ADMIN
OWNER = test_cell_routing.OWNER
AGGS = '/v2.1/os-aggregates'


class AggregateCellsTest(test_cell_routing._CellsBase):

    def setUp(self):
        super().setUp()
        mappings.host_mapping_create('h1', self.cell1['id'])
        mappings.host_mapping_create('h2', self.cell2['id'])

    def create(self, name='a1', zone=None):
        body = {'name': name}
        if zone:
            body['availability_zone'] = zone
        response = self.client.post(AGGS, headers=ADMIN,
                                    json={'aggregate': body})
        self.assertEqual(200, response.status_code, response.get_json())
        return response.get_json()['aggregate']

    def action(self, agg_id, body, expect=200):
        response = self.client.post('%s/%s/action' % (AGGS, agg_id),
                                    headers=ADMIN, json=body)
        self.assertEqual(expect, response.status_code, response.get_json())
        return response.get_json()

    def mirrors(self, mapping):
        with self.target(mapping):
            return [(a['uuid'], a['name'], a['hosts'], a['metadata'])
                    for a in db_api.aggregate_get_all()]

    def zones(self):
        services = self.client.get('/v2.1/os-services', headers=ADMIN)
        return {s['host']: s['zone'] for s in services.get_json()['services']
                if s['binary'] == 'nova-compute'}

    def test_a_cell2_host_joins_and_leaves(self):
        agg = self.create('a1', 'z2')
        self.action(agg['id'], {'add_host': {'host': 'nohost'}}, 404)
        added = self.action(agg['id'], {'add_host': {'host': 'h2'}})
        self.assertEqual(['h2'], added['aggregate']['hosts'])
        self.action(agg['id'], {'add_host': {'host': 'h2'}}, 409)
        shown = self.client.get('%s/%s' % (AGGS, agg['id']), headers=ADMIN,
                                ).get_json()['aggregate']
        self.assertEqual(['h2'], shown['hosts'])
        uuid = db_api.aggregate_get(agg['id'])['uuid']
        self.assertEqual([(uuid, 'a1', ['h2'], {'availability_zone': 'z2'})],
                         self.mirrors(self.cell2))
        # cell2's own zone logic: its services' zone, the zones listed.
        self.assertEqual({'h1': 'nova', 'h2': 'z2'}, self.zones())
        with self.target(self.cell2):
            self.assertEqual('z2', db_api.service_get_by_host_and_binary(
                'h2', 'nova-moves-compute')['availability_zone'])
        zones = self.client.get('/v2.1/os-availability-zone/detail',
                                headers=ADMIN).get_json()
        self.assertEqual({'h2'}, set(next(
            z for z in zones['availabilityZoneInfo']
            if z['zoneName'] == 'z2')['hosts']))
        # A home host in the same aggregate: no mirror change in cell2.
        self.action(agg['id'], {'add_host': {'host': 'h1'}})
        self.assertEqual(['h2'], self.mirrors(self.cell2)[0][2])
        # Name and metadata follow.
        response = self.client.put('%s/%s' % (AGGS, agg['id']),
                                   headers=ADMIN,
                                   json={'aggregate': {'name': 'a2'}})
        self.assertEqual(200, response.status_code)
        self.action(agg['id'], {'set_metadata': {'metadata': {
            'ssd': 'true', 'availability_zone': 'z3'}}})
        self.assertEqual([(uuid, 'a2', ['h2'], {
            'availability_zone': 'z3', 'ssd': 'true'})],
            self.mirrors(self.cell2))
        self.action(agg['id'], {'remove_host': {'host': 'h2'}})
        self.action(agg['id'], {'remove_host': {'host': 'h2'}}, 404)
        self.assertEqual([], self.mirrors(self.cell2))
        self.assertEqual({'h1': 'z3', 'h2': 'nova'}, self.zones())

    def test_zone_conflict_across_cells_changes_nothing(self):
        first = self.create('a1', 'z1')
        self.action(first['id'], {'add_host': {'host': 'h2'}})
        other = self.create('b1', 'z9')
        body = self.action(other['id'], {'add_host': {'host': 'h2'}}, 409)
        self.assertIn('already in availability zone',
                      body['conflictingRequest']['message'])
        self.assertEqual(['a1'], [m[1] for m in self.mirrors(self.cell2)])

    def test_servers_on_a_cell2_host_keep_its_zone(self):
        agg = self.create('a1', 'z1')
        self.action(agg['id'], {'add_host': {'host': 'h2'}})
        with self.target(self.cell2):
            db_api.instance_create({
                'display_name': 'vm', 'project_id': 'p1', 'user_id': 'u',
                'host': 'h2', 'node': 'h2', 'vm_state': states.ACTIVE,
                'flavor': '{}'})
        body = self.action(agg['id'], {'set_metadata': {'metadata': {
            'availability_zone': 'z2'}}}, 400)
        self.assertIn('contain instances', body['badRequest']['message'])
        self.assertEqual({'availability_zone': 'z1'},
                         self.mirrors(self.cell2)[0][3])
        self.assertEqual('z1', db_api.aggregate_get(
            agg['id'])['availability_zone'])

    def test_a_cell_that_cannot_be_written_is_a_503(self):
        agg = self.create('a1', 'z1')
        self.action(agg['id'], {'add_host': {'host': 'h2'}})
        # A database that cannot be opened (its directory cannot be).
        broken = 'sqlite:////dev/null/cell2/cell2.sqlite'
        mappings.cell_update(self.cell2['uuid'],
                             {'database_connection': broken})
        cell_routing.forget_cells()
        body = self.action(agg['id'], {'set_metadata': {'metadata': {
            'availability_zone': 'z2'}}}, 503)
        self.assertIn('cell2', body['serviceUnavailable']['message'])
        self.action(agg['id'], {'remove_host': {'host': 'h2'}}, 503)
        self.assertEqual((['h2'], 'z1'), (
            db_api.aggregate_get(agg['id'])['hosts'],
            db_api.aggregate_get(agg['id'])['availability_zone']))

    def test_a_failed_cell_puts_back_the_mirrors_written(self):
        here = os.path.dirname(db_api.get_engine().url.database)
        url3 = 'sqlite:///%s' % os.path.join(here, 'cell3.sqlite')
        migration.db_sync_url(url3)
        cell3 = mappings.cell_create({
            'name': 'cell3', 'transport_url': 'fake:///cell3',
            'database_connection': url3})
        with self.target(cell3):
            nm_fixtures.compute('h3')
        mappings.host_mapping_create('h3', cell3['id'])
        cell_routing.forget_cells()
        agg = self.create('a1', 'z1')
        self.action(agg['id'], {'add_host': {'host': 'h2'}})
        self.action(agg['id'], {'add_host': {'host': 'h3'}})
        real = aggregate_mirrors.mirror_write

        def fail_in_cell3(aggregate, hosts):
            if hosts == ['h3'] and aggregate['name'] == 'a2':
                raise OSError('cell3 is down')
            return real(aggregate, hosts)
        with mock.patch.object(aggregate_mirrors, 'mirror_write',
                               fail_in_cell3):
            response = self.client.put(
                '%s/%s' % (AGGS, agg['id']), headers=ADMIN,
                json={'aggregate': {'name': 'a2'}})
        self.assertEqual(503, response.status_code)
        self.assertIn('cell3', response.get_json()[
            'serviceUnavailable']['message'])
        # Both mirrors and the home row as they were.
        self.assertEqual('a1', db_api.aggregate_get(agg['id'])['name'])
        self.assertEqual(['a1'], [m[1] for m in self.mirrors(self.cell2)])
        self.assertEqual(['a1'], [m[1] for m in self.mirrors(cell3)])

    def test_a_boot_into_a_zone_goes_to_a_cell_that_has_it(self):
        # cell2 has the most room; the zone of h1 takes the boot home.
        agg = self.create('a1', 'z1')
        self.action(agg['id'], {'add_host': {'host': 'h1'}})
        self.assertEqual(self.cell1['uuid'], self.mapped_cell(
            self.boot_in('z1')))
        self.assertEqual(self.cell2['uuid'], self.mapped_cell(
            self.boot_in('nova')))
        # No cell has the zone: Nova's build with no host, in cell0.
        uuid = self.boot_in('nowhere')
        self.assertEqual(mappings.CELL0_UUID, self.mapped_cell(uuid))
        body = self.client.get('/v2.1/servers/' + uuid,
                               headers=OWNER).get_json()['server']
        self.assertEqual('ERROR', body['status'])
        self.assertIn('No valid host was found.', body['fault']['message'])

    def test_a_zone_whose_hosts_are_full_in_a_cell_is_not_there(self):
        # cell2's host in the zone is too small for the flavor; its other
        # host has the most room of all, but not in the zone.
        with self.target(self.cell2):
            nm_fixtures.compute('h2z', vcpus=1, memory_mb=4096)
        mappings.host_mapping_create('h2z', self.cell2['id'])
        agg = self.create('a1', 'z1')
        self.action(agg['id'], {'add_host': {'host': 'h1'}})
        self.action(agg['id'], {'add_host': {'host': 'h2z'}})
        self.assertEqual(self.cell1['uuid'], self.mapped_cell(
            self.boot_in('z1')))

    def boot_in(self, zone):
        response = self.client.post('/v2.1/servers', headers=OWNER, json={
            'server': {'name': 'vm', 'flavorRef': self.flavor['flavorid'],
                       'availability_zone': zone}})
        self.assertEqual(202, response.status_code, response.get_json())
        return response.get_json()['server']['id']


class OneCellTest(testtools.TestCase):
    """No API database: no host mapping read, no mirror."""

    def test_no_lookup(self):
        client = nm_fixtures.app_client(self, 'h1')
        with mock.patch.object(mappings, 'host_mapping_get') as get, \
                mock.patch.object(mappings, 'host_mappings_of') as many, \
                mock.patch.object(cell_routing, 'cell_mappings') as cellmap:
            response = client.post(AGGS, headers=ADMIN, json={
                'aggregate': {'name': 'a1', 'availability_zone': 'z1'}})
            agg_id = response.get_json()['aggregate']['id']
            response = client.post('%s/%s/action' % (AGGS, agg_id),
                                   headers=ADMIN,
                                   json={'add_host': {'host': 'h1'}})
            self.assertEqual(200, response.status_code)
        get.assert_not_called()
        many.assert_not_called()
        cellmap.assert_not_called()
        self.assertIsNone(aggregate_cells.mirrors())
