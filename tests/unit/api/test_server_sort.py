"""sort_key / sort_dir on GET /servers[/detail] (Nova's): directions,
several keys, the 400s and the 403, NULLs (lowest), and paging by marker
with no server twice or missed, in one cell and merged across two."""
import datetime
from urllib import parse

import testtools

from nova_moves.db import api as db_api
from nova_moves import states
from tests.unit.api import test_cell_lists
from tests.unit import fixtures as nm_fixtures

ADMIN = test_cell_lists.ADMIN
ALICE = test_cell_lists.ALICE
T0 = test_cell_lists.T0
at = test_cell_lists.at


def _key(value):
    # NULL lowest, as the lists sort it.
    return (value is not None, value if value is not None else 0)


class SortChecks:
    """Tests shared by one cell and two: ``self.s`` {minutes: uuid},
    ``self.rows`` {uuid: values}, ``self.get(path, version, headers)``."""

    def ids(self, response):
        self.assertEqual(200, response.status_code, response.get_data())
        return [s['id'] for s in response.get_json()['servers']]

    def expected(self, *order):
        """The uuids in ``order`` ((column, dir), ...) then Nova's
        tie-breakers: created_at, id in the first direction, uuid asc."""
        first = order[0][1]
        rows = sorted(self.rows, key=lambda u: u)
        # created_at is unique per server here, so it ends the tie-breaks.
        full = list(order) + [('created_at', first)]
        for column, direction in reversed(full):
            rows.sort(key=lambda u: _key(self.value(u, column)),
                      reverse=direction == 'desc')
        return rows

    def value(self, uuid, column):
        if column == 'locked':
            return self.rows[uuid]['locked_by'] is not None
        return self.rows[uuid][column]

    def pages(self, query, limit, version='2.1', headers=ALICE, extra=''):
        """Every page of ``query`` (after the filters ``extra``) by
        following its next links, which keep both."""
        seen = []
        path = 'servers?%s%slimit=%d' % (extra, query, limit)
        for _ in range(50):
            response = self.get(path, version, headers)
            ids = self.ids(response)
            self.assertLessEqual(len(ids), limit)
            seen += ids
            links = response.get_json().get('servers_links')
            if not links:
                return seen
            href = links[0]['href']
            # The next link keeps the sort and the filters.
            for part in (extra + query).rstrip('&').split('&'):
                if part:
                    self.assertIn(part, href)
            path = 'servers?' + parse.urlsplit(href).query
        self.fail('no last page')

    def test_directions(self):
        asc = self.expected(('display_name', 'asc'))
        self.assertEqual(asc, self.ids(self.get(
            'servers?sort_key=display_name&sort_dir=asc')))
        desc = self.expected(('display_name', 'desc'))
        self.assertEqual(desc, self.ids(self.get(
            'servers/detail?sort_key=display_name&sort_dir=desc')))
        # No sort_dir: desc.
        self.assertEqual(desc, self.ids(self.get(
            'servers?sort_key=display_name')))

    def test_default_order_unchanged(self):
        newest = [self.s[m] for m in sorted(self.s, reverse=True)]
        self.assertEqual(newest, self.ids(self.get('servers')))
        # sort_dir alone turns the default key (created_at) around.
        self.assertEqual(newest[::-1],
                         self.ids(self.get('servers?sort_dir=asc')))

    def test_several_keys(self):
        self.assertEqual(
            self.expected(('vm_state', 'asc'), ('display_name', 'desc')),
            self.ids(self.get('servers?sort_key=vm_state&sort_dir=asc'
                              '&sort_key=display_name&sort_dir=desc')))
        # A key without a direction takes the first one (Nova's).
        self.assertEqual(
            self.expected(('vm_state', 'asc'), ('display_name', 'asc')),
            self.ids(self.get('servers?sort_key=vm_state'
                              '&sort_key=display_name&sort_dir=asc')))

    def test_nulls_lowest(self):
        self.assertEqual(
            self.expected(('launched_at', 'asc')),
            self.ids(self.get('servers?sort_key=launched_at&sort_dir=asc')))
        desc = self.ids(self.get('servers?sort_key=launched_at'))
        self.assertEqual(self.expected(('launched_at', 'desc')), desc)
        never = [u for u in self.rows if self.rows[u]['launched_at'] is None]
        self.assertEqual(sorted(never), sorted(desc[-len(never):]))

    def test_paging_with_marker(self):
        everyone = sorted(self.rows)
        for query, order in (
                ('sort_key=display_name&sort_dir=asc&',
                 [('display_name', 'asc')]),
                ('sort_key=display_name&', [('display_name', 'desc')]),
                ('sort_key=launched_at&sort_dir=asc&',
                 [('launched_at', 'asc')]),
                ('sort_key=launched_at&sort_dir=desc&',
                 [('launched_at', 'desc')]),
                ('sort_key=vm_state&sort_key=display_name&sort_dir=desc'
                 '&sort_dir=asc&',
                 [('vm_state', 'desc'), ('display_name', 'asc')])):
            for limit in (1, 2, 3):
                seen = self.pages(query, limit)
                self.assertEqual(everyone, sorted(seen), (query, limit))
                self.assertEqual(self.expected(*order), seen, (query, limit))

    def test_with_a_filter(self):
        # Filtered in Python (status): the whole list sorted, then paged.
        self.rows = {u: v for u, v in self.rows.items()
                     if v['vm_state'] == states.ACTIVE}
        query = 'sort_key=display_name&sort_dir=asc&'
        self.assertEqual(self.expected(('display_name', 'asc')),
                         self.pages(query, 2, extra='status=ACTIVE&'))

    def test_invalid_key_is_400(self):
        for version in ('2.1', '2.75', '2.102'):
            response = self.get('servers?sort_key=bogus', version)
            self.assertEqual(400, response.status_code, version)
            self.assertIn('bogus', response.get_data(as_text=True))

    def test_ignored_keys(self):
        newest = [self.s[m] for m in sorted(self.s, reverse=True)]
        # Nova's SERVER_LIST_IGNORE_SORT_KEY: dropped below 2.75, with
        # their direction; 400 from 2.75.
        self.assertEqual(newest, self.ids(self.get(
            'servers?sort_key=vcpus&sort_dir=asc')))
        self.assertEqual(
            self.expected(('display_name', 'asc')),
            self.ids(self.get('servers?sort_key=id&sort_dir=desc'
                              '&sort_key=display_name&sort_dir=asc')))
        self.assertEqual(400, self.get('servers?sort_key=id',
                                       '2.75').status_code)
        # locked: ignored below 2.73, a key from 2.73.
        self.assertEqual(newest, self.ids(self.get(
            'servers?sort_key=locked', '2.72')))
        self.assertEqual(
            self.expected(('locked', 'desc')),
            self.ids(self.get('servers?sort_key=locked', '2.73')))
        self.assertEqual(
            self.expected(('locked', 'asc'), ('display_name', 'asc')),
            self.pages('sort_key=locked&sort_key=display_name&sort_dir=asc&',
                       2, '2.75'))

    def test_invalid_dir_is_400(self):
        response = self.get('servers?sort_key=display_name&sort_dir=up')
        self.assertEqual(400, response.status_code)
        self.assertIn('Invalid sort_dir up', response.get_data(as_text=True))
        self.assertEqual(400, self.get(
            'servers?sort_key=display_name&sort_dir=asc&sort_dir=asc'
        ).status_code)

    def test_admin_only_keys(self):
        for key in ('host', 'node'):
            response = self.get('servers?sort_key=%s' % key, headers=ALICE)
            self.assertEqual(403, response.status_code)
            self.assertIn('Only administrators can sort servers by %s'
                          % key, response.get_data(as_text=True))
            self.assertEqual(
                self.expected((key, 'asc')),
                self.ids(self.get('servers?all_tenants=1&sort_key=%s'
                                  '&sort_dir=asc' % key, headers=ADMIN)))

    def test_keys_with_no_column_leave_the_order_to_the_rest(self):
        self.assertEqual(
            self.expected(('display_name', 'asc')),
            self.ids(self.get('servers?sort_key=hostname&sort_dir=asc'
                              '&sort_key=display_name')))


def _values(minutes):
    """Names with ties and NULLs, launch times with NULLs, two states."""
    return {'display_name': (None, 'b', 'a', 'b', None, 'c', 'a', 'b',
                             'c', None)[minutes % 10],
            'launched_at': (None if minutes % 3 == 0 else
                            T0 + datetime.timedelta(hours=minutes % 4)),
            'vm_state': states.ACTIVE if minutes % 2 else states.STOPPED,
            'locked_by': 'owner' if minutes % 5 == 0 else None}


class OneCellSortTest(SortChecks, testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.client = nm_fixtures.api_on_database(self)
        self.s, self.rows = {}, {}
        for m in range(1, 12):
            values = dict(_values(m), user_id='alice', project_id='p1',
                          host='h%d' % (m % 3), node='n%d' % (m % 4),
                          flavor=nm_fixtures.SMALL,
                          created_at=T0 + datetime.timedelta(minutes=m))
            instance = db_api.instance_create(values)
            self.s[m] = instance['uuid']
            self.rows[instance['uuid']] = values

    def get(self, path, version='2.1', headers=ALICE):
        return self.client.get('/v2.1/' + path, headers=at(version, headers))


class TwoCellSortTest(SortChecks, test_cell_lists.CellListsBase):

    def setUp(self):
        super().setUp()
        self.s, self.rows = {}, {}
        for m in range(1, 14):
            values = _values(m)
            cell = self.cell1 if m % 3 else self.cell2
            uuid = self.server(cell, m, **values)
            self.s[m] = uuid
            self.rows[uuid] = dict(
                values, host='h-' + cell['name'], node='h-' + cell['name'],
                created_at=T0 + datetime.timedelta(minutes=m))

    def get(self, path, version='2.1', headers=ALICE):
        return super().get(path, version, headers)

    def test_no_partial_records_when_sorted(self):
        self.break_cell(self.cell2)
        up = [u for m, u in self.s.items() if m % 3]
        body = self.get('servers?sort_key=display_name&sort_dir=asc',
                        '2.69').get_json()['servers']
        self.assertEqual(sorted(up), sorted(s['id'] for s in body))
        self.assertNotIn('UNKNOWN', [s.get('status') for s in body])


class ServerListFiltersTest(testtools.TestCase):
    """Nova's refusals of GET /servers[/detail]: a filter on a joined
    table or a private field at every microversion, an unknown status
    from 2.38 (nothing listed before), an unknown parameter from 2.75."""

    def setUp(self):
        super().setUp()
        self.client = nm_fixtures.api_on_database(self)
        for m, vm_state in ((1, states.ACTIVE), (2, states.STOPPED)):
            db_api.instance_create(dict(
                _values(m), user_id='alice', project_id='p1',
                vm_state=vm_state, flavor=nm_fixtures.SMALL,
                created_at=T0 + datetime.timedelta(minutes=m)))

    def get(self, query, version):
        return self.client.get('/v2.1/servers/detail?' + query,
                               headers=at(version, ALICE))

    def message(self, response):
        self.assertEqual(400, response.status_code, response.get_data())
        return response.get_json()['badRequest']['message']

    def test_joined_table_and_private_fields(self):
        for version in ('2.1', '2.75', '2.102'):
            for name in ('metadata', 'pci_devices', '_hidden'):
                self.assertEqual(
                    'Invalid filter field: %s.' % name,
                    self.message(self.get(name + '=x', version)))

    def test_status(self):
        def statuses(query, version):
            response = self.get(query, version)
            self.assertEqual(200, response.status_code, response.get_data())
            return sorted(s['status']
                          for s in response.get_json()['servers'])
        self.assertEqual(['SHUTOFF'], statuses('status=shutoff', '2.1'))
        self.assertEqual(['ACTIVE', 'SHUTOFF'],
                         statuses('status=SHUTOFF&status=ACTIVE', '2.38'))
        self.assertEqual(['SHUTOFF'], statuses('status=SHUTOFF&status=x',
                                               '2.38'))
        self.assertEqual([], statuses('status=NOPE', '2.37'))
        self.assertEqual('Invalid status value',
                         self.message(self.get('status=NOPE', '2.38')))

    def test_unknown_parameter_from_2_75(self):
        self.assertEqual(200, self.get('colour=red', '2.74').status_code)
        self.assertIn("'colour' was unexpected",
                      self.message(self.get('colour=red', '2.75')))
        # What Nova's 2.75 schema takes is still taken.
        self.assertEqual(200, self.get(
            'sort_key=display_name&locked=false&changes-before='
            '2030-01-01T00:00:00Z', '2.75').status_code)
