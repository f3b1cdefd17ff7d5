"""The alembic migrations build exactly the models' schema, on SQLite and,
opportunistically, on MySQL (PyMySQL) and PostgreSQL (psycopg2) with the
openstack_citest user and database (tools/test-setup.sh creates them; the
tests skip when the server is unreachable)."""
from alembic import command
from alembic import migration as alembic_migration
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import test_fixtures
from oslo_db.sqlalchemy import test_migrations
import sqlalchemy as sa
import testtools

from nova_moves.db import migration
from nova_moves.db import models


def upgrade(engine, revision='head'):
    with engine.begin() as connection:
        config = migration._config()
        config.attributes['connection'] = connection
        command.upgrade(config, revision)


class MigrationsBase:
    """What every alembic tree (the cell's here, the API database's in
    test_api_migrations) is checked for, on the opportunistic database."""

    METADATA = models.BASE.metadata
    VERSION_TABLE = 'alembic_version'

    def setUp(self):
        super().setUp()
        # The opportunistic fixture points oslo.db's global enginefacade at
        # a fresh database of the backend under test.
        self.engine = enginefacade.writer.get_engine()

    def migrate(self, engine):
        upgrade(engine)

    def head(self):
        return migration.head_version()

    def current(self, connection):
        return alembic_migration.MigrationContext.configure(
            connection).get_current_revision()

    # ModelsMigrationsSync hooks
    def db_sync(self, engine):
        self.migrate(engine)

    def get_engine(self):
        return self.engine

    def get_metadata(self):
        return self.METADATA

    def include_object(self, object_, name, type_, reflected, compare_to):
        return not (type_ == 'table' and name == self.VERSION_TABLE)

    # our own checks
    def test_upgrade_reaches_head_and_is_idempotent(self):
        self.migrate(self.engine)
        self.migrate(self.engine)
        with self.engine.connect() as connection:
            self.assertEqual(self.head(), self.current(connection))
        tables = set(sa.inspect(self.engine).get_table_names())
        self.assertLessEqual(set(self.METADATA.tables), tables)

    def assertUnique(self, table, row):
        """A second ``row`` is refused, translated by oslo.db."""
        self.migrate(self.engine)
        with self.engine.begin() as connection:
            connection.execute(table.insert().values(**row))
        with testtools.ExpectedException(db_exc.DBDuplicateEntry):
            with self.engine.begin() as connection:
                connection.execute(table.insert().values(**row))


class _MigrationsMixin(MigrationsBase):

    def test_unique_constraints_hold(self):
        self.assertUnique(models.BASE.metadata.tables['migrations'], {
            'uuid': 'u-1', 'instance_uuid': 'i-1',
            'migration_type': 'migration', 'status': 'accepted',
            'hidden': False, 'deleted': 0})


class SQLiteMigrationsTest(_MigrationsMixin,
                           test_migrations.ModelsMigrationsSync,
                           test_fixtures.OpportunisticDBTestMixin,
                           testtools.TestCase):
    FIXTURE = test_fixtures.OpportunisticDbFixture


class MySQLMigrationsTest(_MigrationsMixin,
                          test_migrations.ModelsMigrationsSync,
                          test_fixtures.OpportunisticDBTestMixin,
                          testtools.TestCase):
    FIXTURE = test_fixtures.MySQLOpportunisticFixture


class PostgreSQLMigrationsTest(_MigrationsMixin,
                               test_migrations.ModelsMigrationsSync,
                               test_fixtures.OpportunisticDBTestMixin,
                               testtools.TestCase):
    FIXTURE = test_fixtures.PostgresqlOpportunisticFixture
