"""Server groups spanning cells (doc/cells.md "Server groups"), on real
processes over real RabbitMQ (harness/cell_stack.py): cell1, the API's
home cell, has one compute and cell2 two, each host room for one
``full`` server. An anti-affinity group's three members take the three
hosts, so two are in cell2 (the home cell full), each cell's scheduler
seeing that cell's members; the group shows all three; deleting a cell2
member and the group leaves no group or member row in any cell. An
affinity group's members land on one host of one cell. A cross-cell
migration of an anti-affinity member (the policy file allows it) is
placed by cell2's scheduler away from the member there, and takes its
membership along."""
import json
import os
import shutil
import tempfile

import sqlalchemy as sa
import testtools

from nova_moves.db import models
from nova_moves.harness import cell_stack
from tests.functional import cells_base

GROUPS = models.InstanceGroup.__table__
MEMBERS = models.InstanceGroupMember.__table__


class CellsGroupsTest(cells_base.CellReads, testtools.TestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        host = {'vcpus': 2, 'memory_mb': 2048}
        computes = [[{'name': 'cell1-compute1', 'compute': host}],
                    [{'name': 'cell2-compute%d' % i, 'compute': host}
                     for i in (1, 2)]]
        cls.policy_dir = tempfile.mkdtemp(prefix='nm-cellgroups-policy-')
        policy_file = os.path.join(cls.policy_dir, 'policy.json')
        with open(policy_file, 'w') as f:
            json.dump({'compute:servers:resize:cross_cell':
                       'rule:context_is_admin'}, f)
        cls.stack = cell_stack.CellsStack(
            cells=2, computes=computes,
            keep_workdir=bool(os.environ.get('NOVA_MOVES_KEEP_LOGS')),
            extra_conf={'quota': {'instances': -1, 'cores': -1,
                                  'ram': -1},
                        'oslo_policy': {'policy_file': policy_file}})
        cells_base.start(cls.stack)
        cls.admin = cls.stack.client()
        cls.full = cls.admin.create_flavor('full', 2, 1024, 1)
        cls.small = cls.admin.create_flavor('small', 1, 512, 1)
        cls.filler = cls.admin.create_flavor('filler', 1, 1536, 1)
        cls.engines = {cell: sa.create_engine(url) for cell, url in dict(
            cls.stack.cell_database_urls,
            cell0=cls.stack.cell0_database_url).items()}

    @classmethod
    def stop_cells(cls):
        try:
            super().stop_cells()
        finally:
            shutil.rmtree(cls.policy_dir, ignore_errors=True)

    def group(self, policy):
        return self.admin.post('/os-server-groups', {'server_group': {
            'name': policy, 'policy': policy}}, version='2.64',
            expect=200).json()['server_group']['id']

    def boot(self, name, flavor, group_id=None, host=None):
        server = {'name': name, 'flavorRef': flavor['id'],
                  'imageRef': 'fake', 'networks': 'none'}
        if host:
            server['availability_zone'] = 'nova:' + host
        body = {'server': server}
        if group_id:
            body['os:scheduler_hints'] = {'group': group_id}
        body = self.admin.post('/servers', body, expect=202).json()
        server = self.admin.wait_for_status(body['server']['id'],
                                            ('ACTIVE', 'ERROR'))
        self.assertEqual('ACTIVE', server['status'], server)
        host = server['OS-EXT-SRV-ATTR:host']
        return server['id'], host, self.stack.cell_of_host(host)

    def members(self, group_id):
        return self.admin.get('/os-server-groups/%s' % group_id,
                              expect=200).json()['server_group']['members']

    def group_rows(self, group_id, servers):
        """{cell: (group rows, member rows)} where any is left."""
        left = {}
        for cell, engine in self.engines.items():
            with engine.connect() as conn:
                groups = conn.execute(sa.select(sa.func.count()).where(
                    GROUPS.c.uuid == group_id)).scalar()
                members = conn.execute(sa.select(sa.func.count()).where(
                    MEMBERS.c.instance_uuid.in_(servers))).scalar()
            if groups or members:
                left[cell] = (groups, members)
        return left

    def delete_server(self, uuid):
        self.admin.delete('/servers/%s' % uuid, expect=204)
        self.admin.wait_for(
            lambda: self.admin.get('/servers/%s' % uuid).status_code == 404,
            what='%s deleted' % uuid)

    def test_groups_across_cells(self):
        anti = self.group('anti-affinity')
        placed = [self.boot('anti-%d' % i, self.full, anti)
                  for i in (1, 2, 3)]
        uuids = [uuid for uuid, _host, _cell in placed]
        hosts = {host for _uuid, host, _cell in placed}
        self.assertEqual(3, len(hosts), placed)
        self.assertEqual(['cell1', 'cell2', 'cell2'],
                         sorted(cell for _uuid, _host, cell in placed))
        self.assertEqual(sorted(uuids), sorted(self.members(anti)))
        # The home cell holds the group, cell2 its mirror: one member
        # row per server, in its cell.
        self.assertEqual({'cell1': (1, 1), 'cell2': (1, 2)},
                         self.group_rows(anti, uuids))
        in_cell2 = [uuid for uuid, _host, cell in placed if cell == 'cell2']
        self.delete_server(in_cell2[0])
        self.assertEqual({'cell1': (1, 1), 'cell2': (1, 1)},
                         self.group_rows(anti, uuids))
        self.assertEqual(sorted(set(uuids) - {in_cell2[0]}),
                         sorted(self.members(anti)))
        self.admin.delete('/os-server-groups/%s' % anti, expect=204)
        self.assertEqual({}, self.group_rows(anti, uuids))
        for uuid in set(uuids) - {in_cell2[0]}:
            self.delete_server(uuid)

        affinity = self.group('affinity')
        placed = [self.boot('aff-%d' % i, self.small, affinity)
                  for i in (1, 2)]
        self.assertEqual(1, len({(host, cell)
                                 for _uuid, host, cell in placed}), placed)
        uuids = [uuid for uuid, _host, _cell in placed]
        self.assertEqual(sorted(uuids), sorted(self.members(affinity)))
        for uuid in uuids:
            self.delete_server(uuid)
        self.admin.delete('/os-server-groups/%s' % affinity, expect=204)
        self.assertEqual({}, self.group_rows(affinity, uuids))

    def test_cross_cell_migration_of_an_anti_affinity_member(self):
        anti = self.group('anti-affinity')
        there, _host, _cell = self.boot('there', self.small, anti,
                                        host='cell2-compute1')
        # cell2-compute2 has room for one small server only, and less
        # free RAM than cell2-compute1: only the group's filter, seeing
        # the member on cell2-compute1, sends the move there.
        filler, _host, _cell = self.boot('filler', self.filler,
                                         host='cell2-compute2')
        moving, _host, cell = self.boot('moving', self.small, anti,
                                        host='cell1-compute1')
        self.assertEqual('cell1', cell)
        response = self.admin.action(moving, {'migrate': None})
        self.assertEqual(202, response.status_code, response.text)
        moved = self.admin.wait_for_status(moving, ('VERIFY_RESIZE',
                                                    'ERROR', 'ACTIVE'))
        self.assertEqual(('VERIFY_RESIZE', 'cell2-compute2'), (
            moved['status'], moved['OS-EXT-SRV-ATTR:host']), moved)
        response = self.admin.action(moving, {'confirmResize': None})
        self.assertIn(response.status_code, (202, 204), response.text)
        self.admin.wait_for_status(moving, 'ACTIVE')
        # The membership moved with it: cell1 keeps the group (no
        # member), cell2's mirror has both.
        self.assertEqual({'cell1': (1, 0), 'cell2': (1, 2)},
                         self.group_rows(anti, [there, moving]))
        self.assertEqual(sorted([there, moving]), sorted(self.members(anti)))
        for uuid in (there, moving, filler):
            self.delete_server(uuid)
        self.admin.delete('/os-server-groups/%s' % anti, expect=204)
        self.assertEqual({}, self.group_rows(anti, [there, moving]))
