"""The harness's cost section: CPU read from /proc for a process and its
descendants, and the per-move arithmetic with restarts and deaths."""
import subprocess
import sys
import time

import testtools

from nova_moves.harness import cost

BURN = ('import time\nend = time.process_time() + 0.4\n'
        'while time.process_time() < end: pass\ntime.sleep(30)')


def _record(operation, status=202):
    return {'operation': operation, 'http_status': status}


class ProcessCPUTest(testtools.TestCase):

    def spawn(self, argv):
        proc = subprocess.Popen(argv)
        self.addCleanup(proc.wait)
        self.addCleanup(proc.kill)
        return proc

    def wait_for_cpu(self, pid, seconds):
        deadline = time.monotonic() + 20
        while cost.process_cpu(pid) < seconds:
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.05)
        return cost.process_cpu(pid)

    def test_counts_the_process_itself(self):
        proc = self.spawn([sys.executable, '-c', BURN])
        self.assertGreaterEqual(self.wait_for_cpu(proc.pid, 0.35), 0.35)

    def test_counts_its_descendants(self):
        # A shell whose child burns: the shell itself uses ~nothing.
        proc = self.spawn(['sh', '-c', "'%s' -c '%s'; sleep 30" % (
            sys.executable, BURN)])
        self.assertGreaterEqual(self.wait_for_cpu(proc.pid, 0.35), 0.35)


class SummarizeTest(testtools.TestCase):

    def test_per_move_and_ceiling(self):
        records = ([_record('migrate')] * 8 + [_record('confirm')] * 8 +
                   [_record('migrate', 409), _record('live-migrate')] +
                   [_record('evacuate', 200)])
        before = {'api': [10, 1.0], 'conductor1': [11, 2.0]}
        after = {'api': [10, 1.3], 'conductor1': [11, 2.7]}
        summary = cost.summarize(before, after, records, 5.0, cores=2)
        self.assertEqual(10, summary['moves'])  # 8 + 1 + 1, not the 409
        self.assertEqual(1.0, summary['cpu_s'])
        self.assertEqual(100.0, summary['ms_per_move'])
        self.assertEqual(20.0, summary['ceiling_moves_per_s'])
        self.assertEqual(0.1, summary['busy_share'])
        by_name = {r['process']: r for r in summary['processes']}
        self.assertEqual(70.0, by_name['conductor1']['ms_per_move'])
        self.assertIn('100.0 CPU ms per move', '\n'.join(
            cost.render(summary)))

    def test_restarted_and_dead_processes(self):
        before = {'compute1': [20, 5.0], 'compute2': [21, 4.0]}
        after = {'compute1': [30, 0.5]}  # restarted; compute2 died
        summary = cost.summarize(before, after, [_record('resize')], 2.0,
                                 cores=2)
        by_name = {r['process']: r for r in summary['processes']}
        self.assertEqual(0.5, by_name['compute1']['cpu_s'])
        self.assertIn('restarted', by_name['compute1']['note'])
        self.assertIsNone(by_name['compute2']['cpu_s'])
        self.assertEqual(0.5, summary['cpu_s'])

    def test_attached_stack_is_not_measured(self):
        self.assertIsNone(cost.summarize({}, {}, [], 1.0))
        self.assertIn('not measured', cost.render(None)[0])
        self.assertEqual({}, cost.snapshot(None))
