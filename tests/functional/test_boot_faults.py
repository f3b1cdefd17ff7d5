"""Boots meet faults: a scheduler that answers after the conductor gave
up (a late claim), and a DELETE while the server is still building.

Nova deletes a server in any state; a boot's claim states the server's
consumer generation (as a move's does), which a failed boot's rollback
and a delete both move, so a claim arriving late is refused: an ERROR
server that never launched holds nothing, a deleted one neither, and no
guest is left on a fake hypervisor (the after-test invariants check all
of it)."""
import signal
import time

from tests.functional import base

# The conductor gives up on a paused scheduler after this many seconds.
RPC_TIMEOUT = 6


class BootFaultsTest(base.StackTestCase):
    COMPUTES = 1
    # unknown_hosts_wait 0: a scheduler that never answers fails the
    # boot at its first timeout, not after asking again for a minute
    # (what this class checks is the late claim, refused).
    EXTRA_CONF = {'DEFAULT': {'rpc_response_timeout': RPC_TIMEOUT},
                  'compute': {'operation_seconds': 'spawn:3'},
                  'conductor': {'unknown_hosts_wait': 0}}

    def freeze_scheduler(self):
        self.stack.kill('scheduler1', signal.SIGSTOP, wait=0)
        self.addCleanup(self.thaw_scheduler)

    def thaw_scheduler(self):
        proc = self.stack.processes['scheduler1']
        proc.signal(signal.SIGCONT)
        proc.stopped_on_purpose = False

    def wait_claims_refused(self, count):
        self.admin.wait_for(
            lambda: self.stack.log('scheduler1').count(
                'Not claiming for') >= count,
            timeout=60, what='%d late claims refused' % count)

    def assert_nothing_left(self, server_ids):
        allocations = self.admin.placement()['allocations']
        guests = self.local_guests(self.stack.compute_hosts()[0])
        for server_id in server_ids:
            self.assertNotIn(server_id, allocations)
            self.assertNotIn(server_id, guests)
        log = self.stack.log('conductor1')
        self.assertNotIn('Rollback of BuildTask', log)

    def test_late_claim_for_a_failed_boot_is_refused(self):
        flavor = self.flavor('late')
        self.freeze_scheduler()
        posted = [self.admin.boot('late%d' % i, flavor['id'], wait=False)
                  for i in range(3)]
        failed = [self.admin.wait_for_status(s['id'], 'ERROR',
                                             timeout=RPC_TIMEOUT * 6)
                  for s in posted]
        self.assertEqual({None}, {s['OS-EXT-SRV-ATTR:host'] for s in failed})
        self.thaw_scheduler()
        # The scheduler now handles the requests the conductor gave up on.
        self.wait_claims_refused(3)
        self.assert_nothing_left([s['id'] for s in posted])
        for server in posted:
            self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_delete_while_scheduling(self):
        flavor = self.flavor('sched')
        before = self.stack.log('scheduler1').count('Not claiming for')
        self.freeze_scheduler()
        server = self.admin.boot('sched', flavor['id'], wait=False)
        shown = self.admin.server(server['id'], version='2.47')
        self.assertEqual('scheduling', shown['OS-EXT-STS:task_state'])
        self.admin.delete('/servers/%s' % server['id'], expect=204)
        self.admin.get('/servers/%s' % server['id'], expect=404)
        self.thaw_scheduler()
        self.wait_claims_refused(before + 1)
        self.assert_nothing_left([server['id']])

    def test_delete_while_spawning(self):
        flavor = self.flavor('spawn')
        server = self.admin.boot('spawn', flavor['id'], wait=False)
        self.admin.wait_for(
            lambda: self.admin.server(server['id'])[
                'OS-EXT-STS:task_state'] == 'spawning',
            timeout=30, interval=0.05, what='spawning')
        self.admin.delete('/servers/%s' % server['id'], expect=204)
        self.admin.get('/servers/%s' % server['id'], expect=404)
        # The spawn (3 s) ends after the delete: its copy goes too.
        time.sleep(5)
        self.assert_nothing_left([server['id']])
        # The host is usable afterwards.
        other = self.boot('after', flavor)
        self.admin.delete('/servers/%s' % other['id'], expect=204)
