"""Quota across cells (doc/cells.md): the limits are the API's (its home
database, also inside a server's cell) and the usage is counted in
every cell, as Nova counts it: a project's servers in another cell
count against a boot here, in GET /limits and in os-quota-sets detail;
a cell that does not answer is left out of the count."""
from nova_moves.api import quota_rules
from nova_moves import cells
from nova_moves.db import api as db_api
from nova_moves import states
from tests.unit.api import test_cell_lists
from tests.unit import fixtures as nm_fixtures

ADMIN = test_cell_lists.ADMIN


class CellQuotaTest(test_cell_lists.CellListsBase):

    def setUp(self):
        super().setUp()
        self.server(self.cell1, 1)
        self.server(self.cell2, 2)
        self.server(self.cell2, 3)
        db_api.quota_set('p1', 'instances', 3)

    def new(self, cell):
        values = {'display_name': 'new', 'user_id': 'alice',
                  'project_id': 'p1', 'vm_state': states.BUILDING,
                  'flavor': nm_fixtures.SMALL}
        with cells.target(cells.Cell.from_mapping(cell)):
            return quota_rules.create_instance(
                'p1', {'instances': 1, 'cores': 1, 'ram': 1}, values)

    def test_other_cells_count_against_a_boot(self):
        for cell in (self.cell1, self.cell2):
            self.assertRaises(quota_rules.QuotaExceeded, self.new, cell)
        db_api.quota_set('p1', 'instances', 4)
        self.assertEqual('p1', self.new(self.cell2)['project_id'])
        self.assertRaises(quota_rules.QuotaExceeded, self.new, self.cell1)

    def test_limits_are_the_home_ones_inside_a_cell(self):
        with cells.target(cells.Cell.from_mapping(self.cell2)):
            self.assertEqual(3, quota_rules.limits('p1')['instances'])

    def test_usage_shown_is_every_cells(self):
        body = self.get('limits').get_json()['limits']['absolute']
        self.assertEqual(3, body['totalInstancesUsed'])
        detail = self.client.get('/v2.1/os-quota-sets/p1/detail',
                                 headers=ADMIN).get_json()['quota_set']
        self.assertEqual({'limit': 3, 'in_use': 3, 'reserved': 0},
                         detail['instances'])

    def test_a_cell_that_does_not_answer_is_left_out(self):
        self.break_cell(self.cell2)
        self.assertEqual(1, quota_rules.usage('p1')['instances'])
        self.assertEqual('p1', self.new(self.cell1)['project_id'])
