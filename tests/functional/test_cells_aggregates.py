"""os-aggregates across cells on real processes (harness/cell_stack.py):
two cells, cell2 on a PostgreSQL cluster of its own (SQLite when no
PostgreSQL binaries are installed: the down-cell part is then skipped).
A cell2 host joins an aggregate with a zone through the HTTP API; its
zone shows in os-services and os-availability-zone (read in cell2's
own database, from the aggregate's mirror there); a boot into that zone
lands on it although cell1 has more room; with cell2's database stopped
a change of the aggregate is a 503 naming cell2 that changes nothing;
once it is back the host leaves the aggregate and its zone is
``nova`` again."""
import os

import sqlalchemy as sa
import testtools

from nova_moves.db import models
from nova_moves.harness import cell_stack
from nova_moves.harness import pg_cluster
from tests.functional import cells_base

AGG_HOSTS = models.AggregateHost.__table__
ZONE = 'az-cell2'


class CellsAggregatesTest(cells_base.CellReads, testtools.TestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.private_db = pg_cluster.available()
        # cell1's host is the roomier: a boot by room alone goes there.
        computes = [[{'name': 'cell1-compute1',
                      'compute': {'vcpus': 16, 'memory_mb': 32768}}],
                    [{'name': 'cell2-compute%d' % i} for i in (1, 2)]]
        cls.stack = cell_stack.CellsStack(
            cells=2, computes=computes,
            private_database_cells=['cell2'] if cls.private_db else (),
            keep_workdir=bool(os.environ.get('NOVA_MOVES_KEEP_LOGS')),
            extra_conf={'quota': {'instances': -1, 'cores': -1,
                                  'ram': -1}})
        cells_base.start(cls.stack)
        cls.admin = cls.stack.client()
        cls.small = cls.admin.create_flavor('small', 1, 512, 1)
        # pre_ping: cell2's database is restarted under the test.
        cls.engines = {cell: sa.create_engine(url, pool_pre_ping=True)
                       for cell, url in
                       cls.stack.cell_database_urls.items()}

    def zones(self):
        return {s['host']: s['zone'] for s in self.admin.services()
                if s['binary'] == 'nova-compute'}

    def mirrored_hosts(self, cell):
        with self.engines[cell].connect() as conn:
            return sorted(conn.execute(sa.select(AGG_HOSTS.c.host)).scalars())

    def test_a_cell2_host_in_a_zone(self):
        admin, host = self.admin, 'cell2-compute1'
        agg = admin.post('/os-aggregates', {'aggregate': {
            'name': 'rack-2', 'availability_zone': ZONE}},
            version='2.41', expect=200).json()['aggregate']
        path = '/os-aggregates/%s' % agg['id']
        admin.post(path + '/action', {'add_host': {'host': 'nohost'}},
                   expect=404)
        added = admin.post(path + '/action', {'add_host': {'host': host}},
                           expect=200).json()['aggregate']
        self.assertEqual([host], added['hosts'])
        self.assertEqual([host], self.mirrored_hosts('cell2'))
        listed = admin.get('/os-aggregates', expect=200).json()['aggregates']
        self.assertEqual([('rack-2', [host])],
                         [(a['name'], a['hosts']) for a in listed])
        self.assertEqual({'cell1-compute1': 'nova', host: ZONE,
                          'cell2-compute2': 'nova'}, self.zones())
        zones = admin.get('/os-availability-zone/detail',
                          expect=200).json()['availabilityZoneInfo']
        self.assertEqual([host], sorted(next(
            z for z in zones if z['zoneName'] == ZONE)['hosts']))

        # A boot into the zone: cell2, on its host there.
        server = admin.post('/servers', {'server': {
            'name': 'in-zone', 'flavorRef': self.small['id'],
            'imageRef': 'fake', 'networks': 'none',
            'availability_zone': ZONE}}, expect=202).json()['server']
        shown = admin.wait_for_status(server['id'], ('ACTIVE', 'ERROR'))
        self.assertEqual(('ACTIVE', host, ZONE), (
            shown['status'], shown['OS-EXT-SRV-ATTR:host'],
            shown['OS-EXT-AZ:availability_zone']), shown)
        self.assertIsNotNone(self.row('cell2', server['id']))
        # Its server keeps the host's zone (Nova's 400).
        admin.post(path + '/action', {'set_metadata': {'metadata': {
            'availability_zone': 'other'}}}, expect=400)
        admin.delete('/servers/%s' % server['id'], expect=204)
        admin.wait_for(lambda: admin.get(
            '/servers/%s' % server['id']).status_code == 404, timeout=30,
            what='server deleted')

        if self.private_db:
            self._down_cell_changes_nothing(path, host)
        admin.wait_for(lambda: admin.post(
            path + '/action', {'remove_host': {'host': host}}
        ).status_code == 200, timeout=30, what='host removed')
        self.assertEqual([], self.mirrored_hosts('cell2'))
        self.assertEqual('nova', self.zones()[host])
        admin.delete(path, expect=200)

    def _down_cell_changes_nothing(self, path, host):
        postgres = self.stack.cell_postgres['cell2']
        postgres.stop('immediate')
        try:
            response = self.admin.post(path + '/action', {'set_metadata': {
                'metadata': {'availability_zone': 'other'}}})
            self.assertEqual(503, response.status_code, response.text)
            self.assertIn('cell2', response.json()[
                'serviceUnavailable']['message'])
            shown = self.admin.get(path, expect=200).json()['aggregate']
            self.assertEqual(([host], ZONE), (shown['hosts'],
                                              shown['availability_zone']))
        finally:
            postgres.start()
