"""A stack of N cells (doc/cells.md, "A stack of cells"): the API with
an API database of its own, and per cell its own database, its own
broker vhost, conductor(s), scheduler(s) and computes, each process run
with its cell's ``[database] connection`` and ``[DEFAULT]
transport_url`` (the conductors also the API database's, as Nova's
super-conductor: a cross-cell resize reaches the other cells). The
cells are made with the real ``nova-moves-manage`` commands, as an
operator does (api_db sync, db sync per cell, cell_v2 map_cell0,
create_cell, discover_hosts).

cell1 is the API's home cell: the shared nova_moves.conf names its
database and vhost (the API reads flavors and the other API-level tables
there). Every other cell has an overlay ``cellN.conf`` with its own
pair; its processes get it after the shared file. Databases: cell1 the
``database_url`` given (e.g. PostgreSQL) or SQLite, the others and
cell0 and the API database SQLite files under the work directory, or
those of ``cell_database_urls`` / ``api_database_url``.

``private_broker_cells`` / ``private_database_cells`` give the cells
named there a broker node (rabbit_cluster, one node) / a PostgreSQL
cluster (pg_cluster) of their own, started and destroyed with the stack,
so a test can kill that cell's broker or stop its database without
touching the machine's (or the other cells'). Their handles are
``cell_brokers[cell]`` / ``cell_postgres[cell]``, and the broker node is
also the process ``<cell>-rabbit1`` for the harness's kill/restart
faults. Defaults: none, every cell on the machine's RabbitMQ."""
import datetime
import os
import shutil
import subprocess
import time

import sqlalchemy as sa

from nova_moves.db import models
from nova_moves.harness import pg_cluster
from nova_moves.harness import rabbit_cluster
from nova_moves.harness import stack as nm_stack


class CellsStack(nm_stack.Stack):
    """``cells``: the number of cells; ``computes``: per cell, an int or
    a list of compute specs (as Stack's; the names must differ across
    cells), the same for every cell when one value is given."""

    def __init__(self, cells=2, computes=1, cell_database_urls=None,
                 api_database_url=None, private_broker_cells=(),
                 private_database_cells=(), **kwargs):
        specs = computes if isinstance(computes, list) and computes and \
            isinstance(computes[0], list) else [computes] * cells
        self.cell_names = ['cell%d' % (i + 1) for i in range(cells)]
        self.cell_computes = {}
        for name, spec in zip(self.cell_names, specs):
            if isinstance(spec, int):
                spec = [{'name': '%s-compute%d' % (name, i + 1)}
                        for i in range(spec)]
            self.cell_computes[name] = spec
        super().__init__(computes=[s for name in self.cell_names
                                   for s in self.cell_computes[name]],
                         **kwargs)
        state = os.path.join(self.workdir, 'state')
        self.api_database_url = api_database_url or \
            'sqlite:///%s/api.sqlite' % state
        urls = list(cell_database_urls or [])
        self.cell_database_urls = {}
        for i, name in enumerate(self.cell_names):
            url = urls[i] if i < len(urls) else None
            if i == 0:
                url = url or self.database_url or \
                    'sqlite:///%s/nova_moves.sqlite' % state
                self.database_url = url
            self.cell_database_urls[name] = url or \
                'sqlite:///%s/%s.sqlite' % (state, name)
        self.cell0_database_url = 'sqlite:///%s/cell0.sqlite' % state
        self.cell_conf = {}
        unknown = set(private_broker_cells) | set(private_database_cells)
        if unknown - set(self.cell_names):
            raise ValueError('no such cells: %s' % sorted(
                unknown - set(self.cell_names)))
        self.private_broker_cells = list(private_broker_cells)
        self.private_database_cells = list(private_database_cells)
        self.cell_brokers = {}   # cell -> rabbit_cluster.RabbitCluster
        self.cell_postgres = {}  # cell -> pg_cluster.PostgresCluster

    # -- per cell ----------------------------------------------------
    @property
    def transport_url(self):
        """The shared file's: the home cell's (its private node's when
        it has one)."""
        return self.cell_transport_url(self.cell_names[0])

    def cell_vhost(self, cell):
        return self.vhost if cell == self.cell_names[0] else \
            '%s-%s' % (self.vhost, cell)

    def cell_transport_url(self, cell):
        broker = self.cell_brokers.get(cell)
        base = broker.url if broker is not None else self.broker_url
        return base.rstrip('/') + '/' + self.cell_vhost(cell)

    def cell_broker_ctl(self, cell):
        """rabbitmqctl for ``cell``'s broker (its private node's, or the
        stack's)."""
        broker = self.cell_brokers.get(cell)
        return broker.ctl if broker is not None else self.broker_ctl

    def _start_private_backends(self):
        """The private broker nodes and databases asked for, before any
        configuration names them; each is stopped by stop(), also when
        the start fails half way."""
        for cell in self.private_broker_cells:
            broker = rabbit_cluster.RabbitCluster(1)
            # Registered before start: a failed start is still cleaned.
            self.cell_brokers[cell] = broker
            broker.start()
            # A process of the stack (backend: Stack.stop leaves it to
            # the cluster's own stop), for the kill/restart faults.
            self.processes['%s-rabbit1' % cell] = \
                rabbit_cluster.NodeProcess('%s-rabbit1' % cell,
                                           broker.nodes[0])
        for cell in self.private_database_cells:
            postgres = pg_cluster.PostgresCluster()
            self.cell_postgres[cell] = postgres
            postgres.start()
            self.cell_database_urls[cell] = postgres.create_database(
                'nova_moves_%s' % cell)
            if cell == self.cell_names[0]:
                self.database_url = self.cell_database_urls[cell]

    def _stop_private_backends(self):
        for cell, broker in list(self.cell_brokers.items()):
            self.processes.pop('%s-rabbit1' % cell, None)
            broker.stop()
        self.cell_brokers.clear()
        for postgres in self.cell_postgres.values():
            postgres.destroy()
        self.cell_postgres.clear()

    def cell_of_host(self, host):
        for cell, specs in self.cell_computes.items():
            if host in [h for s in specs for h in (s.get('hosts')
                                                   or [s['name']])]:
                return cell
        raise KeyError(host)

    def _cell_sections(self, cell):
        return {'DEFAULT': {'transport_url': self.cell_transport_url(cell)},
                'database': {'connection': self.cell_database_urls[cell]}}

    def _argv(self, binary, overlay=None):
        """The process's cell's file between the shared one and its own
        (set in _cell_process)."""
        argv = [nm_stack._script(binary), '--config-file', self.config_path]
        if getattr(self, '_cell_overlay', None):
            argv += ['--config-file', self._cell_overlay]
        if overlay:
            argv += ['--config-file', overlay]
        return argv

    def _cell_process(self, cell, name, binary, sections):
        self._cell_overlay = self.cell_conf[cell]
        try:
            return self.add_process(name, binary,
                                    self._overlay(name, sections))
        finally:
            self._cell_overlay = None

    def manage(self, *args, cell=None):
        """``nova-moves-manage`` with the API's files (or ``cell``'s)."""
        self._cell_overlay = self.cell_conf[cell] if cell else self.api_conf
        try:
            argv = self._argv('nova-moves-manage') + list(args)
        finally:
            self._cell_overlay = None
        return subprocess.run(argv, check=True, capture_output=True,
                              text=True).stdout

    # -- start -------------------------------------------------------
    def start(self, timeout=90):
        os.makedirs(self.workdir, exist_ok=True)
        self._start_private_backends()
        for cell in self.cell_names:
            ctl = self.cell_broker_ctl(cell)
            ctl('add_vhost', self.cell_vhost(cell))
            self.vhost_created = True
            ctl('set_permissions', '-p', self.cell_vhost(cell),
                self._url_user(self.cell_transport_url(cell)),
                '.*', '.*', '.*')
        self._write_config()
        self.api_conf = self._overlay('api-cells', {
            'api_database': {'connection': self.api_database_url}})
        for cell in self.cell_names:
            self.cell_conf[cell] = self._overlay(
                cell, self._cell_sections(cell))
        self.manage('api_db', 'sync')
        # cell0's schema as Nova's "db sync" of its database.
        self.cell_conf['cell0'] = self._overlay('cell0', {
            'database': {'connection': self.cell0_database_url}})
        for cell in ['cell0'] + self.cell_names:
            self.manage('db', 'sync', cell=cell)
        self.manage('cell_v2', 'map_cell0', '--database_connection',
                    self.cell0_database_url)
        for cell in self.cell_names:
            self.manage('cell_v2', 'create_cell', '--name', cell,
                        '--transport-url', self.cell_transport_url(cell),
                        '--database_connection',
                        self.cell_database_urls[cell])
        for cell in self.cell_names:
            for kind, count in (('conductor', self.conductors),
                                ('scheduler', self.schedulers)):
                for i in range(count):
                    name = '%s-%s%d' % (cell, kind, i + 1)
                    sections = {'DEFAULT': {'host': name}}
                    if kind == 'conductor':
                        # Nova's super-conductor's: the mappings, to
                        # reach the other cells (cross-cell resize).
                        sections['api_database'] = {
                            'connection': self.api_database_url}
                    self._cell_process(cell, name, 'nova-moves-' + kind,
                                       sections)
        self._cell_overlay = self.api_conf
        try:
            self.add_process('api', 'nova-moves-api', self._overlay(
                'api', {'DEFAULT': {'host': 'api'}}))
        finally:
            self._cell_overlay = None
        self.wait_until_ready(timeout, hosts=set())
        for cell in self.cell_names:
            for spec in self.cell_computes[cell]:
                self._cell_process(cell, spec['name'], 'nova-moves-compute',
                                   self._compute_sections(spec))
        self.wait_until_ready(timeout)
        self.manage('cell_v2', 'discover_hosts')
        return self

    def _compute_sections(self, spec):
        hosts = spec.get('hosts') or [spec['name']]
        compute = dict(spec.get('compute') or {})
        if len(hosts) > 1:
            compute['fake_hosts'] = ','.join(hosts)
        return {'DEFAULT': {'host': hosts[0]}, 'compute': compute}

    def _db_sync(self):
        """(The cells' databases are synced in start.)"""

    # -- readiness ---------------------------------------------------
    def services_up(self, cell):
        """{(binary, host)} of the services that reported in ``cell``'s
        database within service_down_time."""
        engine = sa.create_engine(self.cell_database_urls[cell],
                                  poolclass=sa.pool.NullPool)
        since = datetime.datetime.now(datetime.timezone.utc).replace(
            tzinfo=None) - datetime.timedelta(seconds=self.service_down_time)
        try:
            with engine.connect() as conn:
                table = models.Service.__table__
                rows = conn.execute(sa.select(
                    table.c.binary, table.c.host, table.c.updated_at,
                    table.c.created_at)).all()
        finally:
            engine.dispose()
        return {(b, h) for b, h, upd, made in rows
                if (upd or made) is not None and (upd or made) >= since}

    def wait_until_ready(self, timeout=90, hosts=None):
        deadline = time.monotonic() + timeout
        while True:
            self._check_alive()
            missing = []
            for cell in self.cell_names:
                try:
                    up = self.services_up(cell)
                except sa.exc.SQLAlchemyError:
                    up = set()
                wanted = {('nova-moves-conductor', '%s-conductor1' % cell),
                          ('nova-moves-scheduler', '%s-scheduler1' % cell)}
                if hosts is None:
                    wanted |= {('nova-moves-compute', h) for s in
                               self.cell_computes[cell]
                               for h in (s.get('hosts') or [s['name']])}
                missing += sorted(wanted - up)
            if not missing:
                try:
                    self.client().get('/flavors', expect=200)
                    return
                except Exception:
                    missing = ['api']
            if time.monotonic() > deadline:
                raise TimeoutError('cells stack not ready after %ss (%s); '
                                   'logs in %s' % (timeout, missing,
                                                   self.workdir))
            time.sleep(0.3)

    def stop(self):
        vhosts = self.vhost_created
        keep = self.keep_workdir
        self.keep_workdir = True
        try:
            super().stop()
        finally:
            self.keep_workdir = keep
        if vhosts:
            for cell in self.cell_names[1:]:
                if cell in self.cell_brokers:
                    continue  # goes with its node
                try:
                    self.broker_ctl('delete_vhost', self.cell_vhost(cell))
                except subprocess.CalledProcessError:
                    pass
        self._stop_private_backends()
        if not keep:
            shutil.rmtree(self.workdir, ignore_errors=True)
