"""Unit-test fixtures: a fresh SQLite database at head, and helpers that
create compute nodes and services the way compute agents would."""
import atexit
import os
import shutil
import tempfile

import fixtures
import sqlalchemy as sa
import testtools

from nova_moves import conf
from nova_moves import context as nm_context
from nova_moves.db import api as db_api
from nova_moves.db import migration
from nova_moves.db import session as db_session
from nova_moves import states
from tests.fixtures import rpc as fake_rpc

CONF = conf.CONF


class Database(fixtures.Fixture):
    """A temporary SQLite file at head, set as [database] connection for
    the duration of a test: a copy of one migrated once per process
    (running the migrations took 0.1-0.2 s a test, copying ~1 ms)."""

    def _setUp(self):
        path = tempfile.mkdtemp(prefix='nm-unit-')
        self.addCleanup(_rmtree, path)
        database = os.path.join(path, 'nova_moves.sqlite')
        shutil.copyfile(_migrated_template(), database)
        self.url = 'sqlite:///%s' % database
        db_api.dispose_engines()
        CONF.set_override('connection', self.url, group='database')
        self.addCleanup(CONF.clear_override, 'connection', group='database')
        self.addCleanup(db_api.dispose_engines)


_TEMPLATE = {}


def _migrated_template():
    """This process's SQLite file migrated to head (built on first use,
    removed at exit); closed, so the copy holds everything (WAL
    checkpointed by the last connection's close)."""
    path = _TEMPLATE.get('path')
    if path is None or not os.path.exists(path):
        directory = tempfile.mkdtemp(prefix='nm-unit-template-')
        atexit.register(_rmtree, directory)
        path = os.path.join(directory, 'head.sqlite')
        db_api.dispose_engines()
        CONF.set_override('connection', 'sqlite:///%s' % path,
                          group='database')
        try:
            migration.db_sync()
        finally:
            db_api.dispose_engines()
            CONF.clear_override('connection', group='database')
        _TEMPLATE['path'] = path
    return path


class Statements(fixtures.Fixture):
    """Every statement the (writer) engine runs from now on, as
    (SQL, parameters): what a change of a step's SQL is tested by."""

    def _setUp(self):
        self.seen = []
        engine = db_session.get_engine()
        sa.event.listen(engine, 'before_cursor_execute', self._record)
        self.addCleanup(sa.event.remove, engine, 'before_cursor_execute',
                        self._record)

    def _record(self, conn, cursor, statement, parameters, context, many):
        self.seen.append((statement, parameters))

    def starting(self, prefix):
        """Those whose SQL starts with ``prefix`` (case ignored)."""
        return [(statement, parameters) for statement, parameters in self.seen
                if statement.lstrip().upper().startswith(prefix.upper())]


class Override(fixtures.Fixture):
    """One config option set for the duration of a test."""

    def __init__(self, name, value, group=None):
        super().__init__()
        self.args = name, value, group

    def _setUp(self):
        name, value, group = self.args
        CONF.set_override(name, value, group=group)
        self.addCleanup(CONF.clear_override, name, group=group)


class FakeHosts(fixtures.Fixture):
    """Fake hypervisors for in-process compute managers: their state
    files in a temporary state_path, their operations instant."""

    def _setUp(self):
        path = tempfile.mkdtemp(prefix='nm-unit-state-')
        self.addCleanup(_rmtree, path)
        self.useFixture(Override('state_path', path))
        self.useFixture(Override('default_operation_seconds', 0.0,
                                 'compute'))


def api_client(test):
    """The API app's Flask test client with noauth (the product's default
    is keystone), its requests arriving on 127.0.0.1 as a real server's
    would (noauth refuses a request whose local address is unknown)."""
    from nova_moves.api import app as api_app
    test.useFixture(Override('auth_strategy', 'noauth', 'api'))
    client = api_app.create_app().test_client()
    client.environ_base = dict(client.environ_base or {},
                               SERVER_ADDR='127.0.0.1')
    return client


def api_on_database(test):
    """api_client on a fresh SQLite database at head, with RPC on
    oslo.messaging's fake driver: a whole API for one test."""
    CONF([], project='nova_moves', default_config_files=[])
    test.useFixture(Database())
    test.useFixture(fake_rpc.FakeTransport())
    return api_client(test)


def _rmtree(path):
    shutil.rmtree(path, ignore_errors=True)


def node(host, vcpus=4, memory_mb=4096, disk_gb=100, disk_provider='root',
         reserved_host_memory_mb=0, cpu_ratio=1.0, ram_ratio=1.0,
         disk_ratio=1.0):
    return db_api.compute_node_sync({
        'host': host, 'hypervisor_type': 'QEMU', 'cpu_model': 'Haswell',
        'host_ip': '127.0.0.1', 'vcpus': vcpus, 'memory_mb': memory_mb,
        'disk_gb': disk_gb,
        'reserved_host_memory_mb': reserved_host_memory_mb,
        'cpu_allocation_ratio': cpu_ratio, 'ram_allocation_ratio': ram_ratio,
        'disk_allocation_ratio': disk_ratio, 'disk_provider': disk_provider})


def compute(host, zone='nova', **kwargs):
    """A compute host: its provider tree and a live service record."""
    result = node(host, **kwargs)
    db_api.service_report(host, 'nova-moves-compute', 'compute', zone)
    return result


def providers():
    """{provider name: uuid}"""
    return {name: entry['uuid']
            for name, entry in db_api.provider_usages().items()}


def flavor(vcpus=1, memory_mb=512, root_gb=1, name=None):
    return db_api.flavor_create({
        'name': name or 'f-%d-%d-%d' % (vcpus, memory_mb, root_gb),
        'vcpus': vcpus, 'memory_mb': memory_mb, 'root_gb': root_gb,
        'ephemeral_gb': 0, 'swap': 0, 'rxtx_factor': 1.0,
        'is_public': True})


SMALL = {'flavorid': 's', 'name': 'small', 'vcpus': 1, 'memory_mb': 512,
         'root_gb': 1}


class TwoHostsTestCase(testtools.TestCase):
    """A fresh database with compute nodes h1 and h2 (``self.rps``: their
    providers), an admin context, and SMALL servers on h1 to move to h2
    (the conductor's sweep and undo tests)."""

    def setUp(self):
        super().setUp()
        self.useFixture(Database())
        node('h1')
        node('h2')
        self.rps = providers()
        self.ctxt = nm_context.get_admin_context()

    def boot_on_h1(self, task_state):
        """An ACTIVE server on h1 holding its VCPU there; its uuid."""
        server = db_api.instance_create({
            'display_name': 'vm', 'project_id': 'p', 'user_id': 'u',
            'host': 'h1', 'node': 'h1', 'flavor': SMALL,
            'vm_state': states.ACTIVE, 'power_state': 1,
            'task_state': task_state})
        db_api.allocations_replace(server['uuid'],
                                   {self.rps['h1']: {'VCPU': 1}})
        return server['uuid']

    def migrate_to_h2(self, uuid):
        """A cold migration of ``uuid`` to h2, pre-migrating."""
        return db_api.migration_start(uuid, {
            'instance_uuid': uuid, 'migration_type': states.MIGRATION,
            'status': states.M_PRE_MIGRATING, 'source_compute': 'h1',
            'source_node': 'h1', 'dest_compute': 'h2', 'dest_node': 'h2',
            'old_flavor_id': 's', 'new_flavor_id': 's'}, SMALL, SMALL)

    def source_done(self, migration):
        """The server on h2 and its migration post-migrating, as the
        source's resize_instance leaves them."""
        db_api.move_advance(
            migration['uuid'],
            status=[states.M_PRE_MIGRATING, states.M_POST_MIGRATING],
            task_state=[states.RESIZE_PREP, states.RESIZE_MIGRATED],
            instance_values={'host': 'h2', 'node': 'h2'})


class RecordingCompute:
    """A compute rpcapi that sends nothing: it records (method, host)
    and answers the status calls with ``running``."""

    def __init__(self, running=False):
        self.sent = []
        self.running = running

    def __getattr__(self, name):
        def record(ctxt, host, *args, **kwargs):
            self.sent.append((name, host))
        return record

    def live_migration_status(self, ctxt, host, migration_uuid,
                              timeout=None):
        self.sent.append(('live_migration_status', host))
        return self.running

    def move_step_status(self, ctxt, host, migration_uuid, timeout=None):
        self.sent.append(('move_step_status', host))
        return self.running


def app_client(test, *hosts):
    """The WSGI app's test client on a fresh SQLite database with a
    compute service per host, for ``test``."""
    CONF([], project='nova_moves', default_config_files=[])
    test.useFixture(Database())
    test.useFixture(fake_rpc.FakeTransport())
    for host in hosts:
        compute(host)
    return api_client(test)
