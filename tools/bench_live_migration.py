"""Measure the API latency of os-migrateLive at 2.33 (the API waits for
the conductor's scheduler call and the destination/source checks) and at
2.34 (the API casts), in one run, under the same load: requests for the
two versions alternate, on servers booted alike on the same host.

    .venv/bin/python tools/bench_live_migration.py -n 20
"""
import argparse
import statistics
import sys
import time

from nova_moves.harness import invariants
from nova_moves.harness import stack as nm_stack


def percentile(values, fraction):
    ordered = sorted(values)
    index = min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))
    return ordered[index]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('-n', '--requests', type=int, default=20,
                        help='requests per microversion')
    parser.add_argument('--computes', type=int, default=3)
    parser.add_argument('--database-url',
                        help='an empty MySQL/PostgreSQL database for the '
                             'stack (default: a SQLite file)')
    args = parser.parse_args(argv)

    # 2 x requests servers: more than the default quota of 10 instances.
    stack = nm_stack.Stack(computes=args.computes,
                           database_url=args.database_url,
                           extra_conf={'quota': {'instances': -1,
                                                 'cores': -1, 'ram': -1}})
    stack.start()
    try:
        admin = stack.client()
        flavor = admin.create_flavor('bench', 1, 128, 1)
        servers = [admin.boot('bench-%d' % i, flavor['id'], host='compute1')
                   for i in range(2 * args.requests)]
        latencies = {'2.33': [], '2.34': []}
        for i in range(args.requests):
            for offset, version in enumerate(('2.33', '2.34')):
                server = servers[2 * i + offset]
                body = {'os-migrateLive': {'block_migration': 'auto',
                                           'host': None}}
                started = time.perf_counter()
                admin.action(server['id'], body, version=version,
                             expect=202)
                latencies[version].append(time.perf_counter() - started)
        # Let every migration finish, then check nothing leaked.
        admin.wait_for(lambda: all(
            m['status'] in ('completed', 'error')
            for m in admin.migrations()), timeout=300,
            what='every live migration finished')
        problems = invariants.check(admin)
        statuses = {}
        for migration in admin.migrations():
            statuses[migration['status']] = statuses.get(
                migration['status'], 0) + 1
    finally:
        stack.stop()

    print('os-migrateLive API latency, %d requests per version, %d '
          'computes' % (args.requests, args.computes))
    for version, values in latencies.items():
        print('  %s: p50 %6.1f ms   p90 %6.1f ms   mean %6.1f ms   max '
              '%6.1f ms' % (version, 1000 * statistics.median(values),
                            1000 * percentile(values, 0.9),
                            1000 * statistics.mean(values),
                            1000 * max(values)))
    ratio = (statistics.median(latencies['2.33']) /
             statistics.median(latencies['2.34']))
    print('  p50 ratio 2.33 / 2.34: %.1fx' % ratio)
    print('  migrations: %s' % statuses)
    print('  invariants: %s' % ('ok' if not problems else problems))
    return 0 if not problems else 1


if __name__ == '__main__':
    sys.exit(main())
