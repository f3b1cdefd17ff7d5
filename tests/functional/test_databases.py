"""The real services on MySQL (PyMySQL) and PostgreSQL (psycopg2): each
class gets a fresh database as the openstack_citest user (created by
tools/test-setup.sh) and skips when the server is unreachable."""
import concurrent.futures
import os
import subprocess
import sys
import uuid

import sqlalchemy as sa

from tests.functional import base
from tests.functional import private_backend

CITEST = 'openstack_citest'


PG_ADMIN_URL = ('postgresql+psycopg2://%s:%s@127.0.0.1/%s'
                % (CITEST, CITEST, CITEST))
PG_URL_FORMAT = ('postgresql+psycopg2://%s:%s@127.0.0.1/%%s'
                 % (CITEST, CITEST))
MYSQL_ADMIN_URL = ('mysql+pymysql://%s:%s@127.0.0.1/%s'
                   % (CITEST, CITEST, CITEST))
MYSQL_URL_FORMAT = ('mysql+pymysql://%s:%s@127.0.0.1/%%s?charset=utf8mb4'
                    % (CITEST, CITEST))


class FreshDatabase(private_backend.PrivateBackend, base.StackTestCase):
    """A stack on a database of its own, created and dropped per class
    (no tests here: other modules combine it with theirs)."""

    ADMIN_URL = None   # where CREATE DATABASE runs
    URL_FORMAT = None  # % database name

    @classmethod
    def setUpClass(cls):
        cls.start_backend('database', cls._create_database,
                          lambda name, failed: cls._drop_database(name))
        cls.DATABASE_URL = cls.URL_FORMAT % cls.database
        super().setUpClass()

    @classmethod
    def _create_database(cls):
        try:
            return create_database(cls.ADMIN_URL)
        except Exception as exc:
            raise cls.skipException('%s unavailable: %s' % (
                cls.__name__, exc))

    @classmethod
    def _drop_database(cls, name):
        drop_database(cls.ADMIN_URL, name)


def create_database(admin_url, prefix='nm_func'):
    """A fresh database on the server of ``admin_url``: its name."""
    name = '%s_%s' % (prefix, uuid.uuid4().hex[:10])
    engine = sa.create_engine(admin_url, isolation_level='AUTOCOMMIT')
    try:
        with engine.connect() as connection:
            connection.execute(sa.text('CREATE DATABASE %s' % name))
    finally:
        engine.dispose()
    return name


def drop_database(admin_url, name):
    engine = sa.create_engine(admin_url, isolation_level='AUTOCOMMIT')
    try:
        with engine.connect() as connection:
            connection.execute(sa.text('DROP DATABASE IF EXISTS %s' % name))
    finally:
        engine.dispose()


class _DatabaseStackTest(FreshDatabase):

    COMPUTES = 2

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
