"""Benchmark (not a test): do slow clients take the API's request threads?

Opens --slow slow-header clients (a request line, then one header line a
second, never the blank line that ends the headers) and --slow slow-body
clients (complete headers of a POST announcing a body, then one byte of
it a second), then runs --normal clients doing GET /flavors and GET
/servers/ID on kept-alive connections (and, with --migrates, one client
migrating and confirming a server) for --duration seconds. A slow client
the server closes (its header or body timeout) connects again at once, as
an attacker would. Prints p50/p99/max of the normal requests (a request
that failed counts as its --timeout), their errors, and what happened to
the slow clients.

Loopback only, at most 5,000 slow clients of each kind, and it stops by
itself (connect phase bounded, then --duration). By default it starts its
own stack (api, conductor, scheduler, computes; the stack's defaults: one
API worker of 16 threads); --url http://127.0.0.1:PORT/v2.1 measures an
API already running (noauth token admin:admin).

--max-connections sets the started API's [api] max_connections (per
worker) so that the slow clients can fill it (2 x --slow above it: the
worker must shed a slow one for every newcomer), --per-source its [api]
max_connections_per_source, and --new-connections makes every normal
request open a connection of its own (as a client arriving while the
worker is full). Every client is on 127.0.0.1: one source address.
Prints the % of normal requests answered.

    .venv/bin/python tools/bench_slow_clients.py --slow 1000 --duration 30
"""
import argparse
import collections
import ipaddress
import multiprocessing
import resource
import selectors
import socket
import sys
import threading
import time
import urllib.parse

import requests

import benchlib
from nova_moves.harness import stack as nm_stack

MAX_SLOW = 5000


def percentile(sorted_values, fraction):
    index = max(0, min(len(sorted_values) - 1,
                       int(round(fraction * len(sorted_values))) - 1))
    return sorted_values[index]


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


class SlowClients:
    """Every slow socket, driven by one loop in a process of its own (so
    that it does not take the normal clients' GIL): each second every open
    socket gets its next line (or body byte); one the server closed is
    replaced by a new connection of the same kind."""

    def __init__(self, host, port, path, headers, body_path, count):
        self.address = (host, port)
        self.path = path
        self.headers = headers
        self.body_path = body_path
        self.count = count
        self.socks = {}  # sock -> kind
        self.stats = collections.Counter()
        self.stop = multiprocessing.Event()
        self.selector = None  # made in the child

    def _open(self, kind):
        try:
            sock = socket.create_connection(self.address, timeout=5)
        except OSError as exc:
            self.stats['%s connect failed (%s)' % (
                kind, type(exc).__name__)] += 1
            return
        sock.setblocking(False)
        if kind == 'header':
            first = ('GET %s HTTP/1.1\r\nHost: %s:%d\r\n' % (
                self.path, self.address[0], self.address[1])).encode()
        else:
            # Complete headers; the 4,000 bytes announced come a byte a
            # second. Under [oslo_middleware] max_request_body_size.
            first = ('POST %s HTTP/1.1\r\nHost: %s:%d\r\n%s'
                     'Content-Type: application/json\r\n'
                     'Content-Length: 4000\r\n\r\n{' % (
                         self.body_path, self.address[0], self.address[1],
                         self.headers)).encode()
        try:
            sock.send(first)
        except OSError:
            sock.close()
            self.stats['%s reset at once' % kind] += 1
            return
        self.socks[sock] = kind
        self.selector.register(sock, selectors.EVENT_READ, kind)
        self.stats['%s opened' % kind] += 1

    def open_all(self, deadline):
        for i in range(self.count):
            for kind in ('header', 'body'):
                if time.monotonic() > deadline:
                    return
                self._open(kind)

    def _closed_by_server(self, sock, kind):
        try:
            data = sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            data = b''
        if data:
            # An answer (408, 413, 400...) ends the client's turn too.
            status = data.split(b'\r\n', 1)[0][9:12].decode(errors='replace')
            self.stats['%s answered %s' % (kind, status)] += 1
        else:
            self.stats['%s closed by server' % kind] += 1
        self.selector.unregister(sock)
        del self.socks[sock]
        sock.close()
        return True

    def run(self):
        line = 0
        next_tick = time.monotonic()
        while not self.stop.is_set():
            timeout = max(0.0, next_tick - time.monotonic())
            for key, _ in self.selector.select(timeout):
                if self._closed_by_server(key.fileobj, key.data):
                    if not self.stop.is_set():
                        self._open(key.data)
            if time.monotonic() < next_tick:
                continue
            next_tick += 1.0
            line += 1
            for sock, kind in list(self.socks.items()):
                piece = (b'X-Slow-%d: %d\r\n' % (line, line)
                         if kind == 'header' else b' ')
                try:
                    sock.send(piece)
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    self._closed_by_server(sock, kind)
                    self._open(kind)
        # Closed here, by the thread that uses them.
        for sock in list(self.socks):
            sock.close()
        self.selector.close()

    def open_counts(self):
        return collections.Counter(self.socks.values())

    def serve(self, pipe, connect_time):
        """The child process: open them all, report, drive them until
        told to stop, report again."""
        self.selector = selectors.DefaultSelector()
        started = time.monotonic()
        self.open_all(started + connect_time)
        pipe.send((dict(self.open_counts()), time.monotonic() - started))
        self.run_until_stopped(pipe)

    def run_until_stopped(self, pipe):
        still_open = {}

        def watch():
            # Asked to stop: what is open now, then the loop ends.
            pipe.recv()
            still_open.update(self.open_counts())
            self.stop.set()
        threading.Thread(target=watch, daemon=True).start()
        self.run()
        pipe.send((still_open, dict(self.stats)))


def normal_client(endpoint, paths, until, timeout, results,
                  new_connections=False):
    session = requests.Session()
    session.headers.update({'X-Auth-Token': 'admin:admin',
                            'Accept': 'application/json'})
    if new_connections:
        session.headers['Connection'] = 'close'
    i = 0
    while time.monotonic() < until:
        path = paths[i % len(paths)]
        i += 1
        started = time.monotonic()
        try:
            resp = session.get(endpoint + path, timeout=timeout)
            outcome = resp.status_code
        except requests.RequestException as exc:
            outcome = type(exc).__name__
            session.close()
        elapsed = time.monotonic() - started
        results.append(('GET', outcome, elapsed if outcome == 200
                        else max(elapsed, timeout)))


def mover(endpoint, server_id, until, timeout, results):
    """Migrate and confirm one server again and again: its 202s and 204s
    count as normal requests."""
    session = requests.Session()
    session.headers.update({'X-Auth-Token': 'admin:admin',
                            'Content-Type': 'application/json'})
    url = '%s/servers/%s' % (endpoint, server_id)
    while time.monotonic() < until:
        for body, expect, status in (('{"migrate": null}', 202,
                                      'VERIFY_RESIZE'),
                                     ('{"confirmResize": null}', 204,
                                      'ACTIVE')):
            started = time.monotonic()
            try:
                outcome = session.post(url + '/action', data=body,
                                       timeout=timeout).status_code
            except requests.RequestException as exc:
                outcome = type(exc).__name__
            elapsed = time.monotonic() - started
            results.append(('POST', outcome, elapsed if outcome == expect
                            else max(elapsed, timeout)))
            if outcome != expect:
                return
            while time.monotonic() < until + 120:
                try:
                    got = session.get(url, timeout=timeout).json()
                    if got['server']['status'] == status:
                        break
                except (requests.RequestException, ValueError, KeyError):
                    pass
                time.sleep(0.5)


def measure(args, endpoint, server_id=None, api_cpu=None):
    parsed = urllib.parse.urlparse(endpoint)
    if not ipaddress.ip_address(parsed.hostname).is_loopback:
        sys.exit('bench_slow_clients: loopback addresses only')
    limit = raise_nofile()
    if limit < 2 * args.slow + 200:
        sys.exit('bench_slow_clients: RLIMIT_NOFILE %d is too low for %d '
                 'slow clients' % (limit, 2 * args.slow))
    base_path = parsed.path.rstrip('/')
    slow = SlowClients(parsed.hostname, parsed.port, base_path + '/flavors',
                       'X-Auth-Token: admin:admin\r\n',
                       base_path + '/flavors', args.slow)
    pipe, child_pipe = multiprocessing.Pipe()
    driver = multiprocessing.Process(
        target=slow.serve, args=(child_pipe, args.connect_time), daemon=True)
    driver.start()
    if not pipe.poll(args.connect_time + 30):
        driver.kill()
        sys.exit('bench_slow_clients: the slow clients did not open')
    print('slow clients: %s opened in %.1f s' % pipe.recv())
    time.sleep(2)  # the slow ones start their second line first
    cpu_before = api_cpu() if api_cpu else None
    results = []
    until = time.monotonic() + args.duration
    paths = ['/flavors'] + (['/servers/%s' % server_id] if server_id else [])
    threads = [threading.Thread(
        target=normal_client, args=(endpoint, paths, until, args.timeout,
                                    results, args.new_connections))
        for _ in range(args.normal)]
    if server_id and args.migrates:
        threads.append(threading.Thread(
            target=mover, args=(endpoint, server_id, until, args.timeout,
                                results)))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(args.duration + args.timeout + 180)
    pipe.send('stop')
    still_open, slow_stats = (pipe.recv() if pipe.poll(30)
                              else ({}, {'driver': 'did not answer'}))
    driver.join(10)
    if driver.is_alive():
        driver.kill()
    if api_cpu:
        seconds = time.monotonic() - until + args.duration
        spent = api_cpu() - cpu_before
        print('API CPU: %.2f s per s over the run, %.1f ms per normal '
              'request' % (spent / seconds,
                           1000 * spent / max(1, len(results))))
    latencies = sorted(t for _, _, t in results)
    outcomes = collections.Counter('%s %s' % (m, o) for m, o, _ in results)
    print('normal clients: %d (+%d mover), %d requests in %d s: %s' % (
        args.normal, 1 if (server_id and args.migrates) else 0,
        len(results), args.duration, dict(outcomes)))
    if latencies:
        print('normal latency p50 %.1f ms  p99 %.1f ms  max %.1f ms '
              '(failures count as %d s)' % (
                  1000 * percentile(latencies, 0.50),
                  1000 * percentile(latencies, 0.99),
                  1000 * latencies[-1], args.timeout))
    print('slow clients still open at the end: %s' % still_open)
    print('slow clients over the run: %s' % dict(sorted(slow_stats.items())))
    errors = sum(n for o, n in outcomes.items()
                 if o not in ('GET 200', 'POST 202', 'POST 204'))
    print('normal requests answered: %d of %d (%.2f %%)' % (
        len(results) - errors, len(results),
        100.0 * (len(results) - errors) / max(1, len(results))))
    return latencies, errors


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--slow', type=int, default=1000,
                        help='slow-header clients, and as many slow-body')
    parser.add_argument('--normal', type=int, default=16)
    parser.add_argument('--duration', type=int, default=30)
    parser.add_argument('--timeout', type=int, default=10,
                        help='seconds a normal request may take')
    parser.add_argument('--connect-time', type=int, default=60,
                        help='at most this long to open the slow clients')
    parser.add_argument('--migrates', action='store_true',
                        help='one more client migrating and confirming')
    parser.add_argument('--url', help='an API already running (loopback)')
    parser.add_argument('--api-workers', type=int, default=1)
    parser.add_argument('--api-threads', type=int, default=16)
    parser.add_argument('--max-connections', type=int,
                        help='[api] max_connections of the started API')
    parser.add_argument('--per-source', type=int, default=0,
                        help='[api] max_connections_per_source')
    parser.add_argument('--new-connections', action='store_true',
                        help='a new connection for every normal request')
    args = parser.parse_args(argv)
    if not 0 <= args.slow <= MAX_SLOW or not 0 < args.duration <= 600:
        sys.exit('bench_slow_clients: --slow 0..%d, --duration 1..600'
                 % MAX_SLOW)
    if args.url:
        measure(args, args.url.rstrip('/'))
        return 0
    api_conf = {'workers': args.api_workers, 'threads': args.api_threads,
                'max_connections_per_source': args.per_source}
    if args.max_connections:
        api_conf['max_connections'] = args.max_connections
    stack = nm_stack.Stack(computes=2, extra_conf={'api': api_conf})
    stack.start(timeout=300)  # a shared, busy machine starts slowly
    try:
        server_id = None
        if args.migrates:
            admin = stack.client()
            flavor = admin.create_flavor('bench-slow', 1, 256, 1)
            server_id = admin.boot('bench-slow', flavor['id'],
                                   wait=False)['id']
            admin.wait_for_status(server_id, 'ACTIVE', timeout=120)
        measure(args, stack.endpoint, server_id,
                lambda: benchlib.cpu_by_process(stack)['api'])
    finally:
        stack.stop()
    return 0


if __name__ == '__main__':
    sys.exit(main())
