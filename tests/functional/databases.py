"""Fresh PostgreSQL and MySQL databases for functional tests: the URLs
of the openstack_citest user and a base class whose stack runs on a
database of its own (tests/functional/test_databases.py and the modules
that run their scenarios on both databases)."""
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
