"""The drain plan's arithmetic: the move kind rule, durations from phase
timestamps, p50 with its basis, and the makespan on the move slots."""
import datetime

import testtools

from nova_moves import drain_plan as dp

T0 = datetime.datetime(2026, 1, 1)


def at(seconds):
    return T0 + datetime.timedelta(seconds=seconds)


class DrainPlanTest(testtools.TestCase):

    def test_move_kind(self):
        self.assertEqual(('live', None), dp.move_kind('auto', False, True,
                                                      'active'))
        self.assertEqual(('cold', None), dp.move_kind('auto', False, True,
                                                      'stopped'))
        self.assertEqual(('evacuate', None), dp.move_kind(
            'live', True, False, 'stopped'))
        kind, why = dp.move_kind('live', False, False, 'active', 'h1')
        self.assertIsNone(kind)
        self.assertIn('h1 is down', why)
        kind, why = dp.move_kind('cold', False, True, 'paused')
        self.assertIsNone(kind)
        self.assertIn('vm_state paused', why)

    def test_durations(self):
        live = [('accepted', at(0)), ('preparing', at(1)),
                ('running', at(2)), ('completed', at(4.5))]
        self.assertEqual(4.5, dp.duration(dp.LIVE, live))
        cold = [('pre-migrating', at(0)), ('finished', at(3)),
                ('confirming', at(100)), ('confirmed', at(101))]
        # The wait before the confirmation is not the move's.
        self.assertEqual(4, dp.duration(dp.COLD, cold))
        self.assertIsNone(dp.duration(dp.LIVE, live[:3]))
        self.assertIsNone(dp.duration(dp.COLD, cold[:2]))

    def test_queues_are_not_the_moves_time(self):
        # A drain's live migration as recorded: the gate's queue (queued,
        # then accepted again when admitted), scheduling and pre-checks,
        # the compute's own queue (queued -> preparing), the transfer.
        live = [('accepted', at(0)), ('queued', at(0.1)),
                ('accepted', at(5)), ('queued', at(5.2)),
                ('preparing', at(7)), ('running', at(7.1)),
                ('completed', at(7.6))]
        t = dp.timings(dp.LIVE, live)
        self.assertAlmostEqual(0.2, t['lead'])      # admitted at 5 -> 5.2
        self.assertAlmostEqual(0.6, t['serial'])    # preparing -> completed
        self.assertAlmostEqual(0.8, t['slot'])      # both queues excluded
        self.assertEqual(at(5.2), t['source_queued'])
        self.assertAlmostEqual(0.8, dp.duration(dp.LIVE, live))
        cold = [('pre-migrating', at(0)), ('queued', at(0.1)),
                ('pre-migrating', at(2)), ('migrating', at(2.5)),
                ('finished', at(3)), ('confirming', at(3.5)),
                ('confirmed', at(4))]
        t = dp.timings(dp.COLD, cold)
        self.assertEqual((1.0, 0.5, None), (t['slot'], t['confirm'],
                                            t['serial']))

    def test_handoffs(self):
        def move(prep, end, queued=None):
            return {'prep_at': at(prep), 'end_at': at(end),
                    'source_queued': at(queued) if queued is not None
                    else None}
        samples = [('live', 'f', 'h1', move(0, 1)),
                   ('live', 'f', 'h1', move(1.1, 2, queued=0.5)),
                   # Not queued at the compute: its gap is idle time.
                   ('live', 'f', 'h1', move(5, 6)),
                   ('live', 'f', 'h2', move(0, 1)),
                   ('live', 'f', 'h2', move(1.3, 2, queued=0.2))]
        self.assertEqual([0.1, 0.3], sorted(
            round(g, 3) for g in dp.handoffs(samples)))

    def test_estimate_basis(self):
        history = dp.History([('live', 'f1', s) for s in (1, 2, 9)] +
                             [('live', 'f2', 4)])
        self.assertEqual((2, {'flavor': 'f1', 'samples': 3, 'p50': True}),
                         history.estimate('live', 'f1'))
        self.assertEqual((3, {'flavor': None, 'samples': 4, 'p50': True}),
                         history.estimate('live', 'f2'))
        self.assertEqual((dp.DEFAULT_SECONDS['cold'],
                          {'flavor': None, 'samples': 0, 'p50': False}),
                         history.estimate('cold', 'f1'))
        # Without parts (no phases), the whole estimate holds the slot.
        self.assertEqual({'slot': 5.0, 'lead': None, 'serial': None,
                          'confirm': 0.0}, dp.History([]).move('live', 'f3'))

    def test_history_parts(self):
        def live(lead, serial):
            return {'slot': lead + serial, 'lead': lead, 'serial': serial,
                    'confirm': None, 'prep_at': None, 'end_at': None,
                    'source_queued': None}
        history = dp.History([('live', 'f1', 'h', live(0.1, s))
                              for s in (0.4, 0.5, 0.6)])
        move = history.move('live', 'f1')
        self.assertAlmostEqual(0.1, move['lead'])
        self.assertAlmostEqual(0.5, move['serial'])
        self.assertAlmostEqual(0.6, move['slot'])
        self.assertEqual(0.0, history.handoff())

    def test_pipeline_and_eta(self):
        self.assertEqual(0.0, dp.pipeline([], 2, 2))
        # Cold moves hold their gate slot: the old makespan.
        cold = [{'slot': 3}] * 4
        self.assertEqual(6, dp.pipeline(cold, 2, 2))
        self.assertEqual(12, dp.pipeline(cold, 1, 1))
        self.assertEqual(5, dp.pipeline([{'slot': s} for s in (5, 1, 1, 1)],
                                        2, 2))
        # Live moves out of a host that sends one at a time: two gate
        # slots overlap one's pre-checks with another's transfer, the
        # transfers run one after the other.
        live = [{'slot': 0.6, 'lead': 0.1, 'serial': 0.5}] * 4
        self.assertAlmostEqual(2.1, dp.pipeline(live, 2, 1))
        self.assertAlmostEqual(2.5, dp.pipeline(live, 2, 1, handoff=0.1))
        self.assertAlmostEqual(1.2, dp.pipeline(live, 2, 2))
        # The drain notices the end at its next pass (half on average),
        # and confirms a cold move at a pass too.
        self.assertAlmostEqual(2.6, dp.eta(live, 2, 1, 1.0))
        self.assertAlmostEqual(7.5, dp.eta(
            [{'slot': 3, 'confirm': 0.5}] * 4, 2, 2, 1.0))
        # 50 live moves measured on drain-host (p50 lead 0.10 s, serial
        # 0.49 s, handoff 0.09 s; the drain took 30.1 s): 29.4 s.
        self.assertAlmostEqual(29.4, dp.eta(
            [{'slot': 0.59, 'lead': 0.10, 'serial': 0.49}] * 50, 2, 1, 1.0,
            handoff=0.087), delta=0.1)
