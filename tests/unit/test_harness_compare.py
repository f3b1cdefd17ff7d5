"""compare: metrics from reports, the noise marker, budgets, the command."""
import contextlib
import io
import json
import os
import shutil
import tempfile

import testtools

from nova_moves.harness import cli
from nova_moves.harness import compare as nm_compare


def _report(api_p99, e2e=2.0, rate=5.0, handle=100.0, repeats=None):
    report = {'operations': [
        {'operation': 'resize', 'microversion': '2.1', 'api_p50_ms': 10.0,
         'api_p95_ms': 20.0, 'api_p99_ms': api_p99, 'e2e_p50_s': e2e,
         'e2e_p95_s': e2e, 'e2e_p99_s': e2e, 'requests_per_s': rate,
         'breakdown': {'transfer': {'p50_s': 0.5, 'p95_s': 0.7}}},
        {'operation': 'live-migrate', 'microversion': '2.33',
         'api_p50_ms': 400.0},
        {'operation': 'live-migrate', 'microversion': '2.34',
         'api_p50_ms': 40.0}],
        'rpc': [{'method': 'compute.prep_resize',
                 'handle': {'p50_ms': handle, 'p99_ms': handle}}]}
    if repeats:
        report['repeats'] = repeats
    return report


class MetricsTest(testtools.TestCase):

    def test_names(self):
        m = nm_compare.metrics(_report(30.0))
        self.assertEqual(30.0, m['resize.api.p99'])
        self.assertEqual(5.0, m['resize.throughput'])
        self.assertEqual(0.5, m['resize.phase.transfer.p50'])
        # Two microversions of one operation are told apart.
        self.assertEqual(400.0, m['live-migrate@2.33.api.p50'])
        self.assertEqual(40.0, m['live-migrate@2.34.api.p50'])
        self.assertEqual(100.0, m['rpc.compute.prep_resize.handle.p99'])


class CompareTest(testtools.TestCase):

    def _row(self, rows, name):
        return next(r for r in rows if r['metric'] == name)

    def test_marker_beyond_default_noise(self):
        rows = nm_compare.compare(_report(30.0), _report(45.0, rate=3.0))
        row = self._row(rows, 'resize.api.p99')
        self.assertEqual(1.5, row['ratio'])
        self.assertEqual('+', row['marker'])
        # Fewer requests per second is worse although the ratio is < 1.
        self.assertEqual('+', self._row(rows, 'resize.throughput')['marker'])
        self.assertEqual('', self._row(rows, 'resize.api.p50')['marker'])
        better = nm_compare.compare(_report(45.0), _report(30.0))
        self.assertEqual('-', self._row(better, 'resize.api.p99')['marker'])

    def test_repeats_give_the_noise(self):
        noisy = [{'resize.api.p99': v} for v in (20.0, 30.0, 40.0)]
        quiet = [{'resize.api.p99': v} for v in (44.0, 45.0, 46.0)]
        # Median 30 against 45 is 1.5x, but A's own spread is 67%.
        row = nm_compare.compare(_report(0, repeats=noisy),
                                 _report(0, repeats=quiet))[0]
        self.assertEqual(30.0, row['a'])
        self.assertEqual(45.0, row['b'])
        self.assertAlmostEqual(20.0 / 30.0, row['noise'])
        self.assertEqual('', row['marker'])
        steady = [{'resize.api.p99': v} for v in (29.0, 30.0, 31.0)]
        row = nm_compare.compare(_report(0, repeats=steady),
                                 _report(0, repeats=quiet))[0]
        self.assertEqual('+', row['marker'])


class BudgetTest(testtools.TestCase):

    def test_parse(self):
        b = nm_compare.parse_budget('resize.api.p99 > 1.2x')
        self.assertEqual(('resize.api.p99', '>', 1.2, True),
                         (b['metric'], b['op'], b['limit'], b['ratio']))
        b = nm_compare.parse_budget('*.throughput<3')
        self.assertEqual(('*.throughput', '<', 3.0, False),
                         (b['metric'], b['op'], b['limit'], b['ratio']))
        err = self.assertRaises(nm_compare.CompareError,
                                nm_compare.parse_budget, 'resize.api.p99 big')
        self.assertIn('METRIC > LIMIT', str(err))

    def test_check(self):
        rows = nm_compare.compare(_report(30.0), _report(45.0, rate=3.0))
        budgets = [nm_compare.parse_budget(t) for t in (
            'resize.api.p99 > 1.2x', 'resize.api.p50 > 1.2x',
            'resize.throughput < 0.8x', 'rpc.*.handle.p99 > 1000',
            'resize.apii.p99 > 2x')]
        failures = nm_compare.check_budgets(budgets, rows)
        self.assertEqual(3, len(failures), failures)
        self.assertIn('resize.api.p99 > 1.2x: resize.api.p99 is 1.50x',
                      failures[0])
        self.assertIn('resize.throughput is 0.60x', failures[1])
        self.assertIn('no such metric', failures[2])


class CompareCommandTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.work = tempfile.mkdtemp(prefix='compare-test-')
        self.addCleanup(shutil.rmtree, self.work, True)

    def _write(self, name, report):
        os.makedirs(os.path.join(self.work, name))
        path = os.path.join(self.work, name, 'report.json')
        with open(path, 'w') as f:
            json.dump(report, f)
        return path

    def _main(self, argv):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(argv)
        return code, out.getvalue(), err.getvalue()

    def test_table_png_and_budget_file(self):
        a = self._write('before', _report(30.0))
        b = self._write('after', _report(45.0))
        budget = os.path.join(self.work, 'budget.txt')
        with open(budget, 'w') as f:
            f.write('# CI budget\nresize.api.p99 > 1.2x\n\n'
                    'resize.e2e.p50 > 1.5x  # end to end\n')
        png = os.path.join(self.work, 'cmp.png')
        code, out, _ = self._main(['compare', a, os.path.dirname(b),
                                   '--budget', budget, '--png', png])
        self.assertEqual(1, code, out)
        self.assertIn('before', out.split('\n')[0])
        self.assertIn('after', out.split('\n')[0])
        self.assertIn('resize.api.p99', out)
        self.assertIn('1.50x', out)
        self.assertIn('WORSE', out)
        self.assertIn('BUDGET EXCEEDED resize.api.p99 > 1.2x', out)
        self.assertNotIn('BUDGET EXCEEDED resize.e2e', out)
        with open(png, 'rb') as f:
            self.assertEqual(b'\x89PNG', f.read(4))
        code, out, _ = self._main(['compare', a, b, '--fail-if',
                                   'resize.api.p99 > 2x'])
        self.assertEqual(0, code, out)
        self.assertIn('Budgets: 1 OK', out)

    def test_bad_input_is_2(self):
        a = self._write('a', _report(30.0))
        code, _, err = self._main(['compare', a, a, '--fail-if', 'oops'])
        self.assertEqual(2, code)
        self.assertIn("'oops' is not a budget", err)
        code, _, err = self._main(['compare', a, '/nonexistent/r.json'])
        self.assertEqual(2, code)
        self.assertIn('/nonexistent/r.json: not a readable report.json', err)
        code, _, err = self._main(['compare', a])
        self.assertEqual(2, code)
        self.assertIn('at least two reports', err)
