"""Benchmark (not a test): latency of the API's 202 for cold migrate.

Brings up a stack (api, conductor, scheduler, two computes) on the local
RabbitMQ, boots --servers servers, then --clients concurrent clients each
POST {"migrate": null} for servers taken from a shared queue (one request
per server: a second one would be a 409). Prints p50/p99/max of the 202
latency and requests/s, then waits for VERIFY_RESIZE and confirms all.

    .venv/bin/python tools/bench_migrate.py \
        --clients 16 --servers 48 [--api-workers 2 --api-threads 8]
        [--postgres | --database-url URL]
"""
import argparse
import concurrent.futures
import queue
import sys
import time
import uuid

from nova_moves.harness import invariants
from nova_moves.harness import pg_cluster
from nova_moves.harness import stack as nm_stack


def percentile(sorted_values, fraction):
    index = max(0, min(len(sorted_values) - 1,
                       int(round(fraction * len(sorted_values))) - 1))
    return sorted_values[index]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--clients', type=int, default=16)
    parser.add_argument('--servers', type=int, default=48)
    parser.add_argument('--action', choices=['migrate', 'resize'],
                        default='migrate')
    parser.add_argument('--keep-logs', action='store_true')
    parser.add_argument('--database-url',
                        help='an empty MySQL/PostgreSQL database for the '
                             'stack (default: a SQLite file)')
    parser.add_argument('--postgres', action='store_true',
                        help='a private PostgreSQL cluster for the stack')
    parser.add_argument('--api-workers', type=int, default=1,
                        help='[api] workers of nova-moves-api')
    parser.add_argument('--api-threads', type=int, default=16,
                        help='[api] threads of each API worker')
    args = parser.parse_args(argv)
    if args.postgres:
        postgres = pg_cluster.PostgresCluster().start()
        try:
            args.database_url = postgres.create_database(
                'migrate_%s' % uuid.uuid4().hex[:8])
            return run(args)
        finally:
            postgres.destroy()
    return run(args)


def run(args):
    stack = nm_stack.Stack(computes=2, keep_workdir=args.keep_logs,
                           database_url=args.database_url,
                           extra_conf={'api': {
                               'workers': args.api_workers,
                               'threads': args.api_threads},
                               'quota': {'instances': -1, 'cores': -1,
                                         'ram': -1}})
    stack.start()
    try:
        admin = stack.client()
        small = admin.create_flavor('bench-small', 1, 256, 1)
        medium = admin.create_flavor('bench-medium', 1, 512, 1)
        bodies = [admin.boot('bench-%03d' % i, small['id'], wait=False)
                  for i in range(args.servers)]
        servers = [admin.wait_for_status(b['id'], 'ACTIVE', timeout=300)
                   for b in bodies]
        work = queue.Queue()
        for server in servers:
            work.put(server['id'])
        body = ({'migrate': None} if args.action == 'migrate' else
                {'resize': {'flavorRef': medium['id']}})

        def client_loop(_):
            client = stack.client()
            results = []
            while True:
                try:
                    server_id = work.get_nowait()
                except queue.Empty:
                    return results
                start = time.monotonic()
                resp = client.action(server_id, body)
                results.append((resp.status_code,
                                time.monotonic() - start))

        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(args.clients) as pool:
            results = [r for rs in pool.map(client_loop,
                                            range(args.clients)) for r in rs]
        elapsed = time.monotonic() - started
        codes = sorted({c for c, _ in results})
        latencies = sorted(t for _, t in results)
        print('%s: %d requests, %d clients, codes %s' % (
            args.action, len(results), args.clients, codes))
        print('202 latency p50 %.1f ms  p99 %.1f ms  max %.1f ms  '
              '%.1f requests/s' % (
                  1000 * percentile(latencies, 0.50),
                  1000 * percentile(latencies, 0.99),
                  1000 * latencies[-1], len(results) / elapsed))
        done = time.monotonic()
        for server in servers:
            admin.wait_for_status(server['id'], 'VERIFY_RESIZE', timeout=300)
        print('all %d VERIFY_RESIZE %.1f s after the last 202' % (
            len(servers), time.monotonic() - done))
        for server in servers:
            admin.action(server['id'], {'confirmResize': None}, expect=204)
        for server in servers:
            admin.wait_for_status(server['id'], 'ACTIVE', timeout=300)
        problems = invariants.check(admin)
        print('invariants: %s' % ('ok' if not problems else problems))
        if args.keep_logs:
            print('logs in %s' % stack.workdir)
        return 0 if not problems and codes == [202] else 1
    finally:
        stack.stop()


if __name__ == '__main__':
    sys.exit(main())
