"""A move step that is only slow is not rolled back (issue 17, #2).

The destination's fake hypervisor takes longer than the step's timeout
([DEFAULT] stuck_move_timeout, 3 s here). Before it re-sends or rolls
back a step, the conductors' sweep asks the host that holds it
(move_step_status, a short call); a step still running is left to
finish, and the move completes with its allocations where they belong.
Without the question the sweep re-sent the step, then rolled the move
back while the slow step still ran, and the late step's end met a
rolled-back move."""
import signal
import time

from tests.functional import base
from tests.functional import stack_db

SLOW = 10  # seconds, beyond the 3 s step timeout


def _finished_and_confirmed(test, server, timeout):
    """The server's move to compute2 finished, not rolled back (that
    leaves it ACTIVE, or ERROR, with no task_state), then confirmed."""
    moved = test.admin.wait_for_status(
        server['id'], ['VERIFY_RESIZE', 'ERROR', 'ACTIVE'], timeout=timeout)
    test.assertEqual('VERIFY_RESIZE', moved['status'])
    test.assertEqual('compute2', moved['OS-EXT-SRV-ATTR:host'])
    [migration] = test.admin.migrations(instance_uuid=server['id'])
    test.assertEqual('finished', migration['status'])
    test.admin.action(server['id'], {'confirmResize': None}, expect=204)
    done = test.admin.wait_for_status(server['id'], 'ACTIVE')
    test.assertEqual('compute2', done['OS-EXT-SRV-ATTR:host'])


class SlowStepTest(base.StackTestCase):
    COMPUTES = 2
    EXTRA_CONF = {'DEFAULT': {'stuck_move_timeout': 3}}

    def _slow(self, host, operation):
        self.admin.set_faults(host, [], {operation: SLOW})
        self.addCleanup(self.admin.set_faults, host, [], {})

    def _migrate_and_confirm(self, name):
        server = self.boot(name, host='compute1')
        self.admin.action(server['id'], {'migrate': None}, version='2.56',
                          expect=202)
        _finished_and_confirmed(self, server, timeout=SLOW * 4)
        self.assertNotIn(server['id'], self.local_guests('compute1'))

    def test_slow_prep_resize_completes(self):
        self._slow('compute2', 'prep_resize')
        self._migrate_and_confirm('slow-prep')

    def test_slow_resize_instance_completes(self):
        self._slow('compute1', 'migrate_disk_and_power_off')
        self._migrate_and_confirm('slow-disk')


class SettledIsFinalTest(base.StackTestCase):
    """Issue 25: two conductors sweep; a step slowed past its timeout
    then completes. Exactly one conductor acts on the stalled step (it
    claims it in the transaction that reads it), and the move ends
    completed with no fault and no Error event: nothing records a
    rollback of a move that settled."""
    COMPUTES = 2
    CONDUCTORS = 2
    TIMEOUT = 4
    EXTRA_CONF = {'DEFAULT': {'stuck_move_timeout': TIMEOUT,
                              'move_step_status_timeout': 2}}
    # Past the timeout once, and over before a second timeout from the
    # sweep's claim (which touches the migration) can pass.
    SLOW_FINISH = TIMEOUT + 2.5
    SWEEP_LINES = ('is still running; waiting', 'Re-sent the',
                   'rolled back', 'Rolled back')

    def _acted(self, migration_uuid):
        acted = {}
        for name in ('conductor1', 'conductor2'):
            acted[name] = [
                line for line in self.stack.log(name).splitlines()
                if migration_uuid in line and
                any(s in line for s in self.SWEEP_LINES)]
        return acted

    def _migrate(self, name, slow):
        self.admin.set_faults('compute2', [], {'finish_migration': slow})
        self.addCleanup(self.admin.set_faults, 'compute2', [], {})
        server = self.boot(name, host='compute1')
        self.admin.action(server['id'], {'migrate': {'host': 'compute2'}},
                          version='2.56', expect=202)
        return server

    def test_slow_step_that_completes_is_not_recorded_rolled_back(self):
        server = self._migrate('settled', self.SLOW_FINISH)
        self._completes_unharmed(server, 'is still running; waiting')

    def test_unanswered_step_is_resent_by_one_conductor(self):
        """The destination is frozen in its step while both conductors'
        sweeps find it stalled: neither gets an answer, so the step is
        re-sent, by one conductor only (before the claim, by each). The
        thawed step then completes; the re-sent copy is dropped."""
        server = self._migrate('frozen', 3)
        self.admin.wait_for(
            lambda: self.admin.server(server['id'])[
                'OS-EXT-STS:task_state'] == 'resize_finish',
            timeout=60, what='finish_resize running')
        self.stack.kill('compute2', signal.SIGSTOP, wait=0)
        self.addCleanup(self._thaw)
        # Stalled after TIMEOUT, swept within a second by each
        # conductor, whose question times out after 2 s.
        time.sleep(self.TIMEOUT + 4)
        self._thaw()
        self._completes_unharmed(server, 'Re-sent the')

    def _thaw(self):
        proc = self.stack.processes['compute2']
        proc.signal(signal.SIGCONT)
        proc.stopped_on_purpose = False

    def _completes_unharmed(self, server, action):
        _finished_and_confirmed(self, server, timeout=self.SLOW_FINISH * 6)
        [migration] = self.admin.migrations(instance_uuid=server['id'])
        self.assertEqual('confirmed', migration['status'])
        # Exactly one conductor acted on the stalled step, once.
        acted = self._acted(migration['uuid'])
        self.assertEqual(1, sum(len(v) for v in acted.values()), acted)
        self.assertIn(action,
                      [line for v in acted.values() for line in v][0])
        # No fault, no Error event.
        self.assertNotIn('fault', self.admin.server(server['id']))
        with stack_db.stack_database(self.stack) as db_api:
            self.assertIsNone(db_api.instance_fault_get_latest(server['id']))
        for action in self.admin.actions(server['id']):
            detail = self.admin.action_detail(server['id'],
                                              action['request_id'])
            self.assertEqual([], [e['event'] for e in detail['events']
                                  if e['result'] == 'Error'], detail)
