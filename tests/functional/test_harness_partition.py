"""The bundled ``partition`` scenario, stack and all: compute2 reaches
the broker through a TCP proxy, is cut briefly during cold migrations
(they finish), then cut until shown down, its servers evacuated and the
path healed without a restart. The report shows 0 leaked, 0 misplaced,
0 duplicate copies and its count of moves rolled back for a lost
message."""
import shutil
import tempfile

import testtools
import testtools.content as content

from nova_moves.harness import report as nm_report
from nova_moves.harness import runner as nm_runner
from nova_moves.harness import scenario as nm_scenario


def evacuate_requests(report):
    return _row(report, 'evacuate')['requests']


def _row(report, operation):
    return [r for r in report['operations'] if r['operation'] == operation][0]


class PartitionScenarioTest(testtools.TestCase):

    def test_partition(self):
        out = tempfile.mkdtemp(prefix='harness-partition-')
        self.addCleanup(shutil.rmtree, out, True)
        report = nm_runner.Runner(nm_scenario.load('partition'),
                                  out_dir=out).run()
        text = nm_report.render(report)
        self.addDetail('report', content.text_content(text))
        print(text)
        self.assertEqual(
            [('cut', 'ok'), ('heal', 'ok'), ('cut', 'ok'),
             ('force-down', 'ok'), ('heal', 'ok'), ('force-up', 'ok')],
            [(f['action'], f['result']) for f in report['faults']])
        migrate = _row(report, 'migrate')
        self.assertEqual({'ok': 12}, migrate['outcomes'], migrate)
        # compute2's own 12, and what the migrations put there.
        self.assertGreaterEqual(evacuate_requests(report), 12)
        evacuate = _row(report, 'evacuate')
        self.assertGreater(evacuate['requests'], 0)
        self.assertEqual({'ok': evacuate['requests']}, evacuate['outcomes'],
                         evacuate)
        counts = report['invariants']['counts']
        self.assertEqual((0, 0, 0), (counts['leaked'], counts['misplaced'],
                                     counts['duplicate_copies']), text)
        self.assertEqual(0, counts['rolled_back_lost_message'], text)
        self.assertIn('rolled back for a lost message 0', text)
        self.assertTrue(report['invariants']['ok'], report['invariants'])
