"""A step that arrives after its move was rolled back does nothing.

A process that is only frozen (SIGSTOP: a long GC pause, a VM migrated
under it, a swapped-out host) looks dead to the others: the conductor or
the stuck-move sweep rolls the move back and the server is fine on its
source. When the process thaws (SIGCONT) it still holds the request it
was given before. Whatever it does with it, the server must keep its
allocation, equal to its flavor, on the one host it lives on, and
nothing else may hold anything for it."""
import signal
import time

from nova_moves.harness import invariants
from tests.functional import base

# What a thawed process is given to do its (stale) work before the test
# looks; its step takes well under a second once it runs.
THAW_SETTLE = 8


class StaleStepTest(base.StackTestCase):
    COMPUTES = 2
    # The sweep rolls back a move whose first step has not moved for 6 s;
    # the conductor gives up on the scheduler after 10 s.
    EXTRA_CONF = {'DEFAULT': {'stuck_move_timeout': 6,
                              'rpc_response_timeout': 10}}

    def freeze(self, name):
        self.stack.kill(name, signal.SIGSTOP, wait=0)
        self.addCleanup(self.thaw, name)

    def thaw(self, name):
        proc = self.stack.processes[name]
        proc.signal(signal.SIGCONT)
        proc.stopped_on_purpose = False

    def migrate(self, server, body=None, version='2.56'):
        self.admin.action(server['id'], {'migrate': body}, version=version,
                          expect=202)

    def wait_rolled_back(self, server, timeout=90):
        """The move ended in error and the server is back, settled."""
        def rolled_back():
            migrations = self.admin.migrations(instance_uuid=server['id'])
            shown = self.admin.server(server['id'])
            if (migrations and migrations[0]['status'] in ('error', 'failed')
                    and shown['OS-EXT-STS:task_state'] is None):
                return shown
            return None
        return self.admin.wait_for(rolled_back, timeout=timeout,
                                   what='move of %s rolled back'
                                   % server['id'])

    def assert_only_on(self, server, host):
        """The server's allocation is its flavor, on ``host`` only; no
        other consumer (its migrations) holds anything; only ``host``'s
        hypervisor runs it."""
        shown = self.admin.server(server['id'], version='2.47')
        self.assertEqual(('ACTIVE', host),
                         (shown['status'], shown['OS-EXT-SRV-ATTR:host']))
        placement = self.admin.placement()
        root_of = {p['uuid']: p['root']
                   for p in placement['resource_providers'].values()}
        held = placement['allocations'].get(server['id'], {})
        self.assertEqual({host}, {root_of[rp] for rp in held}, held)
        self.assertEqual(invariants._resources(shown['flavor']),
                         invariants._sum(held))
        for mig in self.admin.migrations(instance_uuid=server['id']):
            self.assertNotIn(mig['uuid'], placement['allocations'])
        running = {h for h in self.stack.compute_hosts()
                   if server['id'] in self.local_guests(h)}
        self.assertEqual({host}, running)

    def test_late_prep_resize_after_sweep_rollback(self):
        server = self.boot('late-prep', host='compute1')
        self.freeze('compute2')
        self.migrate(server, {'host': 'compute2'})
        self.wait_rolled_back(server)
        self.assert_only_on(server, 'compute1')
        self.thaw('compute2')
        self.stack.wait_until_ready(60)
        time.sleep(THAW_SETTLE)
        self.assert_only_on(server, 'compute1')

    def _late_scheduler(self, server, move):
        self.freeze('scheduler1')
        move()
        self.wait_rolled_back(server)
        self.assert_only_on(server, 'compute1')
        self.thaw('scheduler1')
        time.sleep(THAW_SETTLE)
        self.assert_only_on(server, 'compute1')

    def test_late_select_destinations_for_cold_migrate(self):
        server = self.boot('late-sched', host='compute1')
        self._late_scheduler(server, lambda: self.migrate(server))

    def test_late_select_destinations_for_live_migrate(self):
        server = self.boot('late-sched-live', host='compute1')
        self._late_scheduler(server, lambda: self.admin.action(
            server['id'], {'os-migrateLive': {'host': None,
                                              'block_migration': 'auto'}},
            version='2.34', expect=202))
