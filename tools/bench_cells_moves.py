#!/usr/bin/env python3
"""Benchmark (not a test), issue 39 item 6: completed cold migrate +
confirm moves per second, and their end-to-end p50, on a one-cell stack
(harness Stack: one conductor, one scheduler) against a two-cell
CellsStack (each cell its own SQLite database, broker vhost, conductor
and scheduler) with the same total number of computes and servers, on
real processes over the machine's RabbitMQ.

Every server moves in a loop (migrate, wait for VERIFY_RESIZE, confirm,
wait for ACTIVE; harness/cell_load.py, one GET /servers/detail poller
at 2.69 every 0.25 s for both layouts); after --warmup seconds the
moves that complete within --seconds are counted. The layouts are run
in interleaved pairs (one, two, one, two, ...) so that the machine's
other load falls on both alike; the 1-minute load average is printed
with each run.

    PYTHONPATH=. python tools/bench_cells_moves.py [--computes 4]
        [--servers 16] [--seconds 30] [--warmup 5] [--pairs 2]
        [--one-cell-services 1] [--json F]
"""
import argparse
import json
import os
import statistics
import sys
import time

from nova_moves.harness import cell_load
from nova_moves.harness import cell_stack
from nova_moves.harness import stack as nm_stack

COMPUTE = {'vcpus': 32, 'memory_mb': 65536,
           'operation_seconds': {'spawn': 0.05, 'migrate_disk': 0.2}}
EXTRA = {'quota': {'instances': -1, 'cores': -1, 'ram': -1},
         'DEFAULT': {'debug': 'false'}}


def _stack(cells, computes, services=1):
    if cells == 1:
        # services: conductors and schedulers of the one cell (2: as
        # many as two cells have, to tell their share of a difference
        # from the second database's).
        return nm_stack.Stack(computes=[
            {'name': 'compute%d' % (i + 1), 'compute': COMPUTE}
            for i in range(computes)], extra_conf=EXTRA,
            conductors=services, schedulers=services)
    per = computes // cells
    return cell_stack.CellsStack(cells=cells, computes=[
        [{'name': 'cell%d-compute%d' % (c + 1, i + 1), 'compute': COMPUTE}
         for i in range(per)] for c in range(cells)], extra_conf=EXTRA)


def _hosts(stack):
    return [s['name'] for s in stack.compute_specs]


def run_once(cells, args):
    stack = _stack(cells, args.computes, args.one_cell_services)
    try:
        stack.start(timeout=180)
        client = stack.client()
        flavor = client.create_flavor('bench', 1, 512, 1)
        hosts = _hosts(stack)
        servers = []
        for i in range(args.servers):
            server = client.boot('b%d' % i, flavor['id'],
                                 host=hosts[i % len(hosts)], timeout=180)
            servers.append({'id': server['id'], 'cell': cells})
        t0 = time.monotonic()
        poller, movers = cell_load.start(stack, servers, t0)
        load_before = os.getloadavg()[0]
        start, end = args.warmup, args.warmup + args.seconds
        movers.run(end)
        poller.stopping.set()
        poller.join(5)
        done = [r for r in movers.records if r['outcome'] == 'ok' and
                start <= r['end'] < end]
        e2e = [r['e2e_s'] for r in done]
        other = sum(1 for r in movers.records if r['outcome'] != 'ok')
        return {'cells': cells, 'moves_per_s': len(done) / args.seconds,
                'completed': len(done), 'not_ok': other,
                'p50_s': cell_load.percentile(e2e, 0.5),
                'p99_s': cell_load.percentile(e2e, 0.99),
                'load_1m': [round(load_before, 2),
                            round(os.getloadavg()[0], 2)]}
    finally:
        stack.stop()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--computes', type=int, default=4)
    parser.add_argument('--servers', type=int, default=16)
    parser.add_argument('--seconds', type=float, default=30.0)
    parser.add_argument('--warmup', type=float, default=5.0)
    parser.add_argument('--pairs', type=int, default=2)
    parser.add_argument('--one-cell-services', type=int, default=1,
                        help='conductors and schedulers of the one-cell '
                        'stack (default 1; 2 matches two cells\' count)')
    parser.add_argument('--json', help='write the runs here')
    args = parser.parse_args(argv)
    if args.computes % 2:
        parser.error('--computes must be even (split over 2 cells)')
    runs = []
    print('cells  moves/s  completed  not-ok  e2e p50 s  p99 s  '
          'load 1m (before, after)', flush=True)
    for _ in range(args.pairs):
        for cells in (1, 2):
            r = run_once(cells, args)
            runs.append(r)
            print('%5d  %7.2f  %9d  %6d  %9.2f  %5.2f  %s' % (
                r['cells'], r['moves_per_s'], r['completed'], r['not_ok'],
                r['p50_s'] or 0, r['p99_s'] or 0, r['load_1m']), flush=True)
    for cells in (1, 2):
        mine = [r for r in runs if r['cells'] == cells]
        print('%d cell(s): moves/s median %.2f, e2e p50 median %.2f s' % (
            cells, statistics.median(r['moves_per_s'] for r in mine),
            statistics.median(r['p50_s'] or 0 for r in mine)))
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(runs, f, indent=1)
    return 0


if __name__ == '__main__':
    sys.exit(main())
