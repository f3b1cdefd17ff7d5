"""The stack on a private PostgreSQL cluster that is stopped (immediate,
like a crash) while cold migrations are in flight and started again a few
seconds later: the API answers 503 with Retry-After while it is down (not
500), the services ride it out with oslo.db's retry, and every accepted
move completes.

NOVA_MOVES_DB_OUTAGE_MOVES (default 8) and NOVA_MOVES_DB_OUTAGE_SECONDS
(default 8) size the burst and the outage."""
import concurrent.futures
import os
import time

from tests.functional import base
from tests.functional import private_postgres

MOVES = int(os.environ.get('NOVA_MOVES_DB_OUTAGE_MOVES', '8'))
DOWN_FOR = float(os.environ.get('NOVA_MOVES_DB_OUTAGE_SECONDS', '8'))


class DatabaseOutageTest(private_postgres.PrivatePostgres,
                         base.StackTestCase):
    COMPUTES = 2
    EXTRA_CONF = {
        'DEFAULT': {'rpc_response_timeout': 60, 'service_down_time': 60,
                    'debug': 'false'},
        # Reconnect soon after the database is back.
        'database': {'db_retry_interval': 1, 'db_max_retry_interval': 2},
        # Long enough that every move is mid-flight when the database
        # goes away.
        'compute': {'operation_seconds': 'migrate_disk:3'},
        # More servers than the default per-project quota of 10.
        'quota': {'instances': -1, 'cores': -1, 'ram': -1},
    }

    def _migrate(self, server_id):
        return self.admin.action(server_id, {'migrate': None}).status_code

    def test_database_restarted_mid_burst(self):
        flavor = self.flavor('outage')
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            servers = list(pool.map(
                lambda i: self.admin.boot('out%d' % i, flavor['id'],
                                          timeout=120), range(MOVES + 1)))
        late, servers = servers[-1], servers[:-1]
        ids = [s['id'] for s in servers]
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            codes = list(pool.map(self._migrate, ids))
        self.assertEqual([202] * MOVES, codes)

        self.postgres.stop('immediate')
        down_at = time.monotonic()
        try:
            listing = self.admin.get('/servers')
            refused = self.admin.action(late['id'], {'migrate': None})
            while time.monotonic() - down_at < DOWN_FOR:
                time.sleep(0.5)
        finally:
            self.postgres.start()
        for response in (listing, refused):
            self.assertEqual(503, response.status_code, response.text)
            self.assertTrue(int(response.headers['Retry-After']) >= 1)
            self.assertIn('database is unavailable',
                          response.json()['serviceUnavailable']['message'])

        # Nothing was lost or rolled back: every accepted move finishes.
        for server_id in ids:
            self.admin.wait_for_status(server_id, 'VERIFY_RESIZE',
                                       timeout=180)
        # The refused request changed nothing and can simply be sent again.
        shown = self.admin.server(late['id'], version='2.47')
        self.assertEqual(('ACTIVE', None),
                         (shown['status'], shown['OS-EXT-STS:task_state']))
        self.assertEqual(202, self._migrate(late['id']))
        self.admin.wait_for_status(late['id'], 'VERIFY_RESIZE', timeout=120)
        for server_id in ids + [late['id']]:
            self.admin.action(server_id, {'confirmResize': None},
                              expect=204)
        for server_id in ids + [late['id']]:
            self.admin.wait_for_status(server_id, 'ACTIVE', timeout=60)
        # Every service reports again.
        self.stack.wait_until_ready(60)
