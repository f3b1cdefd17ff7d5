"""nova-moves-harness: run a scenario against real processes.

  nova-moves-harness list
  nova-moves-harness run quickstart [--out DIR] [--no-plot] [--quiet]
  nova-moves-harness run my.yaml --endpoint http://127.0.0.1:8774/v2.1 \\
      --token admin:admin [--rpc-stats-dir DIR]

Exit status: 0 when every invariant holds, 1 when one fails, 2 for a bad
scenario or command line, 3 when the run itself broke."""
import argparse
import os
import sys
import time

from nova_moves.harness import report as nm_report
from nova_moves.harness import scenario as nm_scenario


def _parser():
    parser = argparse.ArgumentParser(prog='nova-moves-harness',
                                     description=__doc__.split('\n')[0])
    sub = parser.add_subparsers(dest='command')
    sub.required = True
    sub.add_parser('list', help='List the bundled scenarios')
    show = sub.add_parser('show', help='Print a scenario after validation')
    show.add_argument('scenario')
    run = sub.add_parser('run', help='Run a scenario')
    run.add_argument('scenario', help='a YAML file or a bundled name')
    run.add_argument('--endpoint', help='attach to a running API '
                     '(http://HOST:PORT/v2.1) instead of starting a stack')
    run.add_argument('--token', default='admin:admin',
                     help='user:project token (default admin:admin)')
    run.add_argument('--rpc-stats-dir', help='with --endpoint: the '
                     '[DEFAULT] rpc_stats_dir of the running processes')
    run.add_argument('--out', help='directory for report.json and the '
                     'pictures (default ./harness-<scenario>-<time>)')
    run.add_argument('--no-plot', action='store_true',
                     help='do not draw the PNG pictures')
    run.add_argument('--quiet', action='store_true',
                     help='no progress bars or progress messages')
    return parser


def _list():
    for name, path in nm_scenario.bundled().items():
        try:
            description = nm_scenario.load(path).get('description', '')
        except nm_scenario.ScenarioError as exc:
            description = 'INVALID: %s' % exc
        print('%-22s %s' % (name, description.strip().split('\n')[0]))
    return 0


def _run(args):
    from nova_moves.harness import runner as nm_runner
    scenario = nm_scenario.load(args.scenario)
    out = args.out or 'harness-%s-%s' % (scenario['name'],
                                         time.strftime('%Y%m%d-%H%M%S'))
    os.makedirs(out, exist_ok=True)

    def log(message):
        if not args.quiet:
            print('[harness] %s' % message, file=sys.stderr, flush=True)

    runner = nm_runner.Runner(scenario, endpoint=args.endpoint,
                              token=args.token, out_dir=out,
                              quiet=args.quiet,
                              rpc_stats_dir=args.rpc_stats_dir, log=log)
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
    if not args.no_plot:
        from nova_moves.harness import timeline
        files['timeline'] = timeline.timeline(
            report, os.path.join(out, 'timeline.png'))
        files['latency'] = timeline.latency_histogram(
            report, os.path.join(out, 'latency.png'))
    report['files'] = {k: v for k, v in files.items() if v}
    nm_report.write_json(report, files['report'])
    print(nm_report.render(report))
    print('')
    for kind, path in sorted(report['files'].items()):
        print('%-9s %s' % (kind, path))
    return 0 if report['invariants']['ok'] else 1


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        if args.command == 'list':
            return _list()
        if args.command == 'show':
            import yaml
            print(yaml.safe_dump(nm_scenario.load(args.scenario),
                                 sort_keys=False))
            return 0
        return _run(args)
    except nm_scenario.ScenarioError as exc:
        print('nova-moves-harness: %s' % exc, file=sys.stderr)
        return 2


if __name__ == '__main__':
    sys.exit(main())
