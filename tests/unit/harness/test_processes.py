"""Which processes died during a run, from their stats files and the
harness's faults."""
import testtools

from nova_moves.harness import processes


def _entry(name, pid, written, closed=False, handled=None, in_flight=None):
    return {'process': name, 'pid': pid, 'started': 100.0,
            'written': written, 'closed': closed,
            'in_flight': in_flight or {},
            'counts': {'handle': handled or {}}}


class StatesTest(testtools.TestCase):

    def test_states(self):
        entries = [
            _entry('nova-moves-compute-compute2', 11, 104.9,
                   handled={'compute.build_and_run_instance': 6},
                   in_flight={'compute.prep_resize': 1}),
            _entry('nova-moves-compute-compute2', 12, 129.0,
                   handled={'compute.rebuild_instance': 0}),
            _entry('nova-moves-conductor-c1', 13, 110.0),
            _entry('nova-moves-scheduler-s1', 14, 120.0, closed=True),
            _entry('old', 15, 50.0, closed=True)]
        faults = [{'t': 5.2, 'action': 'kill', 'pid': 11},
                  {'t': 9.0, 'action': 'restart'}]
        out = processes.states(entries, faults, wall_start=100.0,
                               wall_end=130.0)
        by_pid = {p['pid']: p for p in out}
        self.assertNotIn(15, by_pid)  # gone before the run
        killed = by_pid[11]
        self.assertEqual(('died', 5.2, 'kill fault', 6),
                         (killed['state'], killed['died_t'], killed['cause'],
                          killed['handled']))
        self.assertEqual('running', by_pid[12]['state'])
        # No fault, no heartbeat for 20 s: it died on its own.
        self.assertEqual(('died', 10.0), (by_pid[13]['state'],
                                          by_pid[13]['died_t']))
        self.assertEqual('exited', by_pid[14]['state'])
        text = '\n'.join(processes.render(out))
        self.assertIn('Processes: 1 running at the end', text)
        self.assertIn('nova-moves-compute-compute2 (pid 11) died at 5.20s '
                      '(kill fault), handled 6 (compute.build_and_run_instance'
                      ' 6); in flight at its end: compute.prep_resize x1',
                      text)
