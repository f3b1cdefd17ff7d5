"""A private PostgreSQL cluster per test class (nova_moves.harness.
pg_cluster: initdb/pg_ctl in a temp dir, its own port), for tests that
need PostgreSQL whatever the machine's server has set up, or that stop
and restart the database."""
from nova_moves.harness import pg_cluster


class PrivatePostgres:
    """Mix into a StackTestCase (before it): the class's stack runs on a
    database in ``cls.postgres``, destroyed after the class."""

    # pg_cluster's default; a class that tests running out of
    # connections sets fewer.
    PG_MAX_CONNECTIONS = 300

    @classmethod
    def setUpClass(cls):
        if not pg_cluster.available():
            raise cls.skipException('PostgreSQL server binaries missing')
        cls.postgres = pg_cluster.PostgresCluster(
            max_connections=cls.PG_MAX_CONNECTIONS).start()
        try:
            cls.DATABASE_URL = cls.postgres.create_database('nova_moves')
            super().setUpClass()
        except Exception:
            cls.postgres.destroy()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            cls.postgres.destroy()
