"""What the two-cell functional tests share (test_cells_routing,
test_cells_cross_cell, test_cells_qemu): a CellsStack started (its work
directory kept when the start fails), each process's log attached to a
failed test, a server booted and deleted through the API, and reads
of a server's rows, allocations and migrations in one cell's database
(``cls.engines``: cell name -> SQLAlchemy engine)."""
import sqlalchemy as sa
import testtools
import testtools.content

from nova_moves.db import models
from tests.functional import databases

INSTANCES = models.Instance.__table__
ALLOCATIONS = models.Allocation.__table__
MIGRATIONS = models.Migration.__table__


def start(stack):
    try:
        stack.start()
    except Exception:
        stack.keep_workdir = True
        stack.stop()
        raise
    return stack


class CellReads:
    """A test case mixin; ``self.stack`` and ``self.engines`` set by the
    class."""
    LOG_TAIL = 6000

    def setUp(self):
        super().setUp()
        self.attach_logs_on_failure()

    @classmethod
    def tearDownClass(cls):
        cls.stop_cells()
        super().tearDownClass()

    @classmethod
    def stop_cells(cls):
        """The class's engines disposed and its stack stopped (also when
        its setUpClass failed part way); a class adds its own clean-up."""
        for engine in cls.__dict__.get('engines', {}).values():
            engine.dispose()
        if 'stack' in cls.__dict__:
            cls.stack.stop()

    def attach_logs_on_failure(self):
        self.addOnException(self._attach_logs)

    def _attach_logs(self, exc_info):
        for name in self.stack.processes:
            try:
                tail = self.stack.log(name)[-self.LOG_TAIL:]
            except OSError:
                continue
            self.addDetail('log-' + name,
                           testtools.content.text_content(tail))

    # -- servers through the API (``self.admin``) ------------------------
    BOOT_HOST = 'cell1-compute1'

    def boot(self, name, **kwargs):
        """An ACTIVE server on BOOT_HOST, deleted after the test."""
        server = self.admin.boot(name, self.small['id'], host=self.BOOT_HOST,
                                 **kwargs)
        self.assertEqual('ACTIVE', server['status'], server)
        self.addCleanup(self.delete_server, server['id'])
        return server['id']

    def delete_server(self, uuid):
        self.admin.delete('/servers/%s' % uuid)
        self.admin.wait_for(
            lambda: self.admin.get('/servers/%s' % uuid).status_code == 404,
            timeout=60, what='%s deleted' % uuid)

    def row(self, cell, uuid):
        with self.engines[cell].connect() as conn:
            row = conn.execute(sa.select(INSTANCES).where(
                INSTANCES.c.uuid == uuid)).first()
        return None if row is None else row._mapping

    def allocations(self, cell, consumer):
        with self.engines[cell].connect() as conn:
            rows = conn.execute(sa.select(
                ALLOCATIONS.c.resource_class,
                sa.func.sum(ALLOCATIONS.c.used)).where(
                    ALLOCATIONS.c.consumer_id == consumer).group_by(
                        ALLOCATIONS.c.resource_class)).all()
        return {rc: int(used) for rc, used in rows}

    def migrations(self, cell, uuid):
        with self.engines[cell].connect() as conn:
            return [r._mapping for r in conn.execute(sa.select(
                MIGRATIONS).where(MIGRATIONS.c.instance_uuid == uuid)
                .order_by(MIGRATIONS.c.id))]


class PostgresCell1:
    """A mixin of a test class whose ``cell1_database`` gives cell1 a
    PostgreSQL database of its own (dropped after the class; the test
    skipped when PostgreSQL cannot be reached)."""
    PG_PREFIX = 'nm_cells'

    @classmethod
    def cell1_database(cls):
        try:
            cls.pg_name = databases.create_database(
                databases.PG_ADMIN_URL, prefix=cls.PG_PREFIX)
        except Exception as exc:
            raise testtools.TestCase.skipException(
                'PostgreSQL unavailable: %s' % exc)
        return databases.PG_URL_FORMAT % cls.pg_name

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            databases.drop_database(databases.PG_ADMIN_URL, cls.pg_name)
