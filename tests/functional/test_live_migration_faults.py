"""A live migration's source killed (SIGKILL or SIGTERM) and restarted
while the migration runs: the server must end with exactly one running
copy, on the host it is recorded on, whichever side won (issue 17, #1).

The fake hypervisor's post step on the destination is slow (4 s), so the
source can be stopped while the destination starts its copy. The base
class checks after every test that no server runs on two hosts (it reads
the fake hypervisors' guests), besides allocations and statuses."""
import signal

from nova_moves.harness import invariants
from tests.functional import base
from tests.functional import test_live_migration

POST_EVENT = 'compute_post_live_migration_at_destination'


class SourceKilledTest(test_live_migration.LiveMigrationHelpers,
                       base.StackTestCase):
    COMPUTES = 2
    EXTRA_CONF = {
        # The sweep acts within seconds: it must not make a second copy
        # either (it completes or rolls back what the dead source left).
        'DEFAULT': {'stuck_move_timeout': 3},
        'compute': {'operation_seconds':
                    'live_migration:2,post_live_migration_at_destination:4'},
    }

    def _start(self, name):
        server = self.boot(name, host='compute1')
        response = self.live(server['id'], '2.34', host='compute2',
                             block_migration='auto', expect=202)
        return server, response.headers['x-openstack-request-id']

    def _wait_event(self, server_id, request_id, name, finished=False):
        def _check():
            event = self.events(server_id, request_id).get(name)
            if event and (not finished or event.get('finish_time')):
                return event
            return None
        return self.admin.wait_for(_check, timeout=60, what=name)

    def _guests(self):
        return invariants.read_guests(self.stack.workdir + '/state')

    def _wait_settled(self, server_id):
        """The migration terminal and one running copy, where recorded."""
        def _check():
            migration = self.live_migrations(server_id)[0]
            if migration['status'] not in invariants.MIGRATION_TERMINAL:
                return None
            server = self.admin.server(server_id)
            if server['OS-EXT-STS:task_state'] is not None:
                return None
            if invariants.running_copies([server], self._guests()):
                return None
            return migration
        try:
            return self.admin.wait_for(_check, timeout=60,
                                       what='one copy of %s' % server_id)
        except TimeoutError:
            server = self.admin.server(server_id)
            self.fail('%s; guests %s' % (invariants.running_copies(
                [server], self._guests()), self._guests()))

    def _restart(self, name):
        self.stack.restart(name)
        self.stack.wait_until_ready(60)

    def test_sigkill_in_post_step_restart_at_once(self):
        server, request_id = self._start('kill-post-now')
        self._wait_event(server['id'], request_id, POST_EVENT)
        self.stack.kill('compute1', signal.SIGKILL)
        # Back while the destination still starts its copy: the restarted
        # source's rollback and the destination's commit race; one wins.
        self._restart('compute1')
        migration = self._wait_settled(server['id'])
        self.assertIn(migration['status'], ('completed', 'failed'))

    def test_sigkill_in_post_step_restart_after_commit(self):
        server, request_id = self._start('kill-post-late')
        self._wait_event(server['id'], request_id, POST_EVENT)
        self.stack.kill('compute1', signal.SIGKILL)
        # The destination took the server while the source was dead.
        self.wait_for_migration(server['id'], 'completed', timeout=60)
        self.assertEqual('compute2', self.host_of(server['id']))
        self._restart('compute1')
        self._wait_settled(server['id'])
        self.assertNotIn(server['id'], self.local_guests('compute1'))
        self.assertEqual('running',
                         self.local_guests('compute2')[server['id']]['power'])

    def test_sigterm_in_post_step(self):
        server, request_id = self._start('term-post')
        self._wait_event(server['id'], request_id, POST_EVENT)
        # Graceful: the source finishes the handler it runs, then exits.
        self.stack.kill('compute1', signal.SIGTERM, wait=30)
        self._restart('compute1')
        migration = self._wait_settled(server['id'])
        self.assertEqual('completed', migration['status'])
        self.assertEqual('compute2', self.host_of(server['id']))

    def test_sigkill_during_transfer_records_fault_and_event(self):
        server, request_id = self._start('kill-transfer')
        self.wait_for_migration(server['id'], 'running', timeout=60)
        self.stack.kill('compute1', signal.SIGKILL)
        self._restart('compute1')
        migration = self._wait_settled(server['id'])
        self.assertIn(migration['status'], ('failed', 'error'))
        self.assert_untouched(server['id'], 'compute1')
        # The event the dead handler opened is closed, with why.
        event = self._wait_event(server['id'], request_id,
                                 'compute_live_migration', finished=True)
        self.assertEqual('Error', event['result'])
        self.assertIn('restarted', event['traceback'])
