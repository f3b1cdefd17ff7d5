"""The API's lists across cells, in process: a home cell (the API's
[database]), a second cell and cell0, each its own SQLite database, and
an API database with their mappings. Merge order, markers in another
cell, limits, a down cell (2.69 partial records; skipped below, or 500
with [api] list_records_by_skipping_down_cells = False)."""
import datetime
import os
import threading
import time

import fixtures

import testtools

from nova_moves.api import cell_lists
from nova_moves import cells
from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves.db import api_migration
from nova_moves.db import mappings
from nova_moves.db import migration
from nova_moves.db import session
from nova_moves import exception
from nova_moves import states
from tests.unit import fixtures as nm_fixtures

CONF = conf.CONF
ADMIN = {'X-Auth-Token': 'admin:admin'}
ALICE = {'X-Auth-Token': 'alice:p1'}
T0 = datetime.datetime(2026, 1, 1, 12, 0, 0)


def at(version, headers=ADMIN):
    return dict(headers, **{'OpenStack-API-Version': 'compute %s' % version})


class CellListsBase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.client = nm_fixtures.api_on_database(self)
        self.dir = os.path.dirname(CONF.database.connection[
            len('sqlite:///'):])
        api_url = 'sqlite:///%s' % os.path.join(self.dir, 'api.sqlite')
        self.useFixture(nm_fixtures.Override('connection', api_url,
                                             'api_database'))
        api_migration.db_sync()
        self.addCleanup(session.dispose_engines)
        cell_lists.reset_cache()
        self.addCleanup(cell_lists.reset_cache)
        self.cell0 = self._cell('cell0', uuid=mappings.CELL0_UUID,
                                transport='none:///')
        self.cell1 = mappings.cell_create({
            'name': 'cell1', 'database_connection': CONF.database.connection,
            'transport_url': 'fake:///cell1'})
        self.cell2 = self._cell('cell2')

    def _cell(self, name, uuid=None, transport=None):
        url = 'sqlite:///%s' % os.path.join(self.dir, name + '.sqlite')
        migration.db_sync_url(url)
        return mappings.cell_create({
            'uuid': uuid, 'name': name, 'database_connection': url,
            'transport_url': transport or 'fake:///' + name})

    def server(self, cell, minutes, project='p1', **values):
        """A server created ``minutes`` after T0 in ``cell``, mapped."""
        with cells.target(cells.Cell.from_mapping(cell)):
            instance = db_api.instance_create(dict({
                'display_name': 'vm%d' % minutes, 'user_id': 'alice',
                'project_id': project, 'vm_state': states.ACTIVE,
                'host': 'h-' + cell['name'], 'node': 'h-' + cell['name'],
                'flavor': nm_fixtures.SMALL,
                'created_at': T0 + datetime.timedelta(minutes=minutes)},
                **values))
        mappings.instance_mapping_create(instance['uuid'], cell['id'],
                                         project, 'alice')
        return instance['uuid']

    def break_cell(self, cell, url=None):
        """The cell's database unreachable: by default a SQLite path under
        a regular file, which cannot be opened."""
        if url is None:
            blocker = os.path.join(self.dir, 'not-a-directory')
            open(blocker, 'w').close()
            url = 'sqlite:///%s' % os.path.join(blocker, 'x.sqlite')
        mappings.cell_update(cell['uuid'], {'database_connection': url})
        cell_lists.reset_cache()

    def get(self, path, version='2.1', headers=ALICE):
        response = self.client.get('/v2.1/' + path,
                                   headers=at(version, headers))
        return response


class ServerListTest(CellListsBase):

    def setUp(self):
        super().setUp()
        # Interleaved in time across the cells.
        self.s = {m: self.server(self.cell1 if m % 2 else self.cell2, m)
                  for m in range(1, 7)}

    def ids(self, response):
        self.assertEqual(200, response.status_code, response.get_data())
        return [s['id'] for s in response.get_json()['servers']]

    def test_merged_newest_first(self):
        expected = [self.s[m] for m in range(6, 0, -1)]
        self.assertEqual(expected, self.ids(self.get('servers')))
        body = self.get('servers/detail').get_json()['servers']
        self.assertEqual(expected, [s['id'] for s in body])
        self.assertEqual('ACTIVE', body[0]['status'])

    def test_limit_and_marker_in_another_cell(self):
        page = self.get('servers?limit=2')
        self.assertEqual([self.s[6], self.s[5]], self.ids(page))
        next_href = page.get_json()['servers_links'][0]['href']
        self.assertIn('marker=%s' % self.s[5], next_href)
        # The marker is in cell1; the next page starts in cell2.
        page = self.get('servers?limit=2&marker=%s' % self.s[5])
        self.assertEqual([self.s[4], self.s[3]], self.ids(page))
        page = self.get('servers/detail?limit=3&marker=%s' % self.s[4])
        self.assertEqual([self.s[3], self.s[2], self.s[1]], self.ids(page))
        page = self.get('servers?marker=%s' % self.s[1])
        self.assertEqual([], self.ids(page))

    def test_same_created_at_ordered_by_id_then_uuid(self):
        a = self.server(self.cell1, 10)
        b = self.server(self.cell2, 10)
        ids = self.ids(self.get('servers?limit=2'))
        self.assertEqual(sorted([a, b]) if True else None, sorted(ids))
        first = self.ids(self.get('servers?limit=1'))
        rest = self.ids(self.get('servers?limit=1&marker=%s' % first[0]))
        self.assertEqual(sorted([a, b]), sorted(first + rest))

    def test_unknown_marker_is_400(self):
        self.assertEqual(400, self.get(
            'servers?marker=00000000-0000-0000-0000-00000000dead'
        ).status_code)

    def test_filters_apply_in_every_cell(self):
        ids = self.ids(self.get('servers?name=vm[24]$'))
        self.assertEqual([self.s[4], self.s[2]], ids)
        ids = self.ids(self.get('servers?name=vm&limit=2&marker=%s'
                                % self.s[4]))
        self.assertEqual([self.s[3], self.s[2]], ids)

    def test_project_scope(self):
        other = self.server(self.cell2, 20, project='p2')
        self.assertNotIn(other, self.ids(self.get('servers', headers=ALICE)))
        self.assertIn(other, self.ids(self.get('servers?all_tenants=1',
                                                     headers=ADMIN)))


    def test_per_project_cells(self):
        self.useFixture(nm_fixtures.Override(
            'instance_list_per_project_cells', True, 'api'))
        only2 = self.server(self.cell2, 30, project='p3')
        self.break_cell(self.cell1)
        # p3 has servers in cell2 only: cell1 being down is not met.
        self.useFixture(nm_fixtures.Override(
            'list_records_by_skipping_down_cells', False, 'api'))
        self.assertEqual([only2], self.ids(self.get(
            'servers', headers={'X-Auth-Token': 'carol:p3'})))
        self.assertEqual(500, self.get('servers').status_code)


class DownCellServerListTest(CellListsBase):

    def setUp(self):
        super().setUp()
        self.up = [self.server(self.cell1, m) for m in (1, 3)]
        self.down = [self.server(self.cell2, m) for m in (2, 4)]
        self.break_cell(self.cell2)

    def test_skipped_below_2_69(self):
        for path in ('servers', 'servers/detail'):
            response = self.get(path, '2.68')
            self.assertEqual(200, response.status_code)
            self.assertEqual(self.up[::-1], [
                s['id'] for s in response.get_json()['servers']])

    def test_500_when_not_skipping(self):
        self.useFixture(nm_fixtures.Override(
            'list_records_by_skipping_down_cells', False, 'api'))
        self.assertEqual(500, self.get('servers', '2.68').status_code)
        # 2.69 answers whatever the option says.
        self.assertEqual(200, self.get('servers', '2.69').status_code)

    def test_partial_records_from_2_69(self):
        body = self.get('servers', '2.69').get_json()['servers']
        self.assertEqual(self.up[::-1] + self.down[::-1],
                         [s['id'] for s in body])
        partial = body[-1]
        self.assertEqual({'id', 'status', 'links'}, set(partial))
        self.assertEqual('UNKNOWN', partial['status'])
        body = self.get('servers/detail', '2.69').get_json()['servers']
        partial = body[-1]
        self.assertEqual({'id', 'status', 'links', 'tenant_id', 'created'},
                         set(partial))
        self.assertEqual('p1', partial['tenant_id'])
        self.assertEqual('ACTIVE', body[0]['status'])

    def test_partial_records_page_on(self):
        page = self.get('servers?limit=3', '2.69').get_json()
        self.assertEqual(self.up[::-1] + [self.down[1]],
                         [s['id'] for s in page['servers']])
        href = page['servers_links'][0]['href']
        marker = href.split('marker=')[1]
        self.assertEqual(self.down[1], marker)
        page = self.get('servers?limit=3&marker=%s' % marker, '2.69')
        self.assertEqual([self.down[0]], [
            s['id'] for s in page.get_json()['servers']])

    def test_filtered_list_skips_down_cell(self):
        body = self.get('servers?name=vm', '2.69').get_json()['servers']
        self.assertEqual(self.up[::-1], [s['id'] for s in body])

    def test_closed_port_is_down_at_once(self):
        # A PostgreSQL cell whose server refuses connections: no wait for
        # oslo.db's connection retries (the cell engines make none).
        self.break_cell(self.cell2,
                        'postgresql+psycopg2://nova:x@127.0.0.1:9/nova')
        started = time.monotonic()
        body = self.get('servers', '2.69').get_json()['servers']
        self.assertLess(time.monotonic() - started, 10)
        self.assertEqual(self.up[::-1] + self.down[::-1],
                         [s['id'] for s in body])

    def test_slow_cell_times_out(self):
        self.useFixture(fixtures.MonkeyPatch(
            'nova_moves.api.cell_lists.CELL_TIMEOUT', 0.5))
        real = db_api.instance_get_all
        release = threading.Event()
        self.addCleanup(release.set)

        def slow(**kwargs):
            if cells.current() and cells.current().name == 'cell1':
                release.wait(10)
            return real(**kwargs)

        self.useFixture(fixtures.MonkeyPatch(
            'nova_moves.db.api.instance_get_all', slow))
        started = time.monotonic()
        body = self.get('servers', '2.68').get_json()['servers']
        self.assertLess(time.monotonic() - started, 5)
        # cell1 timed out, cell2 is broken: nothing, and no wait.
        self.assertEqual([], body)

    def test_is_cell_failure(self):
        for url in (None, 'postgresql+psycopg2://nova:x@127.0.0.1:9/nova'):
            if url:
                self.break_cell(self.cell2, url)
            cell = cells.Cell.from_mapping(mappings.cell_get(
                self.cell2['uuid']))
            try:
                with cells.target(cell):
                    db_api.instance_get(self.down[0])
            except Exception as exc:
                self.assertTrue(cell_lists.is_cell_failure(exc), exc)
            else:
                self.fail('a read in a down cell succeeded')
        self.assertFalse(cell_lists.is_cell_failure(
            exception.InstanceNotFound(instance_id='x')))

    def test_show_of_a_down_cells_server(self):
        response = self.get('servers/%s' % self.down[0], '2.69')
        self.assertEqual(200, response.status_code, response.get_data())
        body = response.get_json()['server']
        self.assertEqual('UNKNOWN', body['status'])
        self.assertEqual('p1', body['tenant_id'])
        self.assertEqual(500, self.get('servers/%s' % self.down[0],
                                       '2.68').status_code)
        self.assertEqual(404, self.get(
            'servers/%s' % self.down[0], '2.69',
            {'X-Auth-Token': 'mallory:p2'}).status_code)
        # The other cell's servers are shown as ever.
        self.assertEqual('ACTIVE', self.get(
            'servers/%s' % self.up[0], '2.69').get_json()['server'][
                'status'])

    def test_partial_show_record(self):
        mapping = mappings.instance_mapping_get(self.down[0])
        with self.client.application.test_request_context():
            body = cell_lists.partial_server_show(mapping, '2.71')
        self.assertEqual('UNKNOWN', body['status'])
        self.assertEqual([], body['server_groups'])
        self.assertEqual('alice', body['user_id'])


class OtherListsTest(CellListsBase):
    """Services, hypervisors, hosts, zones, migrations and usage: every
    cell's, and a down cell's services as 2.69 partial records."""

    def setUp(self):
        super().setUp()
        for cell, host, zone in ((self.cell1, 'h1', 'az1'),
                                 (self.cell2, 'h2', 'az2')):
            with cells.target(cells.Cell.from_mapping(cell)):
                nm_fixtures.compute(host, zone=zone)
            mappings.host_mapping_create(host, cell['id'])

    def migration(self, cell, minutes, **values):
        with cells.target(cells.Cell.from_mapping(cell)):
            return db_api.migration_create(dict({
                'instance_uuid': self.server(cell, minutes),
                'source_compute': 'h-' + cell['name'],
                'migration_type': 'migration', 'status': 'finished',
                'project_id': 'p1', 'user_id': 'alice',
                'created_at': T0 + datetime.timedelta(minutes=minutes)},
                **values))['uuid']

    def test_services_of_every_cell(self):
        body = self.get('os-services', headers=ADMIN).get_json()['services']
        self.assertEqual(['h1', 'h2'], sorted(s['host'] for s in body))

    def test_down_cell_services(self):
        self.break_cell(self.cell2)
        body = self.get('os-services', '2.68', ADMIN).get_json()['services']
        self.assertEqual(['h1'], [s['host'] for s in body])
        body = self.get('os-services', '2.69', ADMIN).get_json()['services']
        self.assertEqual({'binary': 'nova-compute', 'host': 'h2',
                          'status': 'UNKNOWN'}, body[-1])
        self.useFixture(nm_fixtures.Override(
            'list_records_by_skipping_down_cells', False, 'api'))
        self.assertEqual(500, self.get('os-services', '2.68',
                                       ADMIN).status_code)

    def test_service_update_in_its_cell(self):
        body = self.get('os-services?host=h2', '2.53',
                        ADMIN).get_json()['services']
        response = self.client.put(
            '/v2.1/os-services/%s' % body[0]['id'],
            json={'status': 'disabled', 'disabled_reason': 'x'},
            headers=at('2.53'))
        self.assertEqual(200, response.status_code, response.get_data())
        with cells.target(cells.Cell.from_mapping(self.cell2)):
            self.assertTrue(db_api.service_get_all(host='h2')[0]['disabled'])

    def test_hypervisors_of_every_cell(self):
        body = self.get('os-hypervisors/detail', '2.53', ADMIN).get_json()
        self.assertEqual(['h1', 'h2'], sorted(
            h['hypervisor_hostname'] for h in body['hypervisors']))
        page = self.get('os-hypervisors?limit=1', '2.53', ADMIN).get_json()
        first = page['hypervisors'][0]['id']
        page = self.get('os-hypervisors?limit=1&marker=%s' % first, '2.53',
                        ADMIN).get_json()
        self.assertEqual(1, len(page['hypervisors']))
        self.assertNotEqual(first, page['hypervisors'][0]['id'])
        body = self.get('os-hypervisors?hypervisor_hostname_pattern=h2',
                        '2.53', ADMIN).get_json()['hypervisors']
        self.assertEqual(['h2'], [h['hypervisor_hostname'] for h in body])
        shown = self.get('os-hypervisors/%s' % body[0]['id'], '2.53', ADMIN)
        self.assertEqual('h2', shown.get_json()['hypervisor'][
            'hypervisor_hostname'])

    def test_hosts_and_zones(self):
        hosts = self.get('os-hosts', headers=ADMIN).get_json()['hosts']
        self.assertEqual({'h1', 'h2'}, {h['host_name'] for h in hosts})
        self.assertEqual(200, self.get('os-hosts/h2',
                                       headers=ADMIN).status_code)
        zones = self.get('os-availability-zone/detail',
                         headers=ADMIN).get_json()['availabilityZoneInfo']
        self.assertTrue({'az1', 'az2'} <= {z['zoneName'] for z in zones})

    def test_migrations_merged_and_paged(self):
        made = {m: self.migration(self.cell1 if m % 2 else self.cell2, m)
                for m in range(1, 5)}
        body = self.get('os-migrations', '2.59', ADMIN).get_json()
        self.assertEqual([made[m] for m in (4, 3, 2, 1)],
                         [m['uuid'] for m in body['migrations']])
        page = self.get('os-migrations?limit=2&marker=%s' % made[3], '2.59',
                        ADMIN).get_json()
        self.assertEqual([made[2], made[1]],
                         [m['uuid'] for m in page['migrations']])
        self.assertEqual(400, self.get(
            'os-migrations?marker=00000000-0000-0000-0000-00000000dead',
            '2.59', ADMIN).status_code)
        self.break_cell(self.cell2)
        body = self.get('os-migrations', '2.59', ADMIN).get_json()
        self.assertEqual([made[3], made[1]],
                         [m['uuid'] for m in body['migrations']])

    def test_cross_cell_migration_listed_once(self):
        # A cross-cell resize in VERIFY_RESIZE: the server shown in cell2,
        # its hidden copy left in cell1, the migration in both cells.
        server = self.server(self.cell2, 5)
        with cells.target(cells.Cell.from_mapping(self.cell1)):
            db_api.instance_create({
                'uuid': server, 'display_name': 'vm5', 'user_id': 'alice',
                'project_id': 'p1', 'vm_state': states.RESIZED,
                'host': 'h1', 'node': 'h1', 'flavor': nm_fixtures.SMALL,
                'created_at': T0, 'hidden': True})
        copy = {'uuid': '6b1f9a43-0b7c-4f5e-9d0a-3f6c1e2d4a57',
                'instance_uuid': server, 'source_compute': 'h1',
                'dest_compute': 'h2', 'migration_type': 'resize',
                'status': 'finished', 'cross_cell_move': True,
                'project_id': 'p1', 'user_id': 'alice', 'created_at': T0}
        for cell in (self.cell1, self.cell2):
            with cells.target(cells.Cell.from_mapping(cell)):
                db_api.migration_create(copy)
        # `openstack server migration list` on a two-cell deployment
        # showed the move twice (once per cell).
        for version in ('2.1', '2.59', '2.80'):
            body = self.get('os-migrations?instance_uuid=%s' % server,
                            version, ADMIN).get_json()
            self.assertEqual([('h1', 'h2')], [
                (m['source_compute'], m['dest_compute'])
                for m in body['migrations']], version)

    def test_placement_and_audit_log_of_every_cell(self):
        body = self.get('os-nova-moves-placement', headers=ADMIN).get_json()
        self.assertTrue({'h1', 'h2'} <= set(body['resource_providers']),
                        body['resource_providers'].keys())
        log = self.get('os-instance_usage_audit_log', headers=ADMIN)
        self.assertEqual(200, log.status_code, log.get_data())
        self.assertEqual(2, log.get_json()['instance_usage_audit_logs'][
            'num_hosts'])

    def test_tenant_usage_of_every_cell(self):
        for m, cell in ((1, self.cell1), (2, self.cell2)):
            self.server(cell, m, launched_at=T0)
        query = ('os-simple-tenant-usage/p1?start=2025-01-01T00:00:00&'
                 'end=2027-01-01T00:00:00')
        body = self.get(query, '2.40', ADMIN).get_json()['tenant_usage']
        self.assertEqual(2, len(body['server_usages']))
        page = self.get(query + '&limit=1', '2.40', ADMIN).get_json()
        marker = page['tenant_usage']['server_usages'][0]['instance_id']
        page = self.get(query + '&limit=1&marker=' + marker, '2.40',
                        ADMIN).get_json()
        self.assertEqual(1, len(page['tenant_usage']['server_usages']))
        self.assertNotEqual(
            marker, page['tenant_usage']['server_usages'][0]['instance_id'])


class OneCellTest(testtools.TestCase):
    """One cell (and cell0) mapped in an API database: no scatter."""

    def test_no_scatter(self):
        nm_fixtures.api_on_database(self)
        self.assertIsNone(cell_lists.targets(include_cell0=True))
