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

    def test_makespan_and_eta(self):
        self.assertEqual(0.0, dp.makespan([], 2))
        self.assertEqual(6, dp.makespan([3, 3, 3, 3], 2))
        self.assertEqual(5, dp.makespan([5, 1, 1, 1], 2))
        self.assertEqual(12, dp.makespan([3, 3, 3, 3], 1))
        self.assertEqual(8, dp.eta([3, 3, 3, 3], 2, pass_seconds=1))
