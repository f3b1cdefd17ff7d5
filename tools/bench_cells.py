#!/usr/bin/env python3
"""Benchmark (not a test): the API's lists and the scheduler with many
cells, in process on SQLite: --cells cells (default 10) of --hosts fake
hosts each (default 1,000; providers, inventories and compute services
as the agents report them) and --servers servers per cell (default
1,000; 10,000 in all), an API database holding the cell, host and
instance mappings. Prints, p50/p99 over --requests requests each:

- the API's GET /servers/detail and GET /servers (limit 1000, all
  tenants, as admin, in Nova's default order; one project's servers),
  and a second page through a marker in another cell;
- SchedulerManager.select_destinations in one cell of --hosts hosts
  (each cell's scheduler sees its own cell; doc/cells.md).

    PYTHONPATH=. python tools/bench_cells.py [--cells 10] [--hosts 1000]
        [--servers 1000] [--requests 20] [--workdir DIR]

--workdir keeps the populated databases for the next run (10 x 1,000
hosts take minutes to populate); they are reused while the schemas are
the same."""
import argparse
import datetime
import json
import os
import shutil
import sys
import tempfile
import time
import uuid

import sqlalchemy as sa

import bench_scheduler
from nova_moves import cells
from nova_moves import conf
from nova_moves import context as nm_context
from nova_moves.db import api as db_api
from nova_moves.db import api_migration
from nova_moves.db import api_models
from nova_moves.db import mappings
from nova_moves.db import migration
from nova_moves.db import models
from nova_moves.scheduler import manager as scheduler_manager

CONF = conf.CONF
PROJECTS = 20


def _servers(url, count, cell_index):
    """``count`` ACTIVE servers straight into a cell's database, spread
    over its hosts and PROJECTS projects; returns (uuid, project)."""
    created = datetime.datetime(2026, 1, 1)
    rows = []
    for i in range(count):
        rows.append({
            'uuid': str(uuid.uuid4()), 'user_id': 'u%d' % (i % PROJECTS),
            'project_id': 'p%d' % (i % PROJECTS),
            'display_name': 'c%02d-s%05d' % (cell_index, i),
            'host': 'c%02d-%05d' % (cell_index, i % 50),
            'node': 'c%02d-%05d' % (cell_index, i % 50),
            'vm_state': 'active', 'power_state': 1, 'progress': 0,
            'flavor': json.dumps({'id': 1, 'name': 'bench', 'vcpus': 1,
                                  'memory_mb': 512, 'root_gb': 1}),
            'deleted': 0, 'auto_disk_config': False,
            'created_at': created + datetime.timedelta(seconds=i)})
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(models.Instance.__table__.insert(), rows)
    finally:
        engine.dispose()
    return [(r['uuid'], r['project_id'], r['user_id']) for r in rows]


def _hosts(cell, count, index):
    with cells.target(cell):
        for i in range(count):
            db_api.compute_node_sync(_node('c%02d-%05d' % (index, i)))
            db_api.service_report('c%02d-%05d' % (index, i),
                                  'nova-moves-compute', 'compute', 'nova')


def _node(host):
    return {'host': host, 'hypervisor_type': 'QEMU',
            'cpu_model': 'Haswell', 'host_ip': '127.0.0.1', 'vcpus': 16,
            'memory_mb': 32768, 'disk_gb': 500,
            'reserved_host_memory_mb': 0, 'cpu_allocation_ratio': 4.0,
            'ram_allocation_ratio': 1.0, 'disk_allocation_ratio': 1.0,
            'disk_provider': 'root'}


def populate(workdir, ncells, hosts, servers):
    """The API database and every cell's, in ``workdir``; cell 1 is the
    API's home cell ([database] connection)."""
    api_url = 'sqlite:///%s/api.sqlite' % workdir
    CONF.set_override('connection', api_url, group='api_database')
    api_migration.db_sync()
    mapped = []
    for index in range(1, ncells + 1):
        url = 'sqlite:///%s/cell%02d.sqlite' % (workdir, index)
        migration.db_sync_url(url)
        cell = mappings.cell_create({
            'name': 'cell%02d' % index, 'database_connection': url,
            'transport_url': 'rabbit://guest:guest@127.0.0.1:5672/'
                             'bench-cell%02d' % index})
        _hosts(cells.Cell.from_mapping(cell), hosts, index)
        for host in range(hosts):
            mappings.host_mapping_create('c%02d-%05d' % (index, host),
                                         cell['id'])
        for server, project, user in _servers(url, servers, index):
            mapped.append({'instance_uuid': server, 'cell_id': cell['id'],
                           'project_id': project, 'user_id': user,
                           'queued_for_delete': False,
                           'created_at': datetime.datetime(2026, 1, 1)})
        print('  cell%02d: %d hosts, %d servers' % (index, hosts, servers),
              flush=True)
    engine = sa.create_engine(api_url)
    try:
        with engine.begin() as conn:
            conn.execute(api_models.InstanceMapping.__table__.insert(),
                         mapped)
    finally:
        engine.dispose()
    db_api.dispose_engines()


def _pct(values, pct):
    return bench_scheduler.percentile(values, pct) * 1000


def _timed(fn, requests):
    wall, cpu = [], []
    for _ in range(requests):
        # The process's CPU: the API reads the cells in threads.
        t, c = time.perf_counter(), time.process_time()
        fn()
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - t)
    return ('wall p50 %7.1f ms p99 %7.1f ms, CPU p50 %7.1f ms'
            % (_pct(wall, 50), _pct(wall, 99), _pct(cpu, 50)))


def bench_lists(requests):
    from nova_moves.api import app as api_app
    CONF.set_override('auth_strategy', 'noauth', 'api')
    client = api_app.create_app().test_client()
    client.environ_base = dict(client.environ_base or {},
                               SERVER_ADDR='127.0.0.1')
    headers = {'X-Auth-Token': 'admin:admin',
               'OpenStack-API-Version': 'compute 2.69'}

    def get(path, count=None):
        response = client.get(path, headers=headers)
        assert response.status_code == 200, response.get_data(as_text=True)
        servers = response.get_json()['servers']
        if count is not None:
            assert len(servers) == count, (path, len(servers))
        return servers

    page = len(get('/v2.1/servers?all_tenants=1&limit=1000'))
    print('GET /servers?limit=1000 answers %d servers' % page, flush=True)
    for name, path in (
            ('GET /servers/detail?limit=1000',
             '/v2.1/servers/detail?all_tenants=1&limit=1000'),
            ('GET /servers?limit=1000',
             '/v2.1/servers?all_tenants=1&limit=1000'),
            ('GET /servers/detail?project_id=p3',
             '/v2.1/servers/detail?all_tenants=1&limit=1000'
             '&project_id=p3')):
        count = None if 'project_id' in path else page
        print('%-40s %s' % (name, _timed(lambda: get(path, count),
                                          requests)), flush=True)
    first = get('/v2.1/servers?all_tenants=1&limit=%d' % page)
    marker = first[-1]['id']
    path = '/v2.1/servers/detail?all_tenants=1&limit=1000&marker=' + marker
    print('%-40s %s' % ('GET /servers/detail, 2nd page (marker)',
                        _timed(lambda: get(path), requests)), flush=True)


def bench_scheduling(workdir, requests):
    url = 'sqlite:///%s/cell02.sqlite' % workdir
    cell = cells.Cell('bench', 'cell02', url, '')
    CONF.set_override('service_down_time', 3600)
    with cells.target(cell):
        flavor = db_api.flavor_create({
            'name': 'bench-%s' % uuid.uuid4().hex[:8], 'vcpus': 1,
            'memory_mb': 512, 'root_gb': 1})
        scheduler = scheduler_manager.SchedulerManager()
        spec = {'flavor': flavor, 'availability_zone': None,
                'project_id': 'bench', 'user_id': 'bench',
                'ignore_hosts': [], 'requested_destination': None}
        ctxt = nm_context.get_admin_context()

        def one():
            instance = str(uuid.uuid4())
            spec['instance_uuid'] = instance
            scheduler.select_destinations(ctxt, spec, [instance], True)

        one()  # the first request loads the view
        print('%-40s %s' % ('select_destinations in one cell',
                            _timed(one, requests)), flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--cells', type=int, default=10)
    parser.add_argument('--hosts', type=int, default=1000)
    parser.add_argument('--servers', type=int, default=1000)
    parser.add_argument('--requests', type=int, default=20)
    parser.add_argument('--workdir')
    args = parser.parse_args(argv)
    CONF([], project='nova_moves', default_config_files=[])
    workdir = args.workdir or tempfile.mkdtemp(prefix='bench-cells-')
    key = '%dx%dx%d-%s-%s' % (args.cells, args.hosts, args.servers,
                              migration.head_version(),
                              api_migration.head_version())
    data = os.path.join(workdir, key)
    try:
        if not os.path.exists(os.path.join(data, 'done')):
            shutil.rmtree(data, ignore_errors=True)
            os.makedirs(data)
            started = time.monotonic()
            populate(data, args.cells, args.hosts, args.servers)
            open(os.path.join(data, 'done'), 'w').close()
            print('populated in %.0f s' % (time.monotonic() - started))
        CONF.set_override('connection', 'sqlite:///%s/api.sqlite' % data,
                          group='api_database')
        CONF.set_override('connection', 'sqlite:///%s/cell01.sqlite' % data,
                          group='database')
        db_api.dispose_engines()
        print('%d cells x %d hosts, %d servers each; load %s' % (
            args.cells, args.hosts, args.servers,
            ' '.join('%.1f' % x for x in os.getloadavg())), flush=True)
        bench_lists(args.requests)
        bench_scheduling(data, args.requests)
    finally:
        db_api.dispose_engines()
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
