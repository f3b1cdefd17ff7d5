"""The running-copy invariant: exactly one running copy per server, on
its recorded host, read from the fake hypervisors' state files."""
import json
import os
import tempfile

import testtools

from nova_moves.harness import invariants


def _server(uuid, host, status='ACTIVE'):
    return {'id': uuid, 'OS-EXT-SRV-ATTR:host': host, 'status': status}


RUNNING = {'power': 'running'}


class RunningCopiesTest(testtools.TestCase):

    def test_one_copy_on_its_host_holds(self):
        counts = {}
        self.assertEqual([], invariants.running_copies(
            [_server('a', 'h1')], {'h1': {'a': RUNNING}, 'h2': {}}, (),
            counts))
        self.assertEqual(0, counts['duplicate_copies'])

    def test_two_running_copies_is_a_split_brain(self):
        counts = {}
        problems = invariants.running_copies(
            [_server('a', 'h2')], {'h1': {'a': RUNNING}, 'h2': {'a': RUNNING}},
            (), counts)
        self.assertEqual(1, counts['duplicate_copies'])
        self.assertIn('runs on 2 hosts', problems[0])

    def test_copy_elsewhere_or_nowhere(self):
        self.assertIn('runs on h1, recorded on h2', invariants.running_copies(
            [_server('a', 'h2')], {'h1': {'a': RUNNING}})[0])
        self.assertIn('runs nowhere', invariants.running_copies(
            [_server('a', 'h2')], {'h1': {}})[0])
        # Stopped: no running copy wanted; powered-off copies do not run.
        self.assertEqual([], invariants.running_copies(
            [_server('a', 'h2', 'SHUTOFF')],
            {'h2': {'a': {'power': 'shutdown'}}}))

    def test_a_shutoff_server_whose_guest_runs(self):
        problems = invariants.running_copies(
            [_server('a', 'h2', 'SHUTOFF')], {'h2': {'a': RUNNING}})
        self.assertEqual(1, len(problems))
        self.assertIn('SHUTOFF but its guest runs on h2', problems[0])
        # Being started: its guest may run before the record says so.
        starting = dict(_server('a', 'h2', 'SHUTOFF'),
                        **{'OS-EXT-STS:task_state': 'powering-on'})
        self.assertEqual([], invariants.running_copies(
            [starting], {'h2': {'a': RUNNING}}))

    def test_down_hosts_run_nothing(self):
        # An evacuated server's old copy on its dead source.
        self.assertEqual([], invariants.running_copies(
            [_server('a', 'h2')], {'h1': {'a': RUNNING}, 'h2': {'a': RUNNING}},
            down_hosts={'h1'}))

    def test_read_guests(self):
        state = tempfile.mkdtemp()
        self.addCleanup(__import__('shutil').rmtree, state, True)
        self.assertEqual({}, invariants.read_guests(state))
        os.makedirs(os.path.join(state, 'fake-hypervisor'))
        with open(os.path.join(state, 'fake-hypervisor', 'h1.json'),
                  'w') as f:
            json.dump({'a': RUNNING}, f)
        self.assertEqual({'h1': {'a': RUNNING}},
                         invariants.read_guests(state))


class _Groups:
    """A client whose GET /os-server-groups answers ``groups``."""

    def __init__(self, groups, status=200):
        self.groups, self.status = groups, status

    def get(self, path, **kw):
        groups, status = self.groups, self.status

        class Response:
            status_code = status

            def json(self):
                return {'server_groups': groups}
        return Response()


class ServerGroupInvariantTest(testtools.TestCase):

    SERVERS = [_server('a', 'h1'), _server('b', 'h1'), _server('c', 'h2')]

    def test_anti_affinity_and_its_rule(self):
        group = {'id': 'g', 'policy': 'anti-affinity', 'rules': {},
                 'members': ['a', 'b', 'c']}
        problems = invariants.server_group_problems(_Groups([group]),
                                                    self.SERVERS)
        self.assertIn("{'h1': 2}", problems[0])
        group['rules'] = {'max_server_per_host': 2}
        self.assertEqual([], invariants.server_group_problems(
            _Groups([group]), self.SERVERS))

    def test_affinity_split(self):
        group = {'id': 'g', 'policy': 'affinity', 'rules': {},
                 'members': ['a', 'c']}
        self.assertIn('split over', invariants.server_group_problems(
            _Groups([group]), self.SERVERS)[0])
        group['members'] = ['a', 'b']
        self.assertEqual([], invariants.server_group_problems(
            _Groups([group]), self.SERVERS))

    def test_soft_policies_and_old_apis_are_not_checked(self):
        soft = {'id': 'g', 'policy': 'soft-anti-affinity', 'rules': {},
                'members': ['a', 'b']}
        self.assertEqual([], invariants.server_group_problems(
            _Groups([soft]), self.SERVERS))
        self.assertEqual([], invariants.server_group_problems(
            _Groups([], status=404), self.SERVERS))
