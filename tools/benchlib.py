"""What the benchmarks share: CPU read per process of a running stack
(the harness's /proc reading, API workers counted under the API), the
machine's and its servers' CPU (psutil) and py-spy profiles of every
process, summarized by leaf frame, package and our innermost frame."""
import collections
import os
import shutil
import signal
import subprocess
import sys
import time

import psutil

from nova_moves.harness import cost


def _procs(stack):
    """{name: [psutil.Process]} with API workers under the API."""
    out = {}
    for name, proc in stack.processes.items():
        if not proc.alive():
            continue
        try:
            top = psutil.Process(proc.popen.pid)
            out[name] = [top] + top.children(recursive=True)
        except psutil.NoSuchProcess:
            pass
    return out


def cpu_by_process(stack):
    """{name: CPU seconds} of the stack's processes, API workers under the
    API (the harness's reading, nova_moves/harness/cost.py)."""
    return {name: seconds for name, (_pid, seconds) in
            cost.snapshot(stack).items()}


# The servers every move also runs on the same cores: RabbitMQ and the
# database (SQLite has none: it runs inside our processes).
SERVERS = {'broker': ('beam.smp', 'erl_child_setup', 'epmd'),
           'database': ('postgres', 'mariadbd', 'mysqld')}


def machine_cpu():
    """{'machine': busy CPU seconds of the whole machine (/proc/stat),
    'broker': ..., 'database': ...} since boot, to be differenced."""
    with open('/proc/stat') as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    tick = float(os.sysconf('SC_CLK_TCK'))
    # user nice system idle iowait irq softirq steal: steal is not ours.
    out = {'machine': (sum(fields[:7]) - fields[3] - fields[4]) / tick,
           # Interrupt time is no process's: on loopback it is mostly
           # the packets of every RPC and SQL round trip.
           'irq': (fields[5] + fields[6]) / tick}
    for key in SERVERS:
        out[key] = 0.0
    for p in psutil.process_iter(['name', 'cpu_times']):
        for key, names in SERVERS.items():
            times = p.info['cpu_times']
            if p.info['name'] in names and times:
                # children_*: the processes it reaped, e.g. PostgreSQL's
                # backends whose connection closed during the run
                # (counted in "the rest" otherwise).
                out[key] += (times.user + times.system +
                             times.children_user + times.children_system)
    return out


def pid_names(stack):
    return {p.pid: name for name, procs in _procs(stack).items()
            for p in procs}


def start_profilers(stack, directory):
    pyspy = shutil.which('py-spy') or os.path.join(
        os.path.dirname(sys.executable), 'py-spy')
    os.makedirs(directory, exist_ok=True)
    profilers = []
    for name, procs in _procs(stack).items():
        for p in procs:
            out = os.path.join(directory, '%s-%d.txt' % (name, p.pid))
            profilers.append((name, out, subprocess.Popen(
                [pyspy, 'record', '--pid', str(p.pid), '--format', 'raw',
                 '--rate', '200', '--nonblocking', '--gil', '-o', out],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)))
    time.sleep(1)
    return profilers


def stop_profilers(profilers):
    for _name, _out, proc in profilers:
        proc.send_signal(signal.SIGINT)
    for _name, _out, proc in profilers:
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
    return [(name, out) for name, out, _ in profilers]


# Leaves where a thread waits (py-spy counts some native waits as busy):
# the broker socket, a queue, the SQLite write-lock flock, gunicorn's
# arbiter.
IDLE_LEAVES = ('wait (threading', 'select (selectors', 'poll (selectors',
               '_wait_for_tstate_lock', 'sleep (', 'accept (socket',
               'recv_into (', 'epoll', 'drain_events', 'read (ssl',
               'TCPTransport._read', '_fair_write_lock (', 'Queue.get (',
               '_worker (concurrent', 'wait_for_signals (',
               'Condition.__enter__ (')
PACKAGES = ('sqlalchemy', 'oslo_messaging', 'kombu', 'amqp', 'oslo_db',
            'oslo_log', 'oslo_policy', 'oslo_config', 'oslo_context',
            'jsonschema', 'werkzeug', 'flask', 'gunicorn', 'logging',
            'json', 'nova_moves', 'futurist', 'psycopg2', 'sqlite3',
            'webob')


def _frame_package(frame):
    # py-spy raw frames look like "func (path/to/module.py:123)", the
    # path relative to site-packages or the standard library.
    path = '/' + frame.rsplit('(', 1)[-1]
    for key in PACKAGES:
        if '/%s/' % key in path or '/%s.py' % key in path:
            return key
    return 'other'


def summarize_profile(path, top=12):
    """(busy samples, [(share, leaf frame)], [(share, package)],
    [(share, innermost nova_moves frame)])."""
    leaves, packages, busy = collections.Counter(), collections.Counter(), 0
    mine = collections.Counter()
    with open(path, errors='replace') as f:
        for line in f:
            stack, _, count = line.rstrip('\n').rpartition(' ')
            if not stack or not count.isdigit():
                continue
            frames = stack.split(';')
            leaf = frames[-1]
            if any(idle in leaf for idle in IDLE_LEAVES):
                continue
            n = int(count)
            busy += n
            leaves[leaf] += n
            ours = [fr for fr in frames if '(nova_moves/' in fr]
            if ours:
                # The innermost frame of ours: where our code spends it.
                mine[ours[-1]] += n
            for package in {_frame_package(fr) for fr in frames[1:]} - {
                    'other'}:
                packages[package] += n
    if not busy:
        return 0, [], [], []

    def shares(counter):
        return [(100.0 * n / busy, k) for k, n in counter.most_common(top)]
    return busy, shares(leaves), shares(packages), shares(mine)


def print_profiles(files):
    by_name = collections.defaultdict(list)
    for name, out in files:
        if os.path.exists(out):
            by_name[name].append(out)
    for name in sorted(by_name):
        for out in by_name[name]:
            busy, leaves, packages, mine = summarize_profile(out)
            if busy < 20:
                continue  # gunicorn's arbiter, an idle thread
            print('\nprofile %s (%s, %d busy samples)' % (
                name, os.path.basename(out), busy))
            print('  inclusive by package: ' + ', '.join(
                '%s %.0f%%' % (p, s) for s, p in packages))
            print('  top frames (self):')
            for share, leaf in leaves:
                print('  %5.1f%%  %s' % (share, leaf[:110]))
            print('  innermost nova_moves frame (inclusive):')
            for share, frame in mine:
                print('  %5.1f%%  %s' % (share, frame[:110]))
