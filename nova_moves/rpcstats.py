"""RPC timing measured inside the processes themselves.

Every process that sets ``[DEFAULT] rpc_stats_dir`` counts its RPC
client calls and casts and its server-side handler runs per method, in
log-scale latency buckets so that the files of many processes can be
summed and percentiles read from the sum. Each process rewrites
``<dir>/<prog>-<host>-<pid>.json`` every 0.2 s (when something
changed) and on a clean exit, with the handlers still running; so a
process killed by a fault leaves its counts up to its death, what it was
in the middle of, and (no ``closed`` mark) the sign that it died. The
harness merges the directory with :func:`merge_dir`.
"""
import atexit
import json
import math
import os
import sys
import threading
import time

# Bucket k holds durations in (10**((k-1)/BUCKETS_PER_DECADE),
# 10**(k/BUCKETS_PER_DECADE)] milliseconds: about 12% wide.
BUCKETS_PER_DECADE = 20
# Seconds between two writes of a process's file: what a SIGKILL loses.
FLUSH_INTERVAL = 0.2
# An idle process still rewrites its file this often, so a file older
# than a few of these means the process is gone.
HEARTBEAT = 2.0


def bucket_of(seconds):
    ms = max(seconds * 1000.0, 1e-3)
    return int(math.ceil(math.log10(ms) * BUCKETS_PER_DECADE))


def bucket_upper_ms(k):
    return 10 ** (k / BUCKETS_PER_DECADE)


class Stat:
    """Count, errors, total and a bucketed histogram of one method."""

    def __init__(self):
        self.count = 0
        self.errors = 0
        self.total = 0.0
        self.max = 0.0
        self.buckets = {}

    def add(self, seconds, error=False):
        self.count += 1
        self.errors += int(bool(error))
        self.total += seconds
        self.max = max(self.max, seconds)
        k = bucket_of(seconds)
        self.buckets[k] = self.buckets.get(k, 0) + 1

    def to_dict(self):
        return {'count': self.count, 'errors': self.errors,
                'total_s': self.total, 'max_s': self.max,
                'buckets': {str(k): n for k, n in self.buckets.items()}}

    @classmethod
    def from_dict(cls, data):
        stat = cls()
        stat.merge_dict(data)
        return stat

    def merge_dict(self, data):
        self.count += data['count']
        self.errors += data.get('errors', 0)
        self.total += data['total_s']
        self.max = max(self.max, data.get('max_s', 0.0))
        for k, n in data['buckets'].items():
            self.buckets[int(k)] = self.buckets.get(int(k), 0) + n

    def percentile_ms(self, pct):
        if not self.count:
            return None
        rank = max(1, int(math.ceil(self.count * pct / 100.0)))
        seen = 0
        for k in sorted(self.buckets):
            seen += self.buckets[k]
            if seen >= rank:
                return min(bucket_upper_ms(k), self.max * 1000.0)
        return self.max * 1000.0


class Recorder:
    """The per-process table: {kind: {method: Stat}} where kind is
    'call', 'cast' (client side, time to return or to hand the message to
    the broker) or 'handle' (server side, time the handler ran)."""

    def __init__(self, directory, name):
        self.directory = directory
        self.path = os.path.join(directory, '%s-%d.json' % (name, os.getpid()))
        self.name = name
        self._lock = threading.Lock()
        self._stats = {}
        self._in_flight = {}
        self._dirty = False
        self._written = 0.0
        self._stop = threading.Event()
        self.started = time.time()

    def begin(self, method):
        """A handler started: counted as in flight until its record()."""
        with self._lock:
            self._in_flight[method] = self._in_flight.get(method, 0) + 1
            self._dirty = True

    def record(self, kind, method, seconds, error=False):
        with self._lock:
            if kind == 'handle' and self._in_flight.get(method):
                self._in_flight[method] -= 1
            table = self._stats.setdefault(kind, {})
            stat = table.get(method)
            if stat is None:
                stat = table[method] = Stat()
            stat.add(seconds, error)
            self._dirty = True

    def dump(self, closed=False):
        with self._lock:
            if not (self._dirty or closed or time.time() - self._written >
                    HEARTBEAT) and os.path.exists(self.path):
                return
            self._written = time.time()
            data = {'process': self.name, 'pid': os.getpid(),
                    'started': self.started, 'written': time.time(),
                    'closed': closed,
                    'in_flight': {m: n for m, n in self._in_flight.items()
                                  if n},
                    'stats': {kind: {m: s.to_dict() for m, s in t.items()}
                              for kind, t in self._stats.items()}}
            self._dirty = False
        tmp = self.path + '.tmp'
        with open(tmp, 'w') as f:
            json.dump(data, f)
        os.replace(tmp, self.path)

    def _loop(self):
        while not self._stop.wait(FLUSH_INTERVAL):
            try:
                self.dump()
            except OSError:
                pass

    def start(self):
        os.makedirs(self.directory, exist_ok=True)
        threading.Thread(target=self._loop, daemon=True,
                         name='rpc-stats').start()
        atexit.register(self.close)

    def close(self):
        self._stop.set()
        try:
            self.dump(closed=True)
        except OSError:
            pass


class _Recorders:
    """The process's recorder, built on first use; kept on a class like
    rpc._Transports so nothing global changes at import time."""
    recorder = None
    lock = threading.Lock()


def process_name(host):
    prog = os.path.basename(sys.argv[0] or 'python') or 'python'
    return '%s-%s' % (prog, host)


def get_recorder(directory, host):
    """The recorder of this process, or None when stats are off."""
    if not directory:
        return None
    with _Recorders.lock:
        if _Recorders.recorder is None:
            _Recorders.recorder = Recorder(directory, process_name(host))
            _Recorders.recorder.start()
        return _Recorders.recorder


def _process_entry(data, name):
    """What the report says about one process file: who, since when,
    last sign of life, whether it exited cleanly, and its own counts."""
    return {'process': data.get('process', name), 'pid': data.get('pid'),
            'started': data.get('started'), 'written': data.get('written'),
            'closed': bool(data.get('closed')),
            'in_flight': data.get('in_flight') or {},
            'counts': {kind: {m: s['count'] for m, s in table.items()}
                       for kind, table in data.get('stats', {}).items()}}


def merge_dir(directory):
    """{kind: {method: Stat}} summed over every process file, plus one
    entry per process file (see _process_entry)."""
    merged = {}
    processes = []
    if not directory or not os.path.isdir(directory):
        return merged, processes
    for name in sorted(os.listdir(directory)):
        if not name.endswith('.json'):
            continue
        try:
            with open(os.path.join(directory, name)) as f:
                data = json.load(f)
        except (OSError, ValueError):
            continue
        processes.append(_process_entry(data, name))
        for kind, table in data.get('stats', {}).items():
            for method, stat in table.items():
                merged.setdefault(kind, {}).setdefault(
                    method, Stat()).merge_dict(stat)
    return merged, processes


def summarize(merged):
    """Rows for the report: one per method with call/cast/handle numbers."""
    methods = sorted({m for table in merged.values() for m in table})
    rows = []
    for method in methods:
        row = {'method': method}
        for kind in ('call', 'cast', 'handle'):
            stat = merged.get(kind, {}).get(method)
            if stat is None:
                continue
            row[kind] = {'count': stat.count, 'errors': stat.errors,
                         'mean_ms': stat.total * 1000.0 / stat.count,
                         'p50_ms': stat.percentile_ms(50),
                         'p95_ms': stat.percentile_ms(95),
                         'p99_ms': stat.percentile_ms(99),
                         'max_ms': stat.max * 1000.0,
                         # The histogram: harness compare tests changes
                         # on these samples (harness/stats.py).
                         'buckets': {str(k): n for k, n in
                                     sorted(stat.buckets.items())}}
        rows.append(row)
    return rows


def diff(after, before):
    """``after`` minus ``before`` (two merge_dir results), so that an
    attached run reports only its own traffic."""
    out = {}
    for kind, table in after.items():
        for method, stat in table.items():
            old = before.get(kind, {}).get(method)
            new = Stat()
            new.count = stat.count - (old.count if old else 0)
            new.errors = stat.errors - (old.errors if old else 0)
            new.total = stat.total - (old.total if old else 0.0)
            new.max = stat.max
            for k, n in stat.buckets.items():
                left = n - (old.buckets.get(k, 0) if old else 0)
                if left:
                    new.buckets[k] = left
            if new.count > 0:
                out.setdefault(kind, {})[method] = new
    return out
