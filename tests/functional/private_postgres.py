"""A private PostgreSQL cluster per test class (nova_moves.harness.
pg_cluster: initdb/pg_ctl in a temp dir, its own port), for tests that
need PostgreSQL whatever the machine's server has set up, or that stop
and restart the database."""
from nova_moves.harness import pg_cluster
from tests.functional import private_backend


class PrivatePostgres(private_backend.PrivateBackend):
    """Mix into a StackTestCase (before it): the class's stack runs on a
    database in ``cls.postgres``, destroyed after the class."""

    # pg_cluster's default; a class that tests running out of
    # connections sets fewer.
    PG_MAX_CONNECTIONS = 300

    @classmethod
    def setUpClass(cls):
        cls.start_backend(
            'postgres', cls._start_postgres,
            lambda cluster, failed: cluster.destroy(),
            unavailable=None if pg_cluster.available() else
            'PostgreSQL server binaries missing')
        super().setUpClass()

    @classmethod
    def _start_postgres(cls):
        cluster = pg_cluster.PostgresCluster(
            max_connections=cls.PG_MAX_CONNECTIONS).start()
        try:
            cls.DATABASE_URL = cluster.create_database('nova_moves')
        except BaseException:
            cluster.destroy()
            raise
        return cluster
