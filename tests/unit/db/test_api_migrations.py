"""The API database's alembic tree (cells v2 mappings) builds exactly
its models' schema, on SQLite and, opportunistically, MySQL and
PostgreSQL; it shares a database with the cell's tree without touching
it (its own version table)."""
from oslo_db.sqlalchemy import test_fixtures
from oslo_db.sqlalchemy import test_migrations
import testtools

from nova_moves.db import api_migration
from nova_moves.db import api_models
from nova_moves.db import models
from tests.unit.db import test_migrations as cell_migrations


class _ApiMigrationsMixin(cell_migrations.MigrationsBase):

    METADATA = api_models.API_BASE.metadata
    VERSION_TABLE = api_migration.VERSION_TABLE

    def migrate(self, engine):
        with engine.begin() as connection:
            api_migration.upgrade(connection)

    def head(self):
        return api_migration.head_version()

    def current(self, connection):
        return api_migration.db_version(connection)

    def test_shares_a_database_with_the_cell_tree(self):
        """One-cell deployment: both trees in one database, each at its
        own head, neither's tables named by the other."""
        cell_migrations.upgrade(self.engine)
        self.migrate(self.engine)
        cell_test = cell_migrations.MigrationsBase
        with self.engine.connect() as connection:
            self.assertEqual(self.head(), self.current(connection))
            self.assertEqual(cell_test.head(self),
                             cell_test.current(self, connection))
        self.assertFalse(set(self.METADATA.tables) &
                         set(models.BASE.metadata.tables))

    def test_unique_instance_mapping(self):
        self.assertUnique(api_models.InstanceMapping.__table__, {
            'instance_uuid': 'i-1', 'project_id': 'p',
            'created_at': models.utcnow()})


class SQLiteApiMigrationsTest(_ApiMigrationsMixin,
                              test_migrations.ModelsMigrationsSync,
                              test_fixtures.OpportunisticDBTestMixin,
                              testtools.TestCase):
    FIXTURE = test_fixtures.OpportunisticDbFixture


class MySQLApiMigrationsTest(_ApiMigrationsMixin,
                             test_migrations.ModelsMigrationsSync,
                             test_fixtures.OpportunisticDBTestMixin,
                             testtools.TestCase):
    FIXTURE = test_fixtures.MySQLOpportunisticFixture


class PostgreSQLApiMigrationsTest(_ApiMigrationsMixin,
                                  test_migrations.ModelsMigrationsSync,
                                  test_fixtures.OpportunisticDBTestMixin,
                                  testtools.TestCase):
    FIXTURE = test_fixtures.PostgresqlOpportunisticFixture
