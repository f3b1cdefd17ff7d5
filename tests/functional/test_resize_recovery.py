"""A compute agent SIGKILLed in the middle of a resize step, then
restarted: oslo.messaging had acknowledged the cast, so the step is lost,
and the restarted agent finishes or rolls back what it was doing from the
database alone. Real processes on the real broker; the step is made slow
with the fake hypervisor's per-operation durations so the kill lands
inside it."""
import os

from tests.functional import base
from tests.functional import stack_db

SLOW = 60  # seconds: far longer than the test, so only the kill ends it


class ResizeRecoveryTest(base.StackTestCase):

    COMPUTES = 2

    def migration_of(self, server_id):
        """The server's cold migration (the conductor creates it after
        the 202, so there may be none yet)."""
        migrations = [m for m in self.admin.migrations(
            instance_uuid=server_id) if m['migration_type'] == 'migration']
        return migrations[0] if migrations else {'status': None}

    def wait_migration(self, server_id, status, timeout=30):
        return self.admin.wait_for(
            lambda: self.migration_of(server_id)['status'] == status,
            timeout=timeout, what='migration %s' % status)

    def latest_fault(self, server_id):
        # The API shows faults only on ERROR servers (as Nova does); an
        # operator reads a rolled-back move's reason from the database.
        with stack_db.stack_database(self.stack) as db:
            return db.instance_fault_get_latest(server_id) or {}

    def wait_event_started(self, server_id, event, timeout=30):
        def _started():
            for action in self.admin.actions(server_id):
                detail = self.admin.action_detail(server_id,
                                                  action['request_id'])
                if any(e['event'] == event for e in detail['events']):
                    return True
            return False
        self.admin.wait_for(_started, timeout=timeout,
                            what='%s started' % event)

    def wait_operating(self, host, operation, timeout=30):
        """Until ``host``'s fake hypervisor runs the slowed ``operation``
        (a step that records nothing before its end: compute RPC 1.8's
        one-call confirm and revert)."""
        path = os.path.join(self.stack.workdir, 'state', 'fake-hypervisor',
                            '%s.operating' % host)

        def running():
            try:
                with open(path) as f:
                    return f.read() == operation
            except OSError:
                return False
        self.admin.wait_for(running, timeout=timeout,
                            what='%s running %s' % (host, operation))

    def slow(self, host, operation):
        self.admin.set_faults(host, [], {operation: SLOW})
        # A restart forgets it anyway; this is for a test that fails early.
        self.addCleanup(self._unslow, host)

    def _unslow(self, host):
        if not self.stack.processes[host].alive():
            self.stack.restart(host)
        # _answers resets the faults once the host takes the request.
        self.admin.wait_for(lambda: self._answers(host), timeout=30,
                            what='%s answers' % host)

    def _answers(self, host):
        try:
            self.admin.set_faults(host, [], {})
            return True
        except Exception:
            return False

    def kill_and_restart(self, host):
        self.stack.kill(host)
        self.stack.restart(host)

    def migrate_to_compute2(self, server):
        self.admin.action(server['id'], {'migrate': {'host': 'compute2'}},
                          version='2.56', expect=202)

    def resized_on_compute2(self, name):
        server = self.boot(name, host='compute1')
        self.migrate_to_compute2(server)
        self.admin.wait_for_status(server['id'], 'VERIFY_RESIZE')
        return server

    def assert_back_on_compute1(self, server, fault_words):
        shown = self.admin.wait_for_status(server['id'], 'ACTIVE',
                                           timeout=60)
        self.assertIsNone(shown['OS-EXT-STS:task_state'])
        self.assertEqual('compute1', shown['OS-EXT-SRV-ATTR:host'])
        self.assertEqual('error', self.migration_of(server['id'])['status'])
        self.assertIn(fault_words,
                      self.latest_fault(server['id']).get('message', ''))
        # The old copy is powered on after the database is put back (by
        # the source, when the destination rolled back).
        self.admin.wait_for(
            lambda: self.local_guests('compute1')[server['id']]['power'] ==
            'running', timeout=30, what='old copy running')
        self.assertNotIn(server['id'], self.local_guests('compute2'))

    def test_source_killed_while_copying_disks_rolls_back(self):
        server = self.boot('rec-src', host='compute1')
        self.slow('compute1', 'migrate_disk_and_power_off')
        self.migrate_to_compute2(server)
        self.wait_migration(server['id'], 'migrating')
        self.kill_and_restart('compute1')
        self.assert_back_on_compute1(server, 'resize_instance')
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_destination_killed_while_finishing_rolls_back(self):
        server = self.boot('rec-dst', host='compute1')
        self.slow('compute2', 'finish_migration')
        self.migrate_to_compute2(server)
        self.admin.wait_for(
            lambda: self.admin.server(server['id'])['OS-EXT-STS:task_state']
            == 'resize_finish', timeout=30, what='resize_finish')
        self.kill_and_restart('compute2')
        self.assert_back_on_compute1(server, 'finish_resize')
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_source_killed_while_confirming_finishes_the_confirm(self):
        server = self.resized_on_compute2('rec-confirm')
        self.slow('compute1', 'confirm_migration')
        self.admin.action(server['id'], {'confirmResize': None}, expect=204)
        self.wait_operating('compute1', 'confirm_migration')
        self.kill_and_restart('compute1')
        self.wait_migration(server['id'], 'confirmed')
        shown = self.admin.wait_for_status(server['id'], 'ACTIVE')
        self.assertEqual('compute2', shown['OS-EXT-SRV-ATTR:host'])
        self.assertNotIn(server['id'], self.local_guests('compute1'))
        self.assertIn(server['id'], self.local_guests('compute2'))
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_destination_killed_while_reverting_finishes_the_revert(self):
        server = self.resized_on_compute2('rec-revert')
        self.slow('compute2', 'revert_migration')
        self.admin.action(server['id'], {'revertResize': None}, expect=202)
        self.wait_operating('compute2', 'revert_migration')
        self.kill_and_restart('compute2')
        self.wait_migration(server['id'], 'reverted')
        shown = self.admin.wait_for_status(server['id'], 'ACTIVE')
        self.assertIsNone(shown['OS-EXT-STS:task_state'])
        self.assertEqual('compute1', shown['OS-EXT-SRV-ATTR:host'])
        self.assertNotIn(server['id'], self.local_guests('compute2'))
        self.admin.wait_for(
            lambda: self.local_guests('compute1')[server['id']]['power'] ==
            'running', timeout=30, what='old copy running')
        self.admin.delete('/servers/%s' % server['id'], expect=204)
