"""os-host-drains through the WSGI app on a real (SQLite) database: the
request checks, one active drain per host, cancel, admin-only policy.
The conductors that run a drain are the functional test's part."""
import testtools

from nova_moves import conf
from tests.unit import fixtures as nm_fixtures

CONF = conf.CONF
ADMIN = {'X-Auth-Token': 'admin:admin'}


class HostDrainsAPITest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.client = nm_fixtures.app_client(self, 'h1', 'h2')

    def post(self, body, headers=ADMIN):
        return self.client.post('/v2.1/os-host-drains', json=body,
                                headers=headers)

    def test_create_show_list_cancel(self):
        response = self.post({'host': 'h1', 'target_hosts': ['h2']})
        self.assertEqual(202, response.status_code, response.get_json())
        drain = response.get_json()['host_drain']
        self.assertEqual(('h1', 'auto', ['h2'], 'running', False),
                         (drain['host'], drain['mode'],
                          drain['target_hosts'], drain['status'],
                          drain['force_down_if_dead']))
        self.assertEqual(0, drain['counts']['total'])
        # One active drain per host.
        self.assertEqual(409, self.post({'host': 'h1'}).status_code)
        shown = self.client.get('/v2.1/os-host-drains/%s' % drain['id'],
                                headers=ADMIN).get_json()['host_drain']
        self.assertEqual([], shown['servers'])
        listed = self.client.get('/v2.1/os-host-drains?host=h1',
                                 headers=ADMIN).get_json()['host_drains']
        self.assertEqual([drain['id']], [x['id'] for x in listed])
        self.assertNotIn('servers', listed[0])
        path = '/v2.1/os-host-drains/%s' % drain['id']
        self.assertEqual(202, self.client.delete(
            path, headers=ADMIN).status_code)
        self.assertEqual('cancelling', self.client.get(
            path, headers=ADMIN).get_json()['host_drain']['status'])
        # Cancelling again is the same answer; a new drain must wait.
        self.assertEqual(202, self.client.delete(
            path, headers=ADMIN).status_code)
        self.assertEqual(409, self.post({'host': 'h1'}).status_code)
        self.assertEqual(404, self.client.get(
            '/v2.1/os-host-drains/nope', headers=ADMIN).status_code)

    def test_bad_requests(self):
        for body, code in (({}, 400), ({'host': 'h1', 'mode': 'fast'}, 400),
                           ({'host': 'h1', 'bogus': 1}, 400),
                           ({'host': 'h1', 'target_hosts': ['h1']}, 400),
                           ({'host': 'h1', 'target_hosts': ['nowhere']},
                            400),
                           ({'host': 'nowhere'}, 404)):
            response = self.post(body)
            self.assertEqual(code, response.status_code,
                             (body, response.get_json()))

    def test_ids_parsed_like_every_numeric_id(self):
        # ASCII digits within the Integer column look up by id; anything
        # else by uuid, and 2**31 or more is no row without a query
        # (isdigit() sent '²' and 2147483648 to PostgreSQL's integer id).
        import sqlalchemy as sa
        from nova_moves.db import session as db_session
        seen = []

        def record(conn, cursor, statement, params, context, many):
            if 'host_drains' in statement:
                seen.append((statement, params))
        engine = db_session.get_engine(writer=False)
        sa.event.listen(engine, 'before_cursor_execute', record)
        self.addCleanup(sa.event.remove, engine, 'before_cursor_execute',
                        record)
        for ident, column in (('2147483648', None), ('²', 'uuid'),
                              ('٣', 'uuid'), ('9' * 23, 'uuid'),
                              ('7', 'id')):
            del seen[:]
            for method in ('get', 'delete'):
                response = getattr(self.client, method)(
                    '/v2.1/os-host-drains/' + ident, headers=ADMIN)
                self.assertEqual(404, response.status_code, ident)
            where = [st.rsplit('WHERE', 1)[-1] for st, _ in seen]
            if column is None:
                self.assertEqual([], where, ident)
            else:
                self.assertTrue(where, ident)
                self.assertTrue(all('host_drains.%s =' % column in w
                                    for w in where), (ident, where))

    def test_admin_only(self):
        user = {'X-Auth-Token': 'alice:p1'}
        self.assertEqual(403, self.post({'host': 'h1'}, user).status_code)
        self.assertEqual(403, self.client.get(
            '/v2.1/os-host-drains', headers=user).status_code)

    def test_advertised_with_the_extensions(self):
        doc = self.client.get('/v2.1/extensions',
                              headers=ADMIN).get_json()
        self.assertIn('nova_moves-host-drains',
                      [e['alias'] for e in doc['extensions']])
