"""The ``cells-outage`` harness scenario through the real processes
(nova_moves/harness/cells_outage.py): two cells, cold migrate + confirm
on every server of both; cell2 (A) on a private RabbitMQ node and a
private PostgreSQL, cell1 (B) on the machine's RabbitMQ and SQLite. A
burst without faults, then one where cell A's broker node is SIGKILLed
and restarted and then its database is stopped and started. Asserted:
cell B's moves all completed with an end-to-end p50 close to the one
without the fault, the API's lists answered 200 throughout with cell A's
servers as 2.69 partial records (``status: UNKNOWN``) while its database
was down and full records after, cell A's moves after recovery finished
or rolled back, and the invariants on both cells' databases. Shorter
bursts than the bundled run, about two minutes on 2 cores."""
import os
import tempfile

import testtools

from nova_moves.harness import cells_outage
from nova_moves.harness import pg_cluster
from nova_moves.harness import rabbit_cluster

OPTIONS = {'servers_per_cell': 4, 'baseline_seconds': 15.0,
           'broker_down': 5.0, 'database_down': 6.0,
           'after_recovery': 6.0}


class CellsOutageTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        if not rabbit_cluster.available():
            self.skipTest('RabbitMQ server scripts missing')
        if not pg_cluster.available():
            self.skipTest('PostgreSQL server binaries missing')

    def test_one_cells_outage_leaves_the_other_cell_alone(self):
        keep = bool(os.environ.get('NOVA_MOVES_KEEP_LOGS'))
        # NOVA_MOVES_KEEP_LOGS: the stack's logs and report.json stay in
        # a directory of their own.
        out = tempfile.mkdtemp(prefix='cells-outage-') if keep else None
        report = cells_outage.run(OPTIONS, out_dir=out, log=lambda m: None,
                                  keep=keep)
        self.addDetail('report', testtools.content.text_content(
            cells_outage.render(report)))
        b = report['moves']['B']
        a = report['moves']['A']['fault']
        # Cell B: every move of both bursts completed.
        self.assertEqual(100.0, b['baseline']['completed_pct'], b)
        self.assertEqual(100.0, b['fault']['completed_pct'], b)
        self.assertGreater(b['fault']['moves'], 10)
        self.assertLessEqual(
            b['fault']['p50_s'], cells_outage.P50_FACTOR *
            b['baseline']['p50_s'] + cells_outage.P50_SLACK_S, b)
        # The faults all applied.
        self.assertEqual(4, len(report['faults']), report['faults'])
        for event in report['faults']:
            self.assertEqual('ok', event['result'], event)
        # The API answered every list; partial records for cell A while
        # its database was down, full ones once it was back.
        self.assertEqual(0, report['api']['not_200'], report['api'])
        partial = report['partial_records']
        self.assertGreater(partial['cell_a_partial_cell_b_full'], 0, partial)
        self.assertEqual(partial['polls_during'],
                         partial['answered_200_during'], partial)
        self.assertIsNotNone(partial['cell_a_full_again_after_s'], partial)
        # Cell A: moves finished, rolled back or refused while down;
        # none hung or failed into ERROR, and some completed after.
        self.assertFalse(set(a['outcomes']) - {'ok', 'rolled-back',
                                               'refused'}, a)
        recovered = [r for r in report['records']
                     if r['cell'] == cells_outage.CELL_A and
                     r['outcome'] == 'ok' and
                     r['start'] > report['faults'][-1]['t'] +
                     report['faults'][-1]['done_after_s']]
        self.assertTrue(recovered, a)
        # Nothing stuck, leaked or orphaned in either cell's database.
        self.assertEqual([], report['invariants']['problems'])
        self.assertEqual([], report['problems'])
