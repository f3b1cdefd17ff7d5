"""Benchmark (not a test): the API's CPU per migrate and per confirmResize
request, end to end through ``nova-moves-api`` (its tornado loop, the
hand-off to a thread, the middleware, the view, the database and the
cast), on a stack as tools/bench_cost.py starts it.

Boots --servers servers, then --rounds times: migrates every one
(--clients at a time) and reads the API's CPU (its worker included,
from /proc) around that burst, waits until all are resized (reading the
database, not the API), confirms every one and reads the CPU around
that burst, waits until all are active again. The API's idle rate,
measured first, is taken out. Prints each round and the medians.

    .venv/bin/python tools/bench_api.py [--servers 40] [--rounds 3]
        [--profile DIR] [--postgres]

--profile DIR records the API's processes with py-spy (--gil) during the
request bursts only and prints the top frames; take the costs from a
run without it. To compare with another commit, run this file with
PYTHONPATH on a worktree of it, interleaved with runs on this one.
"""
import argparse
import os
import statistics
import sys
import time
import uuid

import bench_cost
import benchdb
import benchlib
from nova_moves.harness import pg_cluster


class _ApiOnly:
    """What benchlib.start_profilers needs of a stack: the API only."""

    def __init__(self, stack):
        self.processes = {'api': stack.processes['api']}


def _threads(stack):
    """{'loop': CPU s of the API workers' main threads (tornado's loop:
    reading, parsing and writing HTTP), 'threads': of their other
    threads (the WSGI app, the RPC connection's)}."""
    out = {'loop': 0.0, 'threads': 0.0}
    tick = float(os.sysconf('SC_CLK_TCK'))
    for proc in benchlib._procs(stack).get('api', [])[1:]:  # workers
        task_dir = '/proc/%d/task' % proc.pid
        for tid in os.listdir(task_dir):
            try:
                with open('%s/%s/stat' % (task_dir, tid)) as f:
                    fields = f.read().rsplit(')', 1)[1].split()
            except OSError:
                continue
            key = 'loop' if int(tid) == proc.pid else 'threads'
            out[key] += (int(fields[11]) + int(fields[12])) / tick
    return out


def burst(stack, ids, body, clients, idle):
    """API CPU ms per request of one burst of ``body`` on every server,
    and of that the workers' loop and other threads."""
    t0, c0 = time.monotonic(), bench_cost.api_cpu(stack)
    th0 = _threads(stack)
    bench_cost.post_all(stack, ids, body, clients)
    t1, c1 = time.monotonic(), bench_cost.api_cpu(stack)
    th1 = _threads(stack)
    split = {k: 1000.0 * (th1[k] - th0[k]) / len(ids) for k in th0}
    return 1000.0 * (c1 - c0 - idle * (t1 - t0)) / len(ids), split


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--servers', type=int, default=40)
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--clients', type=int, default=4)
    parser.add_argument('--idle', type=float, default=5.0)
    parser.add_argument('--profile', metavar='DIR')
    parser.add_argument('--postgres', action='store_true',
                        help='the stack on a private PostgreSQL cluster')
    args = parser.parse_args(argv)
    if not args.postgres:
        return run(args, None)
    postgres = pg_cluster.PostgresCluster().start()
    try:
        return run(args, postgres.create_database('api_%s' %
                                                  uuid.uuid4().hex[:8]))
    finally:
        postgres.destroy()


def run(args, database_url):
    import nova_moves
    print('nova_moves from %s; machine load %s' % (
        os.path.dirname(nova_moves.__file__),
        ' '.join('%.1f' % x for x in os.getloadavg())), flush=True)
    # Move limits lifted: the moves themselves are not measured here.
    stack = bench_cost.make_stack(database_url, '', False,
                                  limits=(100, 50))
    stack.start(timeout=180)
    try:
        db = benchdb.DB(database_url or 'sqlite:///%s/state/'
                        'nova_moves.sqlite' % stack.workdir)
        admin = stack.client()
        flavor = admin.create_flavor('api-small', 1, 256, 1)
        ids = bench_cost.boot(stack, db, args.servers, flavor, args.clients)
        time.sleep(2)
        t0, c0 = time.monotonic(), bench_cost.api_cpu(stack)
        time.sleep(args.idle)
        idle = (bench_cost.api_cpu(stack) - c0) / (time.monotonic() - t0)
        print('API idle: %.2f ms CPU/s' % (1000.0 * idle))
        profilers = (benchlib.start_profilers(_ApiOnly(stack), args.profile)
                     if args.profile else None)
        rows = []
        for i in range(args.rounds):
            migrate, m_split = burst(stack, ids, {'migrate': None},
                                     args.clients, idle)
            db.wait(ids, 'resized')
            confirm, c_split = burst(stack, ids, {'confirmResize': None},
                                     args.clients, idle)
            db.wait(ids, 'active', ('migration', ('confirmed',)))
            rows.append((migrate, confirm))
            print('round %d: API CPU ms per request: migrate %.2f (loop '
                  '%.2f, threads %.2f), confirmResize %.2f (loop %.2f, '
                  'threads %.2f)' % (
                      i + 1, migrate, m_split['loop'], m_split['threads'],
                      confirm, c_split['loop'], c_split['threads']),
                  flush=True)
        if profilers:
            benchlib.print_profiles(benchlib.stop_profilers(profilers))
    finally:
        stack.stop()
    print('median API CPU ms per request (%s): migrate %.2f, '
          'confirmResize %.2f (%d servers, %d clients, load %.1f)' % (
              'postgresql' if database_url else 'sqlite',
              statistics.median(r[0] for r in rows),
              statistics.median(r[1] for r in rows), args.servers,
              args.clients, os.getloadavg()[0]))
    return 0


if __name__ == '__main__':
    sys.exit(main())
