"""Benchmark (not a test): what scaling out buys and costs.

1. ``conductors``: completed cold migrate + confirm per second with 1, 2
   and 3 conductors on PostgreSQL (a private cluster), --servers servers
   on --hosts fake hosts (4 compute processes), same run; and the CPU
   each process type spent per move (ms), read from /proc, so a reader
   can extrapolate to a bigger machine.
2. ``api``: moves accepted per second at the API (202s of POST migrate,
   --clients concurrent clients) with 1 and 4 API workers.
3. ``queues``: RabbitMQ quorum vs classic queues on a private 3-node
   cluster: casts/s (sent and handled) and call round-trip p50/p99, with
   oslo.messaging directly (one RPC server, one client).

    .venv/bin/python tools/bench_scale.py [--servers 200 --hosts 100]
        [--only conductors,api,queues]

Prints a table per part; numbers go in doc/scale.md.
"""
import argparse
import concurrent.futures
import os
import statistics
import threading
import time
import uuid

import benchlib
from nova_moves.harness import pg_cluster
from nova_moves.harness import rabbit_cluster
from nova_moves.harness import stack as nm_stack

UNLIMITED = {'instances': -1, 'cores': -1, 'ram': -1}


def percentile(values, fraction):
    values = sorted(values)
    return values[max(0, min(len(values) - 1,
                             int(round(fraction * len(values))) - 1))]


def _cpu_by_kind(stack):
    out = {}
    for name, seconds in benchlib.cpu_by_process(stack).items():
        kind = name.rstrip('0123456789ABCD')
        out[kind] = out.get(kind, 0.0) + seconds
    return out


def _wait_all(client, ids, status, timeout=900):
    """Poll the list (one request) until every id shows ``status``."""
    wanted = set(ids)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        servers = client.get('/servers/detail', version='2.47',
                             params={'all_tenants': '1'},
                             expect=200).json()['servers']
        done = {s['id'] for s in servers if s['status'] == status
                and s['OS-EXT-STS:task_state'] is None}
        bad = {s['id']: s['status'] for s in servers
               if s['id'] in wanted and s['status'] == 'ERROR'}
        if bad:
            raise RuntimeError('servers in ERROR: %s' % bad)
        if wanted <= done:
            return
        time.sleep(0.5)
    raise TimeoutError('not all %d servers %s' % (len(ids), status))


def _post_all(stack, ids, body, clients):
    """POST ``body`` to every server's action; the 202/204 latencies."""
    def one(server_id):
        client = _thread_client(stack)
        start = time.monotonic()
        client.action(server_id, body, expect=(202, 204))
        return time.monotonic() - start
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        return list(pool.map(one, ids))


_local = threading.local()


def _thread_client(stack):
    client = getattr(_local, 'client', None)
    if client is None or client.endpoint != stack.endpoint:
        client = _local.client = stack.client()
    return client


def _stack(postgres, conductors, api_workers, hosts):
    per = max(1, hosts // 4)
    computes = [{'name': 'compute%s' % c, 'hosts': [
        'c%s-h%d' % (c.lower(), i) for i in range(per)],
        'compute': {'default_operation_seconds': 0.01}} for c in 'ABCD']
    database = 'bench_%s' % uuid.uuid4().hex[:8]
    return nm_stack.Stack(
        computes=computes, conductors=conductors, schedulers=1,
        database_url=postgres.create_database(database),
        service_down_time=60,
        extra_conf={'DEFAULT': {'debug': 'false', 'report_interval': 10},
                    'quota': UNLIMITED, 'api': {'workers': api_workers}})


def _boot(stack, count, clients):
    admin = stack.client()
    flavor = admin.create_flavor('bench-tiny', 1, 256, 1)

    def one(i):
        return _thread_client(stack).boot('b%04d' % i, flavor['id'],
                                          wait=False)['id']
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        ids = list(pool.map(one, range(count)))
    _wait_all(admin, ids, 'ACTIVE')
    return ids


def bench_conductors(postgres, args):
    rows = []
    for conductors in (1, 2, 3):
        stack = _stack(postgres, conductors, 1, args.hosts).start(
            timeout=180)
        try:
            ids = _boot(stack, args.servers, args.clients)
            admin = stack.client()
            before = _cpu_by_kind(stack)
            start = time.monotonic()
            _post_all(stack, ids, {'migrate': None}, args.clients)
            _wait_all(admin, ids, 'VERIFY_RESIZE')
            _post_all(stack, ids, {'confirmResize': None}, args.clients)
            _wait_all(admin, ids, 'ACTIVE')
            elapsed = time.monotonic() - start
            after = _cpu_by_kind(stack)
        finally:
            stack.stop()
        cpu = {k: 1000.0 * (after[k] - before.get(k, 0.0)) / len(ids)
               for k in after}
        rows.append((conductors, len(ids), elapsed, len(ids) / elapsed,
                     cpu))
        print('  %d conductor(s): %d moves in %.1f s' % (
            conductors, len(ids), elapsed), flush=True)
    kinds = ['api', 'conductor', 'scheduler', 'compute']
    print('\ncold migrate + confirm on PostgreSQL, %d servers on %d hosts'
          % (args.servers, args.hosts))
    print('conductors  moves  seconds  moves/s  ' + '  '.join(
        'cpu ms/move %-9s' % k for k in kinds) + '  total')
    for conductors, n, elapsed, rate, cpu in rows:
        print('%-10d  %-5d  %-7.1f  %-7.2f  ' % (conductors, n, elapsed,
                                                   rate)
              + '  '.join('%-21.1f' % cpu.get(k, 0.0) for k in kinds)
              + '  %.1f' % sum(cpu.values()))


def bench_api(postgres, args):
    print('\nmoves accepted at the API (POST migrate -> 202), %d clients'
          % args.clients)
    print('workers  requests  seconds  accepted/s  p50 ms  p99 ms')
    for workers in (1, 4):
        stack = _stack(postgres, 1, workers, 8).start(timeout=180)
        try:
            ids = _boot(stack, args.api_servers, args.clients)
            start = time.monotonic()
            latencies = _post_all(stack, ids, {'migrate': None},
                                  args.clients)
            elapsed = time.monotonic() - start
            _wait_all(stack.client(), ids, 'VERIFY_RESIZE')
        finally:
            stack.stop()
        print('%-7d  %-8d  %-7.1f  %-10.1f  %-6.0f  %-6.0f' % (
            workers, len(ids), elapsed, len(ids) / elapsed,
            1000 * percentile(latencies, 0.5),
            1000 * percentile(latencies, 0.99)), flush=True)


class _Echo:
    def __init__(self):
        self.handled = 0
        self.lock = threading.Lock()

    def ping(self, ctxt, n):
        with self.lock:
            self.handled += 1
        return n


def _rpc_run(url, quorum, casts, calls):
    import oslo_messaging as messaging
    from oslo_config import cfg
    # oslo.messaging registers some of its options on the global CONF
    # (parsed once, in bench_queues).
    conf = cfg.CONF
    transport_server = messaging.get_rpc_transport(conf, url=url)
    transport_client = messaging.get_rpc_transport(conf, url=url)
    for group in ('oslo_messaging_rabbit',):
        conf.set_override('rabbit_quorum_queue', quorum, group=group)
        conf.set_override('rabbit_transient_quorum_queue', quorum,
                          group=group)
        conf.set_override('heartbeat_timeout_threshold', 0, group=group)
    endpoint = _Echo()
    target = messaging.Target(topic='bench', server='s1')
    server = messaging.get_rpc_server(transport_server, target, [endpoint],
                                      executor='threading')
    server.start()
    client = messaging.get_rpc_client(
        transport_client, messaging.Target(topic='bench'), timeout=60)
    try:
        client.call({}, 'ping', n=0)  # queues declared, connections up
        start = time.monotonic()
        for i in range(casts):
            client.cast({}, 'ping', n=i)
        sent = time.monotonic() - start
        while endpoint.handled < casts + 1:
            time.sleep(0.01)
        handled = time.monotonic() - start
        latencies = []
        for i in range(calls):
            t = time.monotonic()
            client.call({}, 'ping', n=i)
            latencies.append(time.monotonic() - t)
    finally:
        server.stop()
        server.wait()
        transport_client.cleanup()
        transport_server.cleanup()
    return casts / sent, casts / handled, latencies


def bench_queues(args):
    from oslo_config import cfg
    cfg.CONF([], project='bench', default_config_files=[])
    cluster = rabbit_cluster.RabbitCluster(3).start()
    try:
        print('\nRabbitMQ 3-node cluster, one RPC server and one client '
              '(oslo.messaging), %d casts, %d calls' % (args.casts,
                                                        args.calls))
        print('queues   casts sent/s  casts handled/s  call p50 ms  '
              'call p99 ms')
        for quorum in (False, True):
            vhost = 'bench-%s' % uuid.uuid4().hex[:8]
            cluster.ctl('add_vhost', vhost)
            cluster.ctl('set_permissions', '-p', vhost, 'guest', '.*', '.*',
                        '.*')
            url = cluster.url.rstrip('/') + '/' + vhost
            sent, handled, lat = _rpc_run(url, quorum, args.casts,
                                          args.calls)
            print('%-7s  %-12.0f  %-15.0f  %-11.2f  %-11.2f' % (
                'quorum' if quorum else 'classic', sent, handled,
                1000 * statistics.median(lat),
                1000 * percentile(lat, 0.99)), flush=True)
    finally:
        cluster.stop()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--servers', type=int, default=200)
    parser.add_argument('--hosts', type=int, default=100)
    parser.add_argument('--clients', type=int, default=20)
    parser.add_argument('--api-servers', type=int, default=200)
    parser.add_argument('--casts', type=int, default=2000)
    parser.add_argument('--calls', type=int, default=500)
    parser.add_argument('--only', default='conductors,api,queues')
    args = parser.parse_args(argv)
    parts = set(args.only.split(','))
    print('machine: %d CPUs, load %s' % (os.cpu_count(),
                                         ' '.join('%.1f' % x for x in
                                                  os.getloadavg())))
    if parts & {'conductors', 'api'}:
        postgres = pg_cluster.PostgresCluster().start()
        try:
            if 'conductors' in parts:
                bench_conductors(postgres, args)
            if 'api' in parts:
                bench_api(postgres, args)
        finally:
            postgres.destroy()
    if 'queues' in parts:
        bench_queues(args)


if __name__ == '__main__':
    main()
