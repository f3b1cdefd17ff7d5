#!/usr/bin/env python3
"""Scheduler micro-benchmark: SchedulerManager.select_destinations called
in-process (no RPC) against a SQLite database holding the providers of
1,000 and 10,000 compute hosts, each request claiming its host as a real
boot would. Prints p50/p99 per size and how they grow.

  PYTHONPATH=. python tools/bench_scheduler.py [--hosts 1000 10000]
      [--requests 50] [--profile out.html] [--workdir DIR]

Per size: the CPU (thread time) and wall time of a request, p50/p99;
the view's load at start-up (as nova-moves-scheduler does before taking
requests) and the first request after it. --workdir keeps the populated
databases (10,000 hosts take minutes to populate) for the next run.

--profile wraps the largest size in pyinstrument (if installed) and writes
an HTML profile, to show where the time goes."""
import argparse
import math
import os
import shutil
import sys
import tempfile
import time
import tracemalloc
import uuid

from nova_moves import conf
from nova_moves import context as nm_context
from nova_moves.db import api as db_api
from nova_moves.db import migration
from nova_moves.scheduler import manager as scheduler_manager

CONF = conf.CONF


def percentile(values, pct):
    ordered = sorted(values)
    return ordered[max(1, int(math.ceil(len(ordered) * pct / 100.0))) - 1]


def populate(hosts):
    """``hosts`` compute nodes (providers with inventories) and services,
    as the compute agents would report them."""
    for i in range(hosts):
        host = 'bench-%05d' % i
        db_api.compute_node_sync({
            'host': host, 'hypervisor_type': 'QEMU', 'cpu_model': 'Haswell',
            'host_ip': '127.0.0.1', 'vcpus': 16, 'memory_mb': 32768,
            'disk_gb': 500, 'reserved_host_memory_mb': 0,
            'cpu_allocation_ratio': 4.0, 'ram_allocation_ratio': 1.0,
            'disk_allocation_ratio': 1.0, 'disk_provider': 'root'})
        db_api.service_report(host, 'nova-moves-compute', 'compute', 'nova')


def view_memory():
    """Bytes the scheduler's in-memory placement view holds (tracemalloc
    around building a fresh one, the database driver's caches warm)."""
    db_api.PlacementView().refresh()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    view = db_api.PlacementView()
    view.refresh()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del view
    return held


def bench(hosts, requests, workdir, profile=None):
    path = os.path.join(workdir, 'bench-%d.sqlite' % hosts)
    # Populating 10,000 hosts takes minutes: the populated database is
    # kept beside the run's copy and reused while the schema is the same.
    template = os.path.join(workdir, 'populated-%d-%s.sqlite'
                            % (hosts, migration.head_version()))
    started = time.monotonic()
    if not os.path.exists(template):
        CONF.set_override('connection', 'sqlite:///%s' % template,
                          group='database')
        db_api.dispose_engines()
        migration.db_sync()
        populate(hosts)
        db_api.dispose_engines()
    populated = time.monotonic() - started
    shutil.copyfile(template, path)
    CONF.set_override('connection', 'sqlite:///%s' % path, group='database')
    db_api.dispose_engines()
    flavor = db_api.flavor_create({'name': 'bench-%s' % uuid.uuid4().hex[:8],
                                   'vcpus': 1,
                                   'memory_mb': 512, 'root_gb': 1})
    spec = {'flavor': flavor, 'availability_zone': None,
            'project_id': 'bench', 'user_id': 'bench', 'ignore_hosts': [],
            'requested_destination': None}
    # service_down_time is long enough for the whole run.
    CONF.set_override('service_down_time', 3600)
    scheduler = scheduler_manager.SchedulerManager()
    # As nova-moves-scheduler does before it takes requests.
    t, c = time.perf_counter(), time.thread_time()
    if hasattr(scheduler, 'load_placement'):
        scheduler.load_placement()
    startup_ms = (time.perf_counter() - t) * 1000
    startup_cpu_ms = (time.thread_time() - c) * 1000
    ctxt = nm_context.get_admin_context()
    profiler = None
    if profile:
        import pyinstrument
        profiler = pyinstrument.Profiler()
        profiler.start()
    times, cpu = [], []
    for _ in range(requests + 1):
        instance = str(uuid.uuid4())
        spec['instance_uuid'] = instance
        t, c = time.perf_counter(), time.thread_time()
        result = scheduler.select_destinations(ctxt, spec, [instance], True)
        cpu.append(time.thread_time() - c)
        times.append(time.perf_counter() - t)
        assert result[0][0]['host'].startswith('bench-')
    # The first request of a process loads the whole view: apart.
    first_ms, first_cpu_ms = times.pop(0) * 1000, cpu.pop(0) * 1000
    if profiler is not None:
        profiler.stop()
        with open(profile, 'w') as f:
            f.write(profiler.output_html())
        print(profiler.output_text(unicode=False, color=False,
                                   show_all=False)[:6000])
    memory = view_memory()
    db_api.dispose_engines()
    return {'hosts': hosts, 'view_bytes_per_host': memory / hosts,
            'requests': requests,
            'populate_s': populated,
            'first_ms': first_ms, 'first_cpu_ms': first_cpu_ms,
            'startup_ms': startup_ms, 'startup_cpu_ms': startup_cpu_ms,
            'cpu_p50_ms': percentile(cpu, 50) * 1000,
            'cpu_p99_ms': percentile(cpu, 99) * 1000,
            'p50_ms': percentile(times, 50) * 1000,
            'p99_ms': percentile(times, 99) * 1000,
            'mean_ms': sum(times) / len(times) * 1000}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--hosts', type=int, nargs='+', default=[1000, 10000])
    parser.add_argument('--requests', type=int, default=30)
    parser.add_argument('--profile', help='pyinstrument HTML for the '
                        'largest size')
    parser.add_argument('--workdir', help='where the SQLite files go '
                        '(default: a temporary directory, removed)')
    args = parser.parse_args(argv)
    CONF([], project='nova_moves', default_config_files=[])
    workdir = args.workdir or tempfile.mkdtemp(prefix='bench-scheduler-')
    os.makedirs(workdir, exist_ok=True)
    results = []
    try:
        for hosts in sorted(args.hosts):
            profile = args.profile if hosts == max(args.hosts) else None
            result = bench(hosts, args.requests, workdir, profile)
            results.append(result)
            print('%6d hosts: select_destinations CPU p50 %7.1f ms  p99 '
                  '%7.1f ms; wall p50 %7.1f ms  p99 %7.1f ms  mean %7.1f '
                  'ms; start-up load %.0f ms (CPU %.0f ms), then first '
                  'request %.1f ms (CPU %.1f ms)  (%d requests; '
                  'populating took %.0f s; view %.0f bytes/host)'
                  % (hosts, result['cpu_p50_ms'], result['cpu_p99_ms'],
                     result['p50_ms'], result['p99_ms'], result['mean_ms'],
                     result['startup_ms'], result['startup_cpu_ms'],
                     result['first_ms'], result['first_cpu_ms'],
                     result['requests'], result['populate_s'],
                     result['view_bytes_per_host']), flush=True)
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    for small, big in zip(results, results[1:]):
        factor = big['hosts'] / small['hosts']
        growth = big['cpu_p50_ms'] / small['cpu_p50_ms']
        print('%dx the hosts -> CPU p50 x%.1f (linear would be x%.0f, '
              'quadratic x%.0f)' % (factor, growth, factor, factor ** 2))
    return 0


if __name__ == '__main__':
    sys.exit(main())
