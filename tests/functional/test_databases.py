"""The real services on MySQL (PyMySQL) and PostgreSQL (psycopg2): each
class gets a fresh database as the openstack_citest user (created by
tools/test-setup.sh) and skips when the server is unreachable."""
import concurrent.futures
import os
import subprocess
import sys

from tests.functional.databases import (
    FreshDatabase, MYSQL_ADMIN_URL, MYSQL_URL_FORMAT, PG_ADMIN_URL,
    PG_URL_FORMAT)


class _DatabaseStackTest(FreshDatabase):

    COMPUTES = 2
    # Room for a 64 GiB / 1 TiB server (test_live_migrate_a_64_gib_server).
    EXTRA_CONF = {'compute': {'memory_mb': 131072, 'disk_gb': 2048}}

    def test_live_migrate_a_64_gib_server(self):
        """A migration's byte counters hold a 64 GiB / 1 TiB server: as
        32-bit columns they overflowed on these backends
        (NumericValueOutOfRange, MySQL 1264) at 2 GiB, and the migration
        went to error."""
        flavor = self.flavor('huge', ram=65536, disk=1024)
        server = self.admin.boot('huge', flavor['id'], host='compute1')
        self.admin.set_faults('compute1', [], {'live_migration': 3})
        self.addCleanup(self.admin.set_faults, 'compute1', [], {})
        self.admin.action(server['id'], {'os-migrateLive': {
            'host': 'compute2', 'block_migration': True}}, version='2.30',
            expect=202)
        path = '/servers/%s/migrations' % server['id']

        def progressing():
            for m in self.admin.get(path, version='2.80',
                                    expect=200).json()['migrations']:
                if m['memory_processed_bytes']:
                    return m
            return None
        running = self.admin.wait_for(progressing, timeout=60,
                                      what='progress of the transfer')
        self.assertEqual(64 * 1024 ** 3, running['memory_total_bytes'])
        self.assertEqual(1024 ** 4, running['disk_total_bytes'])
        self.assertEqual(running['memory_total_bytes'],
                         running['memory_processed_bytes'] +
                         running['memory_remaining_bytes'])
        done = self.admin.wait_for(lambda: next((
            m for m in self.admin.migrations(instance_uuid=server['id'])
            if m['status'] in ('completed', 'error', 'failed')), None),
            timeout=60, what='the live migration to end')
        self.assertEqual('completed', done['status'])
        self.assertEqual('compute2', self.admin.server(server['id'])[
            'OS-EXT-SRV-ATTR:host'])
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_boot_read_back_and_delete(self):
        server = self.boot('db-vm')
        self.assertIn(server['OS-EXT-SRV-ATTR:host'],
                      self.stack.compute_hosts())
        request_id = self.admin.actions(server['id'])[0]['request_id']
        # An event's end is written after the server shows ACTIVE (and, on
        # MySQL, may be re-run after an InnoDB deadlock): wait for it.
        def finished():
            detail = self.admin.action_detail(server['id'], request_id)
            return detail if all(e['result'] for e in detail['events']) \
                else None

        events = self.admin.wait_for(finished, timeout=30,
                                     what='events finished')
        self.assertEqual({'Success'}, {e['result'] for e in
                                       events['events']})
        self.assertIn(server['id'], self.admin.placement()['allocations'])
        self.admin.delete('/servers/%s' % server['id'], expect=204)
        self.assertNotIn(server['id'], self.admin.placement()['allocations'])

    def test_concurrent_boots_claim_exactly(self):
        """Claims race on the provider generation compare-and-swap; under
        the backend's own isolation level none may be lost or doubled."""
        flavor = self.flavor('conc', ram=1024)
        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            servers = list(pool.map(
                lambda i: self.admin.boot('c%d' % i, flavor['id'],
                                          timeout=120), range(6)))
        self.assertEqual(['ACTIVE'] * 6, [s['status'] for s in servers])
        usages = self.admin.placement()['resource_providers']
        used = sum(entry['usages'].get('MEMORY_MB', 0)
                   for entry in usages.values())
        self.assertEqual(6 * 1024, used)
        for server in servers:
            self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_manage_status_check(self):
        manage = os.path.join(os.path.dirname(sys.executable),
                              'nova-moves-manage')
        proc = subprocess.run([manage, '--config-file',
                               self.stack.config_path, 'status', 'check'],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(0, proc.returncode, proc.stdout + proc.stderr)


class PostgreSQLStackTest(_DatabaseStackTest):
    ADMIN_URL = PG_ADMIN_URL
    URL_FORMAT = PG_URL_FORMAT


class MySQLStackTest(_DatabaseStackTest):
    ADMIN_URL = MYSQL_ADMIN_URL
    URL_FORMAT = MYSQL_URL_FORMAT


def load_tests(loader, tests, pattern):
    # The abstract base has no database; never run it on its own.
    suite = loader.suiteClass()
    for cls in (PostgreSQLStackTest, MySQLStackTest):
        suite.addTests(loader.loadTestsFromTestCase(cls))
    return suite
