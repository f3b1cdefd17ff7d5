"""Benchmark (not a test): what one move costs, process by process.

Starts a stack (api, conductor, scheduler, two compute processes with
two fake hosts each) on the machine's RabbitMQ in a vhost of its own,
SQLite by default (--database-url URL, or --postgres for a private
PostgreSQL cluster), boots --servers servers and moves all of them, one
kind after the other:

  cold      migrate, then confirmResize
  resize    resize to a bigger flavor, then revertResize
  live      os-migrateLive at microversion 2.34 (scheduler picks)
  evacuate  computeA is killed and forced down, its servers evacuated;
            then it comes back and cleans up (not counted)
  steady    (only when named) cold migrate + confirm, each of --clients
            clients moving its servers one after the other: the rate a
            steady stream of moves completes at

For each kind it prints, per process: CPU ms per move (read from /proc,
the process's idle rate measured before the run subtracted), RPC calls,
casts and handled messages per move by method (rpcstats), SQL statements
and transactions per move (NOVA_MOVES_SQL_STATS, nova_moves/db/sqlstats),
and the ceiling of moves/s this machine's cores allow at that cost.
Counting costs CPU the product does not spend (a timer and a lock per
message and per statement, a file rewritten five times a second), so by
default the stack runs twice on fresh databases: CPU and completed/s come
from a pass without counters, the counts (and the CPU with counters, for
comparison) from a second pass (--counters bare|counted: one of them). The
benchmark waits by reading the database itself, so API polling is not
counted as move cost. It exits non-zero when the invariant checks fail.

    .venv/bin/python tools/bench_cost.py [--servers 100] [--postgres]
        [--kinds cold,resize,live,evacuate] [--profile DIR]

--private-broker runs the stack on a RabbitMQ node of its own and takes
the RabbitMQ column from that node alone (the machine's broker also
carries other work's vhosts); --set oslo_messaging_rabbit.
rabbit_quorum_queue=false compares classic queues with the default.

--profile DIR records every process with py-spy during the cold phase
(raw collapsed stacks in DIR) and prints the top frames per process;
profiled numbers are slower, so take the costs from a run without it.
Results go in doc/performance.md.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import shutil
import sys
import threading
import time
import uuid

import psutil

import benchdb
import benchlib
from nova_moves import rpcstats
from nova_moves.harness import invariants
from nova_moves.harness import pg_cluster
from nova_moves.harness import rabbit_cluster
from nova_moves.harness import stack as nm_stack

UNLIMITED = {'instances': -1, 'cores': -1, 'ram': -1}
KINDS = ('cold', 'resize', 'live', 'evacuate')
TX_VERBS = ('BEGIN', 'COMMIT', 'ROLLBACK')


# -- the stack ----------------------------------------------------------
def make_stack(database_url, rpc_dir, keep, limits=None, api_workers=1,
               conductors=1, settings=(), broker=None):
    conductor = {}
    if limits:
        conductor = {'max_concurrent_migrations_per_cluster': limits[0],
                     'max_outbound_migrations_per_host': limits[1]}
    fast = {'default_operation_seconds': 0.01, 'vcpus': 64}
    computes = [{'name': 'compute%s' % c, 'hosts': [
        'h%s%d' % (c.lower(), i) for i in range(2)], 'compute': fast}
        for c in 'AB']
    extra = {'DEFAULT': {'debug': 'false', 'report_interval': 10,
                         'rpc_stats_dir': rpc_dir},
             'conductor': conductor, 'quota': UNLIMITED,
             'api': {'workers': str(api_workers)}}
    for setting in settings:  # --set SECTION.OPTION=VALUE
        name, _, value = setting.partition('=')
        section, _, option = name.rpartition('.')
        extra.setdefault(section or 'DEFAULT', {})[option] = value
    on = {'broker_url': broker.url, 'broker_ctl': broker.ctl} \
        if broker is not None else {}
    return nm_stack.Stack(
        computes=computes, conductors=conductors,
        database_url=database_url, keep_workdir=keep,
        service_down_time=60, extra_conf=extra, **on)


def broker_cpu(broker):
    """CPU seconds of a private broker node's processes (the VM and its
    helpers), or None on the machine's broker."""
    if broker is None:
        return None
    try:
        top = psutil.Process(broker.nodes[0].popen.pid)
        procs = [top] + top.children(recursive=True)
    except psutil.NoSuchProcess:
        return 0.0
    total = 0.0
    for proc in procs:
        try:
            times = proc.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


# -- counters from the rpcstats files -------------------------------------
def counters(rpc_dir, names):
    """{process name: {(kind, method): count}} from every process file."""
    _merged, processes = rpcstats.merge_dir(rpc_dir)
    out = {}
    for entry in processes:
        name = names.get(entry['pid'])
        if name is None:
            continue
        table = out.setdefault(name, collections.Counter())
        for kind, methods in entry['counts'].items():
            for method, n in methods.items():
                table[(kind, method)] += n
    return out


def settle_files():
    # rpcstats files are rewritten every 0.2 s while busy.
    time.sleep(3 * rpcstats.FLUSH_INTERVAL + 0.2)


# -- driving the API ---------------------------------------------------
_local = threading.local()


def _client(stack):
    client = getattr(_local, 'client', None)
    if client is None or client.endpoint != stack.endpoint:
        client = _local.client = stack.client()
    return client


def post_all(stack, ids, body, clients, version=None, expect=(202, 204)):
    def one(server_id):
        _client(stack).action(server_id, body, version=version,
                              expect=expect)
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        list(pool.map(one, ids))


def boot(stack, db, count, flavor, clients):
    def one(i):
        return _client(stack).boot('cost%04d' % i, flavor['id'],
                                   wait=False)['id']
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        ids = list(pool.map(one, range(count)))
    db.wait(ids, 'active')
    return ids


def set_forced_down(admin, host, forced):
    service = [s for s in admin.services('nova-moves-compute')
               if s['host'] == host][0]
    admin.put('/os-services/%s' % service['id'], {'forced_down': forced},
              version='2.53', expect=200)


# -- the phases: each returns the servers it moved ------------------------
def note_failed(kind, failed, ids):
    if failed:
        print('%s: %d of %d moves failed' % (kind, len(failed), len(ids)))


def api_cpu(stack):
    """CPU seconds of the API (its workers included) now."""
    return benchlib.cpu_by_process(stack).get('api', 0.0)


def phase_cold(stack, db, ids, args, flavors):
    # The API's CPU is read around each burst of requests: the
    # migrates' and the confirms' apart (the API's idle rate taken out).
    idle = getattr(args, 'api_idle', 0.0)
    t0, c0 = time.monotonic(), api_cpu(stack)
    post_all(stack, ids, {'migrate': None}, args.clients)
    t1, c1 = time.monotonic(), api_cpu(stack)
    db.wait(ids, 'resized')
    t2, c2 = time.monotonic(), api_cpu(stack)
    post_all(stack, ids, {'confirmResize': None}, args.clients)
    t3, c3 = time.monotonic(), api_cpu(stack)
    args.api_per_request = {
        'migrate': 1000.0 * (c1 - c0 - idle * (t1 - t0)) / len(ids),
        'confirm': 1000.0 * (c3 - c2 - idle * (t3 - t2)) / len(ids)}
    print('cold: 202s for every migrate after %.1f s, every server '
          'resized after %.1f s more, confirms posted in %.1f s; API CPU '
          'per request: migrate %.2f ms, confirmResize %.2f ms' % (
              t1 - t0, t2 - t1, t3 - t2, args.api_per_request['migrate'],
              args.api_per_request['confirm']))
    note_failed('cold', db.wait(ids, 'active', ('migration',
                                                ('confirmed',))), ids)
    print_phase_times('cold', db.phase_times(set(ids), 'migration'))
    return ids


def print_phase_times(kind, spans):
    """The moves' latency by step, p50 / p90 ms: under the move limits
    completed/s is the slots over the time a move holds one, so this is
    where a faster stream has to come from (the fake driver's
    [compute] default_operation_seconds is part of some steps)."""
    def pct(values, q):
        return 1000.0 * values[min(len(values) - 1, int(len(values) * q))]
    for values in spans.values():
        values.sort()
    for (a, b), values in sorted(spans.items(),
                                 key=lambda kv: -pct(kv[1], 0.5)):
        print('%s latency %s -> %s: %d moves, p50 %.0f ms, p90 %.0f ms'
              % (kind, a, b, len(values), pct(values, 0.5),
                 pct(values, 0.9)))


def phase_steady(stack, db, ids, args, flavors):
    """Cold migrate + confirm with each client moving its own servers
    one after the other (migrate, until resized, confirm, until active):
    the rate a steady stream of moves completes at, without the cold
    phase's barriers (every 202 before any wait, every resize before any
    confirm), which leave cores idle while the last moves finish."""
    watch = benchdb.Watch(db, ids)

    def client(mine):
        api = _client(stack)
        for server_id in mine:
            api.action(server_id, {'migrate': None}, expect=202)
            watch.until(server_id, 'resized')
            api.action(server_id, {'confirmResize': None}, expect=204)
            watch.until(server_id, 'active')
    try:
        with concurrent.futures.ThreadPoolExecutor(args.clients) as pool:
            for f in [pool.submit(client, ids[i::args.clients])
                      for i in range(args.clients)]:
                f.result()
    finally:
        watch.stop()
    note_failed('steady', db.wait(ids, 'active', ('migration',
                                                  ('confirmed',))), ids)
    return ids


def phase_resize(stack, db, ids, args, flavors):
    post_all(stack, ids, {'resize': {'flavorRef': flavors[1]['id']}},
             args.clients)
    db.wait(ids, 'resized')
    post_all(stack, ids, {'revertResize': None}, args.clients)
    note_failed('resize', db.wait(ids, 'active', ('resize',
                                                  ('reverted',))), ids)
    return ids


def phase_live(stack, db, ids, args, flavors):
    # In waves: 100 pre-checks at once time out on two compute processes
    # (each check is a call that makes another call), which is a
    # different benchmark.
    failed = set()
    for i in range(0, len(ids), args.live_wave):
        wave = ids[i:i + args.live_wave]
        post_all(stack, wave, {'os-migrateLive': {
            'host': None, 'block_migration': 'auto'}}, args.clients,
            version='2.34')
        failed |= db.wait(wave, 'active', ('live-migration',
                                           ('completed',)))
    note_failed('live', failed, ids)
    return ids


def phase_evacuate(stack, db, ids, args, flavors):
    admin = stack.client()
    hosts = ['ha0', 'ha1']
    moved = [k for k, v in db.states(set(ids)).items() if v[2] in hosts]
    stack.kill('computeA')
    for host in hosts:
        set_forced_down(admin, host, True)
    post_all(stack, moved, {'evacuate': {}}, args.clients,
             version='2.68', expect=200)
    note_failed('evacuate', db.wait(moved, 'active',
                                    ('evacuation', ('done',))), moved)
    return moved


def restore_evacuated(stack, db, moved):
    admin = stack.client()
    stack.restart('computeA')
    for host in ('ha0', 'ha1'):
        set_forced_down(admin, host, False)
    db.wait(moved, 'active', ('evacuation', ('completed',)))


PHASES = {'cold': phase_cold, 'resize': phase_resize, 'live': phase_live,
          'evacuate': phase_evacuate, 'steady': phase_steady}


# -- report -------------------------------------------------------------

def report(kind, bare, counted, cores):
    """One kind's table. ``bare``/``counted``: (moves, elapsed, cpu, rpc)
    of the pass without and with the counters (either may be None)."""
    first = bare or counted
    moves, elapsed = first[0], first[1]
    print('\n== %s: %d moves in %.1f s (%.1f completed/s)%s' % (
        kind, moves, elapsed, moves / elapsed,
        '' if bare else ' [counters on: CPU includes them]'))
    rpc_moves = counted[0] if counted else moves
    rpc = counted[3] if counted else {}
    print('%-12s %9s %9s %8s %8s %8s %8s %8s' % (
        'process', 'cpu ms', '+counters', 'calls', 'casts', 'handled',
        'sql', 'tx'))
    total_cpu = 0.0
    names = sorted(set(first[2]) | set(counted[2] if counted else ()))
    for name in names:
        counts = rpc.get(name, collections.Counter())

        def per(k, _counts=counts):
            # BEGIN/COMMIT are statements on SQLite only: the
            # transactions column counts them for both databases.
            if not counted:
                return '-'
            return '%.1f' % (sum(n for (kk, m), n in _counts.items()
                                 if kk == k and m not in TX_VERBS)
                             / rpc_moves)
        cpu = first[2].get(name, 0.0)
        total_cpu += cpu
        print('%-12s %9.1f %9s %8s %8s %8s %8s %8s' % (
            name, cpu,
            '%.1f' % counted[2].get(name, 0.0) if counted and bare else '-',
            per('call'), per('cast'), per('handle'), per('sql'),
            per('sqltx')))
    print('%-12s %9.1f %9s' % ('total', total_cpu, '%.1f' % sum(
        counted[2].values()) if counted and bare else '-'))
    print('ceiling on %d cores at this cost: %.1f moves/s' % (
        cores, 1000.0 * cores / total_cpu if total_cpu > 0 else 0))
    # Not subtracted for idle, and the machine's figure includes the
    # benchmark's own clients: what the cores had left to give.
    servers = first[4]
    print('whole machine: %.1f CPU ms busy per move (%.0f%% of %d cores '
          'for %.1f s): RabbitMQ %.1f, database server %.1f, interrupts '
          '%.1f, the rest (benchmark clients, others) %.1f' % (
              servers['machine'], 100.0 * servers['machine'] * moves /
              (1000.0 * cores * elapsed), cores, elapsed,
              servers['broker'], servers['database'], servers['irq'],
              servers['machine'] - total_cpu - servers['broker'] -
              servers['database'] - servers['irq']))
    if 'broker_idle_ms_s' in servers:
        print('RabbitMQ (private node): %.1f ms per move, of which its idle '
              'rate (%.1f ms/s with the stack idle) over the phase %.1f: '
              '%.1f ms per move above idle' % (
                  servers['broker'], servers['broker_idle_ms_s'],
                  servers['broker'] - servers['broker_net'],
                  servers['broker_net']))
    if rpc:
        print('per move, by process and method:')
    for name in sorted(rpc):
        items = sorted(rpc[name].items())
        if not items:
            continue
        print('  %s: %s' % (name, ', '.join(
            '%s %s %.2g' % (k, m, n / rpc_moves) for (k, m), n in items)))
    return total_cpu


def run(args, database_url, counted):
    """One stack, every kind. ``counted``: the processes count their
    RPCs (rpcstats) and SQL statements (sqlstats); both cost CPU the
    product does not spend, so CPU is measured in a pass without them.
    Returns ({kind: (moves, elapsed, cpu, rpc)}, problems)."""
    rpc_dir = os.path.join('/tmp', 'bench-cost-%s' % uuid.uuid4().hex[:8])
    os.environ['NOVA_MOVES_SQL_STATS'] = (
        ('trace' if args.trace else '1') if counted else '0')
    stack = make_stack(database_url, rpc_dir if counted else '',
                       args.keep_logs, args.move_limits, args.api_workers,
                       args.conductors, args.set, args.broker)
    stack.start(timeout=180)
    results = {}
    try:
        db = benchdb.DB(database_url or 'sqlite:///%s/state/nova_moves.sqlite'
                % stack.workdir)
        admin = stack.client()
        flavors = [admin.create_flavor('cost-small', 1, 256, 1),
                   admin.create_flavor('cost-medium', 1, 512, 1)]
        ids = boot(stack, db, args.servers, flavors[0], args.clients)
        # Idle: what every process burns doing nothing (heartbeats,
        # periodic tasks, the rpcstats flush), per second.
        time.sleep(2)
        before = benchlib.cpu_by_process(stack)
        broker_idle = broker_cpu(args.broker)
        time.sleep(args.idle)
        idle = {k: (v - before[k]) / args.idle
                for k, v in benchlib.cpu_by_process(stack).items()}
        if broker_idle is not None:
            # The private node's rate with the stack idle (queue ticks,
            # heartbeats, the services' periodic reports): the RabbitMQ
            # column includes it for as long as the phase lasts.
            broker_idle = (broker_cpu(args.broker) - broker_idle) / args.idle
        args.api_idle = idle.get('api', 0.0)
        for kind in args.kinds.split(','):
            names = benchlib.pid_names(stack)
            if counted:
                settle_files()
            rpc_before = counters(rpc_dir, names) if counted else {}
            cpu_before = benchlib.cpu_by_process(stack)
            servers_before = benchlib.machine_cpu()
            broker_before = broker_cpu(args.broker)
            profilers = (benchlib.start_profilers(stack, args.profile)
                         if args.profile and kind == 'cold' else None)
            start = time.monotonic()
            moved = PHASES[kind](stack, db, ids, args, flavors)
            elapsed = time.monotonic() - start
            cpu_after = benchlib.cpu_by_process(stack)
            servers = {k: 1000.0 * (v - servers_before[k]) / len(moved)
                       for k, v in benchlib.machine_cpu().items()}
            if broker_before is not None:
                # Only the private node: not other work's brokers.
                servers['broker'] = 1000.0 * (broker_cpu(args.broker) -
                                              broker_before) / len(moved)
                servers['broker_idle_ms_s'] = 1000.0 * broker_idle
                servers['broker_net'] = servers['broker'] - (
                    1000.0 * broker_idle * elapsed / len(moved))
            files = benchlib.stop_profilers(profilers) if profilers else None
            rpc = {}
            if counted:
                settle_files()
                rpc_after = counters(rpc_dir, names)
                rpc = {k: rpc_after[k] - rpc_before.get(
                    k, collections.Counter()) for k in rpc_after}
            cpu = {k: 1000.0 * (cpu_after[k] - cpu_before[k]
                                - idle.get(k, 0.0) * elapsed) / len(moved)
                   for k in cpu_after if k in cpu_before}
            if kind == 'cold':
                servers['api_per_request'] = args.api_per_request
            results[kind] = (len(moved), elapsed, cpu, rpc, servers)
            print('%s pass, %s: %d moves in %.1f s, %.1f CPU ms/move' % (
                'counted' if counted else 'bare', kind, len(moved), elapsed,
                sum(cpu.values())), flush=True)
            if files:
                benchlib.print_profiles(files)
            if kind == 'evacuate':
                restore_evacuated(stack, db, moved)
        problems = invariants.check(admin)
        if args.keep_logs:
            print('logs in %s' % stack.workdir)
    finally:
        stack.stop()
        if args.trace and counted:
            print('SQL traces in %s' % rpc_dir)
        else:
            shutil.rmtree(rpc_dir, ignore_errors=True)
    return results, problems


def run_passes(args, databases):
    """The bare pass (CPU, moves/s), then the counted one (RPCs and SQL
    per move), each on its own fresh database from ``databases()``."""
    passes = {'bare': (False,), 'counted': (True,),
              'both': (False, True)}[args.counters]
    results, problems = {}, []
    for counted in passes:
        results[counted], found = run(args, databases(), counted)
        problems.extend(found or [])
    print('\ninvariants: %s' % ('ok' if not problems else problems))
    summary = []
    for kind in args.kinds.split(','):
        bare, count = results.get(False, {}).get(kind), \
            results.get(True, {}).get(kind)
        total = report(kind, bare, count, os.cpu_count())
        moves, elapsed, _cpu, _rpc, servers = bare or count
        summary.append((kind, moves, elapsed, total, servers,
                        (bare or count)[2]))
    print('\nsummary (%s%s): kind, moves, seconds, completed/s, '
          'CPU ms/move all processes' % (
              args.database_kind,
              '' if False in results else ', counters on'))
    for kind, n, elapsed, total, _servers, _cpu in summary:
        print('  %-9s %4d %7.1f %7.1f %8.1f' % (kind, n, elapsed,
                                                 n / elapsed, total))
    if args.json:
        # What tools/bench_ab.py reads back, per kind.
        with open(args.json, 'w') as f:
            json.dump({kind: {'cpu_ms': total, 'completed_per_s': n / elapsed,
                              'machine_ms': servers['machine'],
                              'database_ms': servers['database'],
                              'broker_ms': servers['broker'],
                              'broker_net_ms': servers.get('broker_net'),
                              'broker_idle_ms_s': servers.get(
                                  'broker_idle_ms_s'),
                              'processes': cpu,
                              'api_per_request_ms': servers.get(
                                  'api_per_request')}
                       for kind, n, elapsed, total, servers, cpu
                       in summary}, f)
    return 1 if problems else 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--servers', type=int, default=100)
    parser.add_argument('--clients', type=int, default=16)
    parser.add_argument('--kinds', default=','.join(KINDS))
    parser.add_argument('--live-wave', type=int, default=8,
                        help='live migrations started together')
    parser.add_argument('--idle', type=float, default=5.0,
                        help='seconds of idle CPU measured before the run')
    parser.add_argument('--database-url',
                        help='an empty MySQL/PostgreSQL database for the '
                             'stack (default: a SQLite file)')
    parser.add_argument('--postgres', action='store_true',
                        help='a private PostgreSQL cluster for the stack')
    parser.add_argument('--profile', metavar='DIR',
                        help='py-spy every process during the cold phase')
    parser.add_argument('--trace', action='store_true',
                        help='keep every SQL statement per process')
    parser.add_argument('--keep-logs', action='store_true')
    parser.add_argument(
        '--counters', choices=('both', 'bare', 'counted'), default='both',
        help='both (default): CPU from a pass without the RPC/SQL counters '
             '(what the product spends), counts from a second pass with them; '
             'bare or counted: only that pass')
    parser.add_argument('--conductors', type=int, default=1,
                        help='conductor processes (default 1)')
    parser.add_argument('--api-workers', type=int, default=1,
                        help='[api] workers of the stack (default 1)')
    parser.add_argument(
        '--move-limits', metavar='CLUSTER,HOST', default=None,
        type=lambda v: [int(x) for x in v.split(',')],
        help='[conductor] max_concurrent_migrations_per_cluster and '
             'max_outbound_migrations_per_host (default: the product '
             'defaults, 5 and 2)')
    parser.add_argument('--set', action='append', default=[],
                        metavar='SECTION.OPTION=VALUE',
                        help='an option for every process of the stack '
                             '(repeatable), e.g. oslo_messaging_rabbit.'
                             'rabbit_quorum_queue=false')
    parser.add_argument('--private-broker', action='store_true',
                        help='a private RabbitMQ node for the stack (its '
                             'CPU alone is the RabbitMQ column; the '
                             "machine's broker carries other work)")
    parser.add_argument('--json', metavar='FILE',
                        help='also write the summary to FILE as JSON')
    parser.add_argument('--summarize', metavar='DIR',
                        help='only print the profiles already in DIR')
    args = parser.parse_args(argv)
    if args.summarize:
        benchlib.print_profiles([(f.rsplit('-', 1)[0], os.path.join(
            args.summarize, f)) for f in sorted(os.listdir(args.summarize))])
        return 0
    print('machine: %d CPUs, load %s' % (os.cpu_count(), ' '.join(
        '%.1f' % x for x in os.getloadavg())), flush=True)
    args.broker = None
    if args.private_broker:
        args.broker = rabbit_cluster.RabbitCluster(1).start()
    try:
        return _on_databases(args)
    finally:
        if args.broker is not None:
            args.broker.stop()


def _on_databases(args):
    if args.postgres:
        args.database_kind = 'postgresql'
        postgres = pg_cluster.PostgresCluster().start()
        try:
            return run_passes(args, lambda: postgres.create_database(
                'cost_%s' % uuid.uuid4().hex[:8]))
        finally:
            postgres.destroy()
    if args.database_url:
        args.database_kind = args.database_url.split(':')[0].split('+')[0]
        if args.counters == 'both':
            # Only one empty database to run in.
            args.counters = 'bare'
            print('--database-url: one pass, without counters (--counters '
                  'counted for the RPC and SQL counts)')
        return run_passes(args, lambda: args.database_url)
    args.database_kind = 'sqlite'
    return run_passes(args, lambda: None)


if __name__ == '__main__':
    sys.exit(main())
