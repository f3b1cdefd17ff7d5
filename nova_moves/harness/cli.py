"""nova-moves-harness: run a scenario against real processes.

  nova-moves-harness list
  nova-moves-harness run quickstart [--out DIR] [--no-plot] [--quiet]
                                    [--repeat N]
  nova-moves-harness run my.yaml --os-cloud mycloud --attach \\
      [--rpc-stats-dir DIR]     (or --endpoint URL --os-auth-type none)
  nova-moves-harness compare A/report.json B/report.json [--png FILE]
      [--fail-if "resize.api.p99 > 1.2x"] [--budget FILE]

Exit status: 0 when every invariant holds (compare: every budget holds),
1 when one fails, 2 for a bad scenario or command line, 3 when the run
itself broke."""
import argparse
import importlib
import json
import os
import signal
import sys
import threading
import time

from nova_moves import cliauth
from nova_moves.harness import compare as nm_compare
from nova_moves.harness import report as nm_report
from nova_moves.harness import scenario as nm_scenario
from nova_moves import version as nm_version

# Scenarios that are a Python script, not a YAML file: they need what
# the YAML schema has no words for (cells, a cell's own broker node and
# database). Run and listed by name like the bundled files.
DRIVEN = {'cells-outage': 'nova_moves.harness.cells_outage'}


def _parser():
    parser = argparse.ArgumentParser(prog='nova-moves-harness',
                                     description=__doc__.split('\n')[0])
    parser.add_argument('--version', action='version',
                        version=nm_version.version_string())
    sub = parser.add_subparsers(dest='command')
    sub.required = True
    sub.add_parser('list', help='List the bundled scenarios')
    show = sub.add_parser('show', help='Print a scenario after validation')
    show.add_argument('scenario')
    scen = sub.add_parser('scenario', help='Check scenario files or print '
                          'their schema')
    scen_sub = scen.add_subparsers(dest='scenario_command')
    scen_sub.required = True
    check = scen_sub.add_parser('validate', help='Check scenario files: '
                                'every problem with its line; exit 2 if any')
    check.add_argument('files', nargs='+', metavar='FILE')
    scen_sub.add_parser('schema', help='Print the scenario reference '
                        '(the one in doc/harness.md)')
    run = sub.add_parser('run', help='Run a scenario')
    run.add_argument('scenario', help='a YAML file or a bundled name')
    run.add_argument('--attach', action='store_true',
                     help='attach to the deployment the credentials '
                     '(--os-cloud, OS_*) name, at the catalog\'s compute '
                     'endpoint, instead of starting a stack')
    cliauth.add_arguments(run, endpoint_help=(
        'attach to the API at this endpoint (http://HOST:PORT/v2.1) '
        'instead of starting a stack; with --os-auth-type none its '
        'loopback noauth mode'))
    run.add_argument('--token', dest='os_token', help=argparse.SUPPRESS)
    run.add_argument('--rpc-stats-dir', help='with --endpoint: the '
                     '[DEFAULT] rpc_stats_dir of the running processes')
    run.add_argument('--keep', action='store_true',
                     help='with --endpoint: leave the servers and flavors '
                     'the run created (default: delete them at the end)')
    run.add_argument('--allow-faults', action='store_true',
                     help='with --endpoint: apply the scenario\'s '
                     'force-down / force-up / set-faults steps to that '
                     'deployment (refused otherwise)')
    run.add_argument('--out', help='directory for report.json and the '
                     'pictures (default ./harness-<scenario>-<time>)')
    run.add_argument('--no-plot', action='store_true',
                     help='do not draw the PNG pictures')
    run.add_argument('--quiet', action='store_true',
                     help='no progress bars or progress messages')
    run.add_argument('--repeat', type=int, default=1, metavar='N',
                     help='run N times (run-1/ .. run-N/ under --out); the '
                     'report gives the median and the spread, and '
                     '`compare` tests every metric over the runs')
    plot = sub.add_parser('plot', help='Draw the pictures of a run again '
                          'from its report.json')
    plot.add_argument('report', help='a report.json or its run directory')
    plot.add_argument('--out', help='directory for the PNGs (default: the '
                      'report\'s)')
    cmp = sub.add_parser('compare', help='Compare report.json files: the '
                         'first is the baseline')
    cmp.add_argument('reports', nargs='+', metavar='REPORT',
                     help='report.json files (or the run directories)')
    cmp.add_argument('--png', help='draw the ratios to this PNG file')
    cmp.add_argument('--fail-if', action='append', default=[],
                     metavar='BUDGET', help='e.g. "resize.api.p99 > 1.2x" '
                     '(ratio to the baseline) or "resize.api.p99 > 800" '
                     '(absolute); METRIC may use * and ?; repeatable')
    cmp.add_argument('--budget', help='a file of budgets, one per line, '
                     '# comments')
    cmp.add_argument('--alpha', type=float,
                     default=nm_compare.DEFAULT_ALPHA,
                     help='error rate of the tests over all the metrics '
                     '(default 0.05)')
    cmp.add_argument('--correction', choices=sorted(
                     nm_compare.nm_stats.CORRECTIONS), default='holm',
                     help='multiple-comparison correction: holm (family-'
                     'wise error, default) or bh (Benjamini-Hochberg, '
                     'false discovery rate)')
    cmp.add_argument('--min-effect', '--noise', dest='min_effect',
                     type=float, default=nm_compare.DEFAULT_MIN_EFFECT,
                     help='smallest relative change worth reporting: a '
                     'metric is changed when it moved by more than this '
                     'with confidence (default 0.1)')
    cmp.add_argument('--all', action='store_true',
                     help='show every metric, not only the changed ones')
    return parser


def _list():
    for name, module in sorted(DRIVEN.items()):
        print('%-22s %s' % (name, importlib.import_module(module)
                            .DESCRIPTION))
    for name, path in nm_scenario.bundled().items():
        try:
            description = nm_scenario.load(path).get('description', '')
        except nm_scenario.ScenarioError as exc:
            description = 'INVALID: %s' % exc
        print('%-22s %s' % (name, description.strip().split('\n')[0]))
    return 0


def _scenario(args):
    if args.scenario_command == 'schema':
        from nova_moves.harness import scenario_doc
        print(scenario_doc.render())
        return 0
    worst = 0
    for path in args.files:
        try:
            data = nm_scenario.load(path)
        except nm_scenario.ScenarioError as exc:
            print('%s' % exc, file=sys.stderr)
            worst = 2
            continue
        print('%s: OK (%s: %d phases, %d faults, %d servers)' % (
            path, data['name'], len(data['phases']), len(data['faults']),
            sum(g['count'] for g in data['servers'])))
    return worst


def _compare(args):
    paths = [os.path.join(p, 'report.json') if os.path.isdir(p) else p
             for p in args.reports]
    if len(paths) < 2:
        raise nm_compare.CompareError('compare needs at least two reports')
    budgets = [nm_compare.parse_budget(b) for b in args.fail_if]
    if args.budget:
        budgets += nm_compare.read_budget_file(args.budget)
    reports = [nm_compare.load(p) for p in paths]
    names = [_short_name(p) for p in paths]
    all_rows = [nm_compare.compare(reports[0], other, args.min_effect,
                                   args.alpha, args.correction)
                for other in reports[1:]]
    print(nm_compare.render(names, all_rows, show_all=args.all))
    for line in nm_compare.summary_lines(names, reports, all_rows,
                                         args.alpha, args.min_effect,
                                         args.correction):
        print(line)
    if args.png:
        try:
            for path in nm_compare.plot(names, all_rows, args.png):
                print('png       %s' % path)
        except ImportError as exc:
            # matplotlib is the [harness] extra: the text comparison and
            # the budgets still stand without it.
            print('nova-moves-harness: no picture (%s): %s' % (
                exc, EXTRA_HINT), file=sys.stderr)
    failures = [f for rows in all_rows
                for f in nm_compare.check_budgets(budgets, rows)]
    for failure in failures:
        print('BUDGET EXCEEDED %s' % failure)
    if budgets and not failures:
        print('Budgets: %d OK' % len(budgets))
    return 1 if failures else 0


def _short_name(path):
    """run-a/report.json -> run-a: the directory says which run it is."""
    head, tail = os.path.split(os.path.normpath(path))
    return os.path.basename(head) or tail if tail == 'report.json' else tail


def _attach_auth(args):
    """--endpoint / --attach: the keystoneauth session's endpoint, and a
    token callable the runner's per-thread clients send (renewed by the
    session as it nears expiry)."""
    args.endpoint = args.token = None
    if not (args.os_endpoint or args.attach):
        return None
    try:
        session, args.endpoint = cliauth.session_for(args)
    except cliauth.AuthError as exc:
        return str(exc)
    args.token = session.get_token
    return None


def _run_driven(args):
    """A DRIVEN scenario: it starts its own stack (no --endpoint)."""
    if args.os_endpoint or args.attach:
        print('nova-moves-harness: %s starts its own stack; --endpoint '
              'and --attach do not apply' % args.scenario, file=sys.stderr)
        return 2
    module = importlib.import_module(DRIVEN[args.scenario])
    out = args.out or 'harness-%s-%s' % (args.scenario,
                                         time.strftime('%Y%m%d-%H%M%S'))

    def log(message):
        if not args.quiet:
            print('[harness] %s' % message, file=sys.stderr, flush=True)
    try:
        report = module.run(out_dir=out, log=log, keep=args.keep)
    except Exception as exc:
        print('nova-moves-harness: the run failed: %s' % exc,
              file=sys.stderr)
        return 3
    print(module.render(report))
    print('')
    print('report    %s' % os.path.join(out, 'report.json'))
    return 0 if module.passed(report) else 1


def _run(args):
    if args.scenario in DRIVEN:
        return _run_driven(args)
    problem = _attach_auth(args)
    if problem:
        print('nova-moves-harness: %s' % problem, file=sys.stderr)
        return 2
    scenario = nm_scenario.load(args.scenario)
    out = args.out or 'harness-%s-%s' % (scenario['name'],
                                         time.strftime('%Y%m%d-%H%M%S'))
    os.makedirs(out, exist_ok=True)
    if args.repeat < 1:
        print('nova-moves-harness: --repeat must be at least 1',
              file=sys.stderr)
        return 2
    if args.repeat == 1:
        return _run_once(args, scenario, out)
    worst, repeats, report = 0, [], None
    for i in range(args.repeat):
        sub = os.path.join(out, 'run-%d' % (i + 1))
        os.makedirs(sub, exist_ok=True)
        code = _run_once(args, scenario, sub)
        if code in (2, 3):
            return code
        worst = max(worst, code)
        with open(os.path.join(sub, 'report.json')) as f:
            report = json.load(f)
        repeats.append(report['metrics'])
    report['repeats'] = repeats
    report['metrics'], spread = nm_compare.summary(report)
    report['spread'] = spread
    report['files'] = {'report': os.path.join(out, 'report.json')}
    nm_report.write_json(report, report['files']['report'])
    noisy = sorted(spread.items(), key=lambda kv: -kv[1])[:8]
    print('')
    print('%d runs; medians in %s; the noisiest metrics (spread = '
          '(max-min)/median):' % (args.repeat, report['files']['report']))
    for name, value in noisy:
        print('  %-45s %5.0f%%' % (name, value * 100))
    return worst


EXTRA_HINT = ("pip install 'nova_moves[harness]' (matplotlib for the "
              "pictures, tqdm for the progress bars)")


def _plot(report, out):
    """{kind: path} of the pictures of ``report`` drawn into ``out``."""
    from nova_moves.harness import timeline
    try:
        timeline.require()
    except ImportError as exc:
        print('nova-moves-harness: no pictures (%s): %s' % (exc, EXTRA_HINT),
              file=sys.stderr)
        return {}
    return {'timeline': timeline.timeline(
                report, os.path.join(out, 'timeline.png')),
            'latency': timeline.latency_histogram(
                report, os.path.join(out, 'latency.png'))}


def _replot(args):
    path = os.path.join(args.report, 'report.json') \
        if os.path.isdir(args.report) else args.report
    report = nm_compare.load(path)
    out = args.out or os.path.dirname(path) or '.'
    os.makedirs(out, exist_ok=True)
    files = _plot(report, out)
    for kind, picture in sorted(files.items()):
        print('%-9s %s' % (kind, picture))
    return 0 if files else 3


def _run_once(args, scenario, out):
    from nova_moves.harness import runner as nm_runner

    def log(message):
        if not args.quiet:
            print('[harness] %s' % message, file=sys.stderr, flush=True)

    runner = nm_runner.Runner(scenario, endpoint=args.endpoint,
                              token=args.token or 'admin:admin', out_dir=out,
                              quiet=args.quiet,
                              rpc_stats_dir=args.rpc_stats_dir, log=log,
                              keep=args.keep,
                              allow_faults=args.allow_faults)
    refused = runner.attach_problems()
    if refused:
        print('nova-moves-harness: refusing to run %s against %s:\n%s' % (
            scenario['name'], args.endpoint,
            '\n'.join('  ' + p for p in refused)), file=sys.stderr)
        return 2
    try:
        report = runner.run()
    except Exception as exc:
        print('nova-moves-harness: the run failed: %s' % exc,
              file=sys.stderr)
        if runner.stack is not None:
            print('process logs: %s' % os.path.join(runner.stack.workdir,
                                                    'logs'), file=sys.stderr)
        return 3
    files = {'report': os.path.join(out, 'report.json')}
    report['metrics'] = nm_compare.metrics(report)
    # The report first: a failed picture must not lose the run.
    nm_report.write_json(report, files['report'])
    if not args.no_plot:
        files.update(_plot(report, out))
    report['files'] = {k: v for k, v in files.items() if v}
    nm_report.write_json(report, files['report'])
    print(nm_report.render(report))
    print('')
    for kind, path in sorted(report['files'].items()):
        print('%-9s %s' % (kind, path))
    return 0 if report['invariants']['ok'] else 1


def _stop_on_sigterm(signum, frame):
    # SystemExit unwinds the runner, whose cleanup stops the stack it
    # started: no orphaned api/conductor/compute processes.
    sys.exit(128 + signum)


def main(argv=None):
    args = _parser().parse_args(argv)
    previous = None
    if args.command == 'run' and \
            threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        if args.command == 'list':
            return _list()
        if args.command == 'show':
            import yaml
            print(yaml.safe_dump(nm_scenario.load(args.scenario),
                                 sort_keys=False))
            return 0
        if args.command == 'compare':
            return _compare(args)
        if args.command == 'scenario':
            return _scenario(args)
        if args.command == 'plot':
            return _replot(args)
        return _run(args)
    except (nm_scenario.ScenarioError, nm_compare.CompareError) as exc:
        print('nova-moves-harness: %s' % exc, file=sys.stderr)
        return 2
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == '__main__':
    sys.exit(main())
