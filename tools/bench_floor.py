"""Benchmark (not a test): the messaging floor, what oslo.messaging costs
per RPC call and per cast, both ends, set up as our services set it up.

Issue 38's target is a cold migrate + confirm at no more than 3x the
messaging floor measured in the same session; a cold move is 5 calls and
5 casts. An RPC server runs in a process of its own (nova_moves.rpc's
get_server: the threading executor, the calls queues, the context
serializer, kombu_autoretry; options parsed as service.prepare does, the
heap frozen as service.run does) with a trivial endpoint, and a client in
another process calls as the rpcapi modules do (calls on the calls queues
through rpc.get_client's calls_version, casts as a move step is cast:
mandatory, with [DEFAULT] move_step_cast_retries, rpc.cast_waiting).
Each process's CPU (user + sys from /proc, its idle rate measured for
--idle seconds first and subtracted) and the private broker node's are
read around --messages calls, issued one after the other (and by each
of --threads K threads), then as many casts, waited for until the server
has handled every one. Both queue kinds run in the same session,
interleaved over --rounds rounds: 'quorum' (as shipped) and 'classic'
(rabbit_quorum_queue = false), each in a vhost of its own; a pair of
fresh processes, on a topic of their own, per kind and round. Calls
travel on the calls queues, which are classic (transient) in both: only
the casts change queue kind.

    .venv/bin/python tools/bench_floor.py [--rounds 3] [--messages 500]
        [--threads 1,4] [--payload BYTES] [--vhost] [--json FILE]

By default on a private RabbitMQ node (its CPU is the broker column);
--vhost: fresh vhosts on the machine's broker instead (no broker column:
that node carries other work). Every round is printed, then each
column's median. Results go in doc/performance.md.
"""
import argparse
import configparser
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid

KINDS = (('quorum', 'true'), ('classic', 'false'))
COLD = (5, 5)  # a cold migrate + confirm: calls, casts
SERVER = 'floor'


# -- the two processes ----------------------------------------------------
def say(text):
    sys.stdout.write('floor: %s\n' % text)
    sys.stdout.flush()


def child(args):
    import oslo_messaging as messaging
    from nova_moves import context as nm_context
    from nova_moves import rpc
    from nova_moves import service
    service.prepare(['nova-moves-floor', '--config-file', args.config],
                    'nova-moves-floor')

    class Endpoint:
        target = messaging.Target(version='1.0')

        def __init__(self):
            self.lock = threading.Lock()
            self.handled = self.expected = 0

        def ping(self, ctxt, n, pad=None):
            return n

        def step(self, ctxt, n, pad=None):
            with self.lock:
                self.handled += 1
                if self.handled == self.expected:
                    say('handled')

    if args.role == 'server':
        endpoint = Endpoint()
        server = rpc.get_server(messaging.Target(topic=args.topic,
                                                 server=SERVER), [endpoint])
        server.start()
        service.freeze_heap()
        say('ready')
        for line in sys.stdin:  # "expect N": casts to come
            with endpoint.lock:
                endpoint.expected = endpoint.handled + int(line.split()[1])
            say('ok')
        server.stop()
        server.wait()
    else:
        target = messaging.Target(topic=args.topic, version='1.0')
        calls = rpc.get_client(target, calls_version='1.0')
        steps = rpc.get_client(target, mandatory=True)
        ctxt = nm_context.get_admin_context()
        retries = service.CONF.move_step_cast_retries
        # --payload: the move steps' arguments are not a bare number (a
        # cold move's calls and casts were 1.3-2.4 KB on the wire,
        # 2026-11-30; replies carry no padding).
        extra = {'pad': 'x' * args.payload} if args.payload else {}

        def send(kind, i):
            if kind == 'call':
                calls.prepare().call(ctxt, 'ping', n=i, **extra)
            else:
                rpc.cast_waiting(steps.prepare(server=SERVER, retry=retries),
                                 ctxt, 'step', n=i, **extra)
        service.freeze_heap()
        say('ready')
        for line in sys.stdin:  # "call|cast N K"
            kind, n, k = line.split()
            n, k = int(n), int(k)
            workers = [threading.Thread(target=lambda j=j: [
                send(kind, i) for i in range(j, n, k)]) for j in range(k)]
            start = time.monotonic()
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join()
            say('done %.6f' % (time.monotonic() - start))
    rpc.cleanup()


class Pair:
    """A server and a client process on a topic of their own."""

    def __init__(self, workdir, url, kind, quorum, payload=0):
        self.kind = kind
        topic = 'floor_%s_%s' % (kind, uuid.uuid4().hex[:8])
        parser = configparser.ConfigParser(interpolation=None)
        parser['DEFAULT'] = {'transport_url': url, 'debug': 'false',
                             'log_file': os.path.join(workdir, topic + '.log')}
        # As the harness's stacks run (tools/bench_cost.py's figures).
        parser['oslo_messaging_rabbit'] = {
            'rabbit_quorum_queue': quorum, 'heartbeat_timeout_threshold': '0'}
        config = os.path.join(workdir, topic + '.conf')
        with open(config, 'w') as f:
            parser.write(f)
        self.procs = {}
        for role in ('server', 'client'):
            with open(os.path.join(workdir, '%s-%s.err' % (topic, role)),
                      'w') as err:
                self.procs[role] = subprocess.Popen(
                    [sys.executable, os.path.abspath(__file__), '--role',
                     role, '--config', config, '--topic', topic,
                     '--payload', str(payload)],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    stderr=err, text=True, bufsize=1)
            self.reply(role, 120)  # ready

    def reply(self, role, timeout=300):
        proc = self.procs[role]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if select.select([proc.stdout], [], [], 1)[0]:
                line = proc.stdout.readline()
                if not line:
                    break
                if line.startswith('floor: '):
                    return line[7:].split()
        raise RuntimeError('%s %s: no answer (exit %s); see its .err and '
                           '.log files' % (self.kind, role, proc.poll()))

    def ask(self, role, line):
        self.procs[role].stdin.write(line + '\n')
        self.procs[role].stdin.flush()
        return self.reply(role)

    def send(self, kind, n, threads):
        """Elapsed seconds until the client sent them all (calls: got
        every reply) and, for casts, the server handled them all."""
        start = time.monotonic()
        if kind == 'cast':
            self.ask('server', 'expect %d' % n)
        self.ask('client', '%s %d %d' % (kind, n, threads))
        if kind == 'cast':
            self.reply('server')  # handled
        return time.monotonic() - start

    def close(self):
        for proc in self.procs.values():
            proc.stdin.close()
        for proc in self.procs.values():
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


# -- measuring ------------------------------------------------------------
def measure(pair, args, broker_cpu):
    """{threads: {kind: {'client'|'server'|'broker'|'wall': ms each}}}."""
    from nova_moves.harness import cost

    def snapshot():
        out = {role: cost.process_cpu(proc.pid, {})
               for role, proc in pair.procs.items()}
        out['broker'] = broker_cpu() or 0.0
        return out
    for kind in ('call', 'cast'):  # connections, queues, first messages
        pair.send(kind, args.warmup, 1)
    time.sleep(1)
    before = snapshot()
    time.sleep(args.idle)
    idle = {k: (v - before[k]) / args.idle for k, v in snapshot().items()}
    out = {}
    for threads in args.threads:
        for kind in ('call', 'cast'):
            before = snapshot()
            elapsed = pair.send(kind, args.messages, threads)
            after = snapshot()
            row = {k: 1000.0 * (after[k] - before[k] - idle[k] * elapsed)
                   / args.messages for k in after}
            row['wall'] = 1000.0 * elapsed / args.messages
            out.setdefault(threads, {})[kind] = row
    return out


def figures(m):
    """The line's numbers from one kind's {'call': row, 'cast': row}."""
    f = {}
    for kind in ('call', 'cast'):
        for k in ('client', 'server', 'broker', 'wall'):
            f['%s_%s' % (kind, k)] = m[kind][k]
        f[kind + '_both'] = m[kind]['client'] + m[kind]['server']
    f['cold_floor'] = COLD[0] * f['call_both'] + COLD[1] * f['cast_both']
    f['cold_broker'] = f['cold_floor'] + COLD[0] * f['call_broker'] + \
        COLD[1] * f['cast_broker']
    return f


def line(label, f, broker):
    text = ('%-16s call %5.2f + %5.2f = %5.2f ms (wall %5.2f)   cast %5.2f + '
            '%5.2f = %5.2f ms (wall %5.2f)' % (
                label, f['call_client'], f['call_server'], f['call_both'],
                f['call_wall'], f['cast_client'], f['cast_server'],
                f['cast_both'], f['cast_wall']))
    if broker:
        text += '   broker call %4.2f cast %4.2f' % (f['call_broker'],
                                                     f['cast_broker'])
    text += '   cold move %d+%d: %5.1f ms' % (COLD + (f['cold_floor'],))
    if broker:
        text += ', with broker %5.1f' % f['cold_broker']
    return text


def load():
    return ' '.join('%.2f' % x for x in os.getloadavg())


def run(args, urls, broker_cpu, broker):
    workdir = tempfile.mkdtemp(prefix='bench-floor-')
    print('client + server CPU ms per message (idle subtracted), '
          'wall ms per message; logs in %s' % workdir)
    rounds = []
    for r in range(args.rounds):
        kinds = KINDS if r % 2 == 0 else KINDS[::-1]
        result = {}
        for kind, quorum in kinds:
            pair = Pair(workdir, urls[kind], kind, quorum, args.payload)
            try:
                measured = measure(pair, args, broker_cpu)
            finally:
                pair.close()
            for threads, m in measured.items():
                f = result.setdefault(kind, {})[threads] = figures(m)
                print(line('round %d %s x%d' % (r + 1, kind, threads), f,
                           broker), flush=True)
        print('  load %s' % load(), flush=True)
        rounds.append(result)
    medians = {kind: {threads: {key: statistics.median(
        r[kind][threads][key] for r in rounds) for key in rounds[0][kind][
        threads]} for threads in args.threads} for kind, _ in KINDS}
    print('\nmedians over %d rounds (each column its own), %d messages%s:'
          % (args.rounds, args.messages, ', payload %d B' % args.payload
             if args.payload else ''))
    for kind, _ in KINDS:
        for threads in args.threads:
            print(line('%s x%d' % (kind, threads), medians[kind][threads],
                       broker))
    print('load average %s' % load())
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'rounds': rounds, 'medians': medians,
                       'messages': args.messages, 'broker': broker,
                       'payload': args.payload,
                       'load': os.getloadavg()}, f, indent=1)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--messages', type=int, default=500,
                        help='calls, then casts, per measurement')
    parser.add_argument('--threads', default='1',
                        type=lambda v: [int(x) for x in v.split(',')],
                        help='client threads, e.g. 1,4: each a measurement')
    parser.add_argument('--warmup', type=int, default=50)
    parser.add_argument('--payload', type=int, default=0, metavar='BYTES',
                        help='a string argument of BYTES characters on '
                             'every call and cast (default: none)')
    parser.add_argument('--idle', type=float, default=3.0,
                        help='seconds of idle CPU measured first')
    parser.add_argument('--vhost', action='store_true',
                        help="a fresh vhost on the machine's broker "
                             '(no broker column)')
    parser.add_argument('--json', metavar='FILE')
    parser.add_argument('--role', choices=('server', 'client'),
                        help=argparse.SUPPRESS)
    parser.add_argument('--config', help=argparse.SUPPRESS)
    parser.add_argument('--topic', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.role:
        return child(args)
    print('machine: %d CPUs, load %s' % (os.cpu_count(), load()), flush=True)
    import bench_cost
    from nova_moves.harness import rabbit_cluster
    from nova_moves.harness import stack
    broker = None
    if args.vhost:
        ctl, base = stack.rabbitmqctl, stack.DEFAULT_BROKER
    else:
        broker = rabbit_cluster.RabbitCluster(1).start()
        ctl, base = broker.ctl, broker.url
    # A vhost per kind: the exchanges are durable with quorum queues only.
    vhosts = {kind: 'nova-moves-floor-%s-%s' % (kind, uuid.uuid4().hex[:8])
              for kind, _ in KINDS}
    try:
        for vhost in vhosts.values():
            ctl('add_vhost', vhost)
            ctl('set_permissions', '-p', vhost, 'guest', '.*', '.*', '.*')
        run(args, {kind: base + vhost for kind, vhost in vhosts.items()},
            lambda: bench_cost.broker_cpu(broker), broker is not None)
    finally:
        if broker is not None:
            broker.stop()
        else:
            for vhost in vhosts.values():
                ctl('delete_vhost', vhost)
    return 0

if __name__ == '__main__':
    sys.exit(main())
