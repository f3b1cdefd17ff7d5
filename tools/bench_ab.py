"""Benchmark (not a test): before/after of bench_cost.py, interleaved.

Runs ``bench_cost.py --counters bare`` alternately on a git ref (checked
out into a temporary worktree and put first on PYTHONPATH, so the stack's
console scripts import its nova_moves) and on this checkout, N times
each, and prints every run and the medians: CPU ms per move of our
processes, completed/s, and what the whole machine, the database
server and RabbitMQ spent per move, and each process's CPU ms per move.
One machine, one session, interleaved: the only comparison this VM's
noise allows (the same code measured ±10 ms per move an hour apart).

    .venv/bin/python tools/bench_ab.py 64967f5 --runs 5
    .venv/bin/python tools/bench_ab.py 64967f5 --runs 3 -- --postgres
    .venv/bin/python tools/bench_ab.py fdc98b3 1ff156e --runs 3 \
        --variant \
        classic='--set oslo_messaging_rabbit.rabbit_quorum_queue=false' \
        -- --kinds cold --private-broker

Several refs run in the same rounds (each round: every ref, then this
checkout, then each ``--variant``: this checkout with extra bench_cost
arguments), so a three- or four-way comparison shares its rounds.

Arguments after ``--`` go to bench_cost.py (default ``--kinds cold``).
"""
import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run_once(pythonpath, bench_args, extra=()):
    """{kind: (cpu ms/move, completed/s, whole machine ms/move, database
    server ms/move, RabbitMQ ms/move)} from one bench_cost run (its
    --json summary); pythonpath None: this checkout."""
    env = dict(os.environ)
    if pythonpath:
        env['PYTHONPATH'] = pythonpath
    with tempfile.NamedTemporaryFile(suffix='.json') as result:
        out = subprocess.run(
            [sys.executable, os.path.join(HERE, 'bench_cost.py'),
             '--counters', 'bare', '--json', result.name] + bench_args
            + list(extra),
            env=env, capture_output=True, text=True)
        if out.returncode != 0:
            sys.stderr.write(out.stdout[-3000:] + out.stderr[-3000:])
            raise SystemExit('bench_cost.py failed (exit %d)'
                             % out.returncode)
        summary = json.load(result)
    return {kind: (v['cpu_ms'], v['completed_per_s'], v['machine_ms'],
                   v['database_ms'], v.get('broker_ms', 0.0),
                   v.get('processes', {}),
                   v.get('api_per_request_ms') or {},
                   v.get('broker_net_ms'), v.get('broker_idle_ms_s'))
            for kind, v in summary.items()}


def worktree(ref):
    path = tempfile.mkdtemp(prefix='bench-ab-')
    subprocess.run(['git', '-C', ROOT, 'worktree', 'add', '--detach', path,
                    ref], check=True, capture_output=True)
    return path


def _load():
    """The 1-minute load average after a run: the other work the
    machine carried (a number only compares with its own pair)."""
    with open('/proc/loadavg') as f:
        return f.read().split()[0]


def _fmt(values):
    return '%s | median %.1f' % (' / '.join('%.1f' % v for v in values),
                                 statistics.median(values))


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    bench_args = ['--kinds', 'cold']
    if '--' in argv:
        i = argv.index('--')
        argv, bench_args = argv[:i], argv[i + 1:] or bench_args
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('before', nargs='+',
                        help='git ref(s) of the "before" code')
    parser.add_argument('--runs', type=int, default=3,
                        help='runs of each side (default 3)')
    parser.add_argument('--after', metavar='REF',
                        help='run the "after" side from a worktree of REF '
                        '(default: this checkout as it is; with REF the '
                        'checkout may change while the rounds run)')
    parser.add_argument('--variant', action='append', default=[],
                        metavar='NAME=ARGS',
                        help='also run this checkout with these extra '
                        'bench_cost arguments in every round')
    args = parser.parse_args(argv)
    # (label, PYTHONPATH or None for this checkout, extra arguments)
    sides = []
    paths = []
    try:
        for ref in args.before:
            path = worktree(ref)
            paths.append(path)
            # The stack's processes must import the worktree's code
            # (asked from '/': ``-c`` puts the current directory first
            # on sys.path, console scripts do not).
            where = subprocess.run(
                [sys.executable, '-c', 'import nova_moves; '
                 'print(nova_moves.__file__)'], capture_output=True,
                text=True, cwd='/',
                env=dict(os.environ, PYTHONPATH=path)).stdout.strip()
            if not where.startswith(path):
                raise SystemExit('PYTHONPATH=%s imports %s' % (path, where))
            print('%s: nova_moves from %s' % (ref, os.path.dirname(where)))
            label = 'before' if len(args.before) == 1 else ref
            sides.append((label, path, ()))
        after = None
        if args.after:
            after = worktree(args.after)
            paths.append(after)
        sides.append(('after', after, ()))
        for variant in args.variant:
            name, _, extra = variant.partition('=')
            sides.append((name, after, shlex.split(extra)))
        runs = {label: [] for label, _, _ in sides}
        for i in range(args.runs):
            for side, pythonpath, extra in sides:
                result = run_once(pythonpath, bench_args, extra)
                runs[side].append(result)
                print('run %d %-6s %s  (load %s)' % (i + 1, side, '  '.join(
                    '%s %.1f ms/move %.1f/s whole %.1f database %.1f '
                    'RabbitMQ %.1f' % ((k,) + v[:5])
                    for k, v in result.items()), _load()),
                    flush=True)
    finally:
        for path in paths:
            subprocess.run(['git', '-C', ROOT, 'worktree', 'remove',
                            '--force', path], capture_output=True)
            shutil.rmtree(path, ignore_errors=True)
    print('\nbefore = %s, after = this checkout; %s' % (
        ' '.join(args.before), ' '.join(bench_args)))
    for kind in runs['after'][0]:
        for label, idx in (('CPU ms/move, ours', 0), ('completed/s', 1),
                           ('whole machine ms/move', 2),
                           ('database server ms/move', 3),
                           ('RabbitMQ ms/move', 4)):
            for side in runs:
                print('%-9s %-22s %-6s %s' % (kind, label, side, _fmt(
                    [r[kind][idx] for r in runs[side] if kind in r])))
        # A private node's RabbitMQ with its idle rate taken out, and
        # that rate (bench_cost --private-broker).
        for label, idx in (('RabbitMQ above idle', 7),
                           ('RabbitMQ idle ms/s', 8)):
            for side in runs:
                values = [r[kind][idx] for r in runs[side]
                          if kind in r and r[kind][idx] is not None]
                if values:
                    print('%-9s %-22s %-6s %s' % (kind, label, side,
                                                  _fmt(values)))
        names = sorted({n for side in runs.values() for r in side
                        if kind in r for n in r[kind][5]})
        for name in names:
            for side in runs:
                values = [r[kind][5][name] for r in runs[side]
                          if name in r.get(kind, ((),) * 7)[5]]
                if values:
                    print('%-9s %-22s %-6s %s' % (
                        kind, 'ms/move ' + name, side, _fmt(values)))
        # The cold phase's API CPU per request (migrate, confirm).
        requests = sorted({n for side in runs.values() for r in side
                           if kind in r for n in r[kind][6]})
        for name in requests:
            for side in runs:
                values = [r[kind][6][name] for r in runs[side]
                          if name in r.get(kind, ((),) * 7)[6]]
                if values:
                    print('%-9s %-22s %-6s %s' % (
                        kind, 'API ms/' + name, side, _fmt(values)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
