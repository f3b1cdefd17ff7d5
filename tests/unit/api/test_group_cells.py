"""Server groups spanning cells (api/group_cells.py, api/boot_cells.py
group_cell, db/server_groups.py mirrors) on the SQLite cells of
test_cell_routing: cell1 is the API's home cell (h1, 2 vCPUs), cell2
has h2 (4 vCPUs), the flavor takes 2. End to end with real processes:
tests/functional/test_cells_groups.py."""
from unittest import mock

from nova_moves.api import cell_lists
from nova_moves.api import cell_routing
from nova_moves.api import group_cells
from nova_moves.conductor.tasks import cross_cell_group
from nova_moves.db import api as db_api
from nova_moves.db import cross_cell as cc_db
from nova_moves.db import quotas
from nova_moves import exception
from tests.unit.api import test_cell_routing
from tests.unit import fixtures as nm_fixtures

OWNER = test_cell_routing.OWNER


class GroupCellsTest(test_cell_routing._CellsBase):

    def group(self, policy, rules=None):
        body = {'name': 'g', 'policy': policy}
        if rules:
            body['rules'] = rules
        response = self.client.post(
            '/v2.1/os-server-groups', json={'server_group': body},
            headers=dict(OWNER, **{'X-OpenStack-Nova-API-Version': '2.64'}))
        self.assertEqual(200, response.status_code, response.get_json())
        return response.get_json()['server_group']['id']

    def boot_in(self, group_id, name='vm', expect=202):
        response = self.client.post('/v2.1/servers', headers=OWNER, json={
            'server': {'name': name, 'flavorRef': self.flavor['flavorid']},
            'os:scheduler_hints': {'group': group_id}})
        self.assertEqual(expect, response.status_code, response.get_json())
        return response.get_json().get('server', {}).get('id')

    def members(self, group_id):
        response = self.client.get('/v2.1/os-server-groups/' + group_id,
                                   headers=OWNER)
        self.assertEqual(200, response.status_code)
        return response.get_json()['server_group']['members']

    def test_anti_affinity_member_goes_by_room_into_a_mirror(self):
        group_id = self.group('anti-affinity', {'max_server_per_host': 2})
        uuid = self.boot_in(group_id)
        self.assertEqual(self.cell2['uuid'], self.mapped_cell(uuid))
        with self.target(self.cell2):
            mirror = db_api.server_group_of_instance(uuid)
        self.assertEqual((group_id, 'anti-affinity', {
            'max_server_per_host': 2}, [uuid]), (
            mirror['uuid'], mirror['policy'], mirror['rules'],
            mirror['members']))
        self.assertEqual([], db_api.server_group_get(group_id)['members'])
        self.assertEqual([uuid], self.members(group_id))
        listed = self.client.get('/v2.1/os-server-groups', headers=OWNER)
        self.assertEqual([uuid], listed.get_json()['server_groups'][0][
            'members'])

    def test_affinity_members_follow_the_first(self):
        group_id = self.group('affinity')
        first = self.boot_in(group_id, 'a1')
        self.assertEqual(self.cell2['uuid'], self.mapped_cell(first))
        # cell1 now has far more room: the next member still goes to
        # cell2, where the group's member is.
        nm_fixtures.compute('h3', vcpus=64, memory_mb=65536)
        self.assertEqual(self.cell1['uuid'],
                         self.mapped_cell(self.boot(name='free')))
        second = self.boot_in(group_id, 'a2')
        self.assertEqual(self.cell2['uuid'], self.mapped_cell(second))
        self.assertEqual({first, second}, set(self.members(group_id)))

    def test_affinity_in_several_cells_takes_the_most_members(self):
        group = {'uuid': 'g', 'policy': 'affinity', 'members': ['m1']}
        # The home cell's member, read where it is shown.
        home = mock.patch.object(db_api, 'server_group_members_here',
                                 return_value={'g': ['m1']})
        home.start()
        self.addCleanup(home.stop)
        with mock.patch.object(group_cells, '_elsewhere', return_value={
                self.cell2['uuid']: {'g': ['m2', 'm3']},
                self.cell0['uuid']: {'g': ['m4', 'm5', 'm6']}}):
            self.assertEqual(self.cell2['uuid'],
                             group_cells.affinity_cell(group))
        with mock.patch.object(group_cells, '_elsewhere', return_value={}):
            self.assertEqual(self.cell1['uuid'],
                             group_cells.affinity_cell(group))
            self.assertIsNone(group_cells.affinity_cell(
                dict(group, members=[])))
            self.assertIsNone(group_cells.affinity_cell(
                dict(group, policy='soft-affinity')))

    def test_affinity_cell_without_room_is_cell0(self):
        group_id = self.group('affinity')
        first = self.boot_in(group_id, 'a1')
        with self.target(self.cell2):
            db_api.allocations_replace(first, {
                nm_fixtures.providers()['h2']: {'VCPU': 4}})
        nm_fixtures.compute('h3', vcpus=64, memory_mb=65536)
        second = self.boot_in(group_id, 'a2')
        self.assertEqual(self.cell0['uuid'], self.mapped_cell(second))
        self.assertEqual({first, second}, set(self.members(group_id)))

    def test_a_member_with_no_room_is_in_cell0s_mirror(self):
        group_id = self.group('anti-affinity')
        huge = nm_fixtures.flavor(vcpus=8, memory_mb=1024)
        # Also with one cell besides cell0 (no other cell is read).
        with mock.patch.object(group_cells, 'spans', return_value=False):
            response = self.client.post('/v2.1/servers', headers=OWNER,
                                        json={'server': {
                                            'name': 'big',
                                            'flavorRef': huge['flavorid']},
                                            'os:scheduler_hints': {
                                                'group': group_id}})
        self.assertEqual(202, response.status_code, response.get_json())
        uuid = response.get_json()['server']['id']
        self.assertEqual(self.cell0['uuid'], self.mapped_cell(uuid))
        with self.target(self.cell0):
            self.assertEqual([uuid], db_api.server_group_of_instance(uuid)[
                'members'])
        self.assertEqual([uuid], self.members(group_id))
        self.client.delete('/v2.1/servers/' + uuid, headers=OWNER)
        with self.target(self.cell0):
            self.assertEqual({}, db_api.server_group_members_here(
                [group_id]))

    def test_member_quota_counts_every_cell(self):
        quotas.quota_set('p1', 'server_group_members', 1)
        group_id = self.group('soft-anti-affinity')
        self.boot_in(group_id, 'm1')
        nm_fixtures.compute('h3', vcpus=64, memory_mb=65536)
        self.boot_in(group_id, 'm2', expect=403)
        self.assertEqual(1, len(self.members(group_id)))

    def test_a_member_moving_across_cells_counts_once(self):
        """Its hidden copy in the other cell is a member there too until
        the move settles: the quota counts it once, and a hard-affinity
        boot follows the cell it is shown from."""
        quotas.quota_set('p1', 'server_group_members', 2)
        group_id = self.group('affinity')
        first = self.boot_in(group_id, 'a1')
        self.assertEqual(self.cell2['uuid'], self.mapped_cell(first))
        group = db_api.server_group_get(group_id)
        with self.target(self.cell2):
            row = db_api.instance_get(first)
        # The copy a cross-cell resize writes in the home cell.
        db_api.instance_create(dict(
            {k: row[k] for k in ('uuid', 'display_name', 'user_id',
                                 'project_id', 'vm_state', 'flavor')},
            host='h1', node='h1', hidden=True))
        db_api.server_group_join(group, first)
        self.assertEqual(self.cell2['uuid'],
                         group_cells.affinity_cell(
                             db_api.server_group_get(group_id)))
        nm_fixtures.compute('h3', vcpus=64, memory_mb=65536)
        second = self.boot_in(group_id, 'a2')
        self.assertEqual(self.cell2['uuid'], self.mapped_cell(second))
        self.assertEqual({first, second}, set(self.members(group_id)))
        self.boot_in(group_id, 'a3', expect=403)

    def test_deletes_leave_nothing_behind(self):
        group_id = self.group('anti-affinity')
        one = self.boot_in(group_id, 'm1')
        two = self.boot_in(group_id, 'm2')
        self.assertEqual(self.cell2['uuid'], self.mapped_cell(two))
        response = self.client.delete('/v2.1/servers/' + one, headers=OWNER)
        self.assertEqual(204, response.status_code)
        with self.target(self.cell2):
            self.assertEqual([two], db_api.server_group_members_here(
                [group_id])[group_id])
        self.client.delete('/v2.1/servers/' + two, headers=OWNER)
        with self.target(self.cell2):
            self.assertEqual({}, db_api.server_group_members_here(
                [group_id]))
        self.assertEqual([], self.members(group_id))
        three = self.boot_in(group_id, 'm3')
        self.assertEqual(self.cell2['uuid'], self.mapped_cell(three))
        response = self.client.delete('/v2.1/os-server-groups/' + group_id,
                                      headers=OWNER)
        self.assertEqual(204, response.status_code)
        with self.target(self.cell2):
            self.assertEqual({}, db_api.server_group_members_here(
                [group_id]))
            self.assertIsNone(db_api.server_group_of_instance(three))
        self.assertRaises(db_api.ServerGroupNotFound,
                          db_api.server_group_get, group_id)

    def test_a_cross_cell_copy_carries_the_membership(self):
        group_id = self.group('anti-affinity')
        uuid = self.boot_in(group_id)
        with self.target(self.cell2):
            rows = cc_db.server_rows(uuid)
        self.assertEqual(group_id, rows['group']['uuid'])
        cc_db.server_copy(rows, hidden=True)
        self.assertEqual([uuid], db_api.server_group_get(group_id)[
            'members'])
        # Both copies while the move settles: the member listed once.
        self.assertEqual([uuid], self.members(group_id))
        with self.target(self.cell2):
            cc_db.server_purge(uuid)
            self.assertEqual([], db_api.server_group_members_here(
                [group_id])[group_id])
        self.assertEqual([uuid], self.members(group_id))

    def test_hard_affinity_member_with_others_stays_in_its_cell(self):
        group = {'uuid': 'g', 'policy': 'affinity', 'members': ['a', 'b']}
        self.assertRaises(exception.NoValidHost,
                          cross_cell_group.check_may_leave, group, 'a')
        cross_cell_group.check_may_leave(dict(group, members=['a']), 'a')
        cross_cell_group.check_may_leave(
            dict(group, policy='anti-affinity'), 'a')
        cross_cell_group.check_may_leave(None, 'a')

    def test_join_and_leave_a_target_cell(self):
        group_id = self.group('anti-affinity')
        group = db_api.server_group_get(group_id)
        with self.target(self.cell2):
            cross_cell_group.join_target(group, 'moving')
            self.assertEqual(group_id, db_api.server_group_of_instance(
                'moving')['uuid'])
        cross_cell_group.leave_target(
            cell_routing._cell(self.cell2['uuid']), group, 'moving')
        with self.target(self.cell2):
            self.assertIsNone(db_api.server_group_of_instance('moving'))


class OneCellGroupsTest(test_cell_routing.testtools.TestCase):
    """No API database: a group member's boot and the group's show read
    no other cell."""

    def test_no_scatter(self):
        client = nm_fixtures.app_client(self, 'h1')
        flavor = nm_fixtures.flavor()
        with mock.patch.object(cell_lists, 'scatter') as scatter, \
                mock.patch.object(cell_routing, 'cell_mappings') as cellmap:
            group = client.post('/v2.1/os-server-groups', headers=OWNER,
                                json={'server_group': {
                                    'name': 'g', 'policies': ['affinity']}})
            group_id = group.get_json()['server_group']['id']
            response = client.post('/v2.1/servers', headers=OWNER, json={
                'server': {'name': 'vm', 'flavorRef': flavor['flavorid']},
                'os:scheduler_hints': {'group': group_id}})
            self.assertEqual(202, response.status_code)
            uuid = response.get_json()['server']['id']
            shown = client.get('/v2.1/os-server-groups/' + group_id,
                               headers=OWNER).get_json()
            self.assertEqual([uuid], shown['server_group']['members'])
            client.delete('/v2.1/servers/' + uuid, headers=OWNER)
            client.delete('/v2.1/os-server-groups/' + group_id,
                          headers=OWNER)
        scatter.assert_not_called()
        cellmap.assert_not_called()
