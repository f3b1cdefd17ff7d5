"""Database connections recover in every process. On a private
PostgreSQL with a small max_connections: after a burst that opens more
connections than the server allows, every process gives back the ones it
no longer uses ([database] idle_connection_timeout), so an API worker
that lost all of its own answers 200 on its next request instead of 503
for minutes; and after a database restart, the next request on a
keep-alive connection and fresh ones all answer 200 (the pool pings a
connection before use and reopens it)."""
import concurrent.futures
import time

import psycopg2
import requests

from tests.functional import base
from tests.functional import private_postgres

IDLE = 4  # [database] idle_connection_timeout in this test


class DatabaseConnectionsTest(private_postgres.PrivatePostgres,
                              base.StackTestCase):
    COMPUTES = 1
    PG_MAX_CONNECTIONS = 24
    EXTRA_CONF = {'DEFAULT': {'debug': 'false'},
                  'api': {'workers': 2, 'threads': 16},
                  'database': {'idle_connection_timeout': IDLE}}

    def connections(self):
        conn = psycopg2.connect(self.postgres.url('postgres').replace(
            'postgresql+psycopg2', 'postgresql'))
        try:
            with conn.cursor() as cursor:
                cursor.execute("SELECT count(*) FROM pg_stat_activity "
                               "WHERE datname = 'nova_moves'")
                return cursor.fetchone()[0]
        finally:
            conn.close()

    def fresh_requests(self, count=16):
        """Status codes of ``count`` requests, each on a new connection
        (so both API workers get some)."""
        def one(_):
            return requests.get(
                self.stack.endpoint + '/servers',
                headers={'X-Auth-Token': self.stack.admin_token,
                         'Connection': 'close'}, timeout=60).status_code
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            return list(pool.map(one, range(count)))

    def test_idle_worker_answers_after_a_burst(self):
        flavor = self.flavor('burst')
        self.admin.get('/servers', expect=200)

        def hit(i):
            if i % 4 == 0:
                return self.admin.post('/servers', {'server': {
                    'name': 'b%d' % i, 'flavorRef': flavor['id'],
                    'imageRef': 'fake', 'networks': 'none'}}).status_code
            return requests.get(
                self.stack.endpoint + '/servers/detail',
                headers={'X-Auth-Token': self.stack.admin_token},
                timeout=60).status_code
        with concurrent.futures.ThreadPoolExecutor(40) as pool:
            codes = list(pool.map(hit, range(160)))
        self.addDetail('burst-codes', __import__(
            'testtools').content.text_content(str(sorted(set(codes)))))
        # Let the boots settle (a 503 while they run is fine: the
        # conductor may hold every connection the server allows).
        def settled():
            response = self.admin.get('/servers/detail')
            return response.status_code == 200 and all(
                s['status'] in ('ACTIVE', 'ERROR')
                for s in response.json()['servers'])
        self.admin.wait_for(settled, timeout=180, interval=1,
                            what='boots settled')
        time.sleep(IDLE + 3)
        self.assertEqual(200, self.admin.get('/servers').status_code)
        self.assertEqual([200] * 16, self.fresh_requests())
        # Idle processes hold about one connection each (heartbeats):
        # counted once the 16 requests' connections have been idle for
        # the timeout (right after them the API workers still hold what
        # the 16 concurrent requests opened).
        time.sleep(IDLE + 2)
        self.assertLessEqual(self.connections(), 8)
        for server in self.admin.get('/servers', expect=200).json()[
                'servers']:
            self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_next_request_after_a_database_restart(self):
        self.assertEqual([200] * 16, self.fresh_requests())
        self.admin.get('/servers', expect=200)
        self.postgres.restart(down_for=1)
        # The keep-alive client's very next request, then fresh ones.
        self.assertEqual(200, self.admin.get('/servers').status_code)
        self.assertEqual([200] * 16, self.fresh_requests())
        self.stack.wait_until_ready(60)
