"""A compute agent SIGKILLed inside a lifecycle action (shelving,
unshelving, pausing, rebooting, powering-off, a boot's spawn), then
restarted: the action's cast was acknowledged before its handler ran,
so it is lost, and the server kept its task_state until an operator
reset it (issue 36). The restarted agent finds the task_state through
the lifecycle table (nova_moves/moves/lifecycle.py) and redoes, settles
or (a boot) ends it in ERROR; one host is not restarted and the
stuck-move sweep gives its server's claim back once the host is down.
Real processes on the real broker; the action is made slow with the
fake hypervisor's per-operation durations so the kill lands inside
it."""
import os

from tests.functional import base

SLOW = 60  # seconds: far longer than the test, so only the kill ends it


class LifecycleRecoveryTest(base.StackTestCase):

    COMPUTES = 2
    # The sweep's part: a short timeout, and a down host is seen soon.
    EXTRA_CONF = {'DEFAULT': {'stuck_move_timeout': 8}}

    def operating(self, host):
        path = os.path.join(self.stack.workdir, 'state', 'fake-hypervisor',
                            '%s.operating' % host)
        try:
            with open(path) as f:
                return f.read()
        except OSError:
            return None

    def slow(self, host, operation):
        self.admin.set_faults(host, [], {operation: SLOW})
        self.addCleanup(self._restore, host)

    def _restore(self, host):
        if not self.stack.processes[host].alive():
            self.stack.restart(host)
        self.admin.wait_for(lambda: self._unslowed(host), timeout=60,
                            what='%s answers' % host)

    def _unslowed(self, host):
        try:
            self.admin.set_faults(host, [], {})
            return True
        except Exception:
            return False

    def killed_inside(self, server, host, operation, body, version=None):
        """Start ``body`` with ``operation`` slowed on ``host``, SIGKILL
        the host inside it and restart it."""
        self.slow(host, operation)
        self.admin.action(server['id'], body, version=version, expect=202)
        self.admin.wait_for(lambda: self.operating(host) == operation,
                            timeout=30, what='%s in %s' % (host, operation))
        self.stack.kill(host)
        self.stack.restart(host)

    def guest(self, host, server):
        return self.local_guests(host).get(server['id'], {}).get('power')

    def assert_settled(self, server, status, event, result):
        shown = self.admin.wait_for_status(server['id'], status, timeout=90)
        self.assertIsNone(shown['OS-EXT-STS:task_state'])
        # The action's compute event is closed, not left open (closed
        # just after the server settles: waited for).
        newest = self.admin.actions(server['id'])[0]

        def closed():
            detail = self.admin.action_detail(server['id'],
                                              newest['request_id'])
            events = {e['event']: e['result'] for e in detail['events']}
            return events.get(event) and events

        events = self.admin.wait_for(closed, timeout=30,
                                     what='%s closed' % event)
        self.assertEqual(result, events[event], events)
        return shown

    def allocated_on(self, server):
        usages = self.admin.placement()
        return usages['allocations'].get(server['id'])

    def test_killed_while_powering_off_is_stopped_after_restart(self):
        server = self.boot('lc-stop', host='compute1')
        self.killed_inside(server, 'compute1', 'power_off',
                           {'os-stop': None})
        self.assert_settled(server, 'SHUTOFF', 'compute_stop_instance',
                            'Success')
        self.assertEqual('shutdown', self.guest('compute1', server))
        self.assertTrue(self.allocated_on(server))
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_killed_while_rebooting_is_active_after_restart(self):
        server = self.boot('lc-reboot', host='compute1')
        self.killed_inside(server, 'compute1', 'reboot',
                           {'reboot': {'type': 'SOFT'}})
        self.assert_settled(server, 'ACTIVE', 'compute_reboot_instance',
                            'Success')
        self.assertEqual('running', self.guest('compute1', server))
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_killed_while_pausing_settles_as_its_guest_is(self):
        server = self.boot('lc-pause', host='compute1')
        self.killed_inside(server, 'compute1', 'pause', {'pause': None})
        # The guest never paused: the server is ACTIVE, and the pause's
        # event says it was interrupted (the user may pause again).
        self.assert_settled(server, 'ACTIVE', 'compute_pause_instance',
                            'Error')
        self.assertEqual('running', self.guest('compute1', server))
        self.admin.action(server['id'], {'pause': None}, expect=202)
        self.admin.wait_for_status(server['id'], 'PAUSED', timeout=30)
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_killed_while_shelving_is_offloaded_after_restart(self):
        server = self.boot('lc-shelve', host='compute1')
        self.killed_inside(server, 'compute1', 'shelve', {'shelve': None})
        shown = self.assert_settled(server, 'SHELVED_OFFLOADED',
                                    'compute_shelve_instance', 'Success')
        self.assertIsNone(shown['OS-EXT-SRV-ATTR:host'])
        self.assertNotIn(server['id'], self.local_guests('compute1'))
        self.assertFalse(self.allocated_on(server))
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_killed_while_unshelving_is_active_after_restart(self):
        server = self.boot('lc-unshelve', host='compute1')
        self.admin.action(server['id'], {'shelve': None}, expect=202)
        self.admin.wait_for_status(server['id'], 'SHELVED_OFFLOADED',
                                   timeout=30)
        self.killed_inside(server, 'compute1', 'unshelve',
                           {'unshelve': {'host': 'compute1'}},
                           version='2.91')
        shown = self.assert_settled(server, 'ACTIVE',
                                    'compute_unshelve_instance', 'Success')
        self.assertEqual('compute1', shown['OS-EXT-SRV-ATTR:host'])
        self.assertEqual('running', self.guest('compute1', server))
        self.assertTrue(self.allocated_on(server))
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_killed_while_spawning_a_boot_is_error_after_restart(self):
        self.slow('compute1', 'spawn')
        body = self.admin.boot('lc-boot', self.flavor('small')['id'],
                               host='compute1', wait=False)
        server = {'id': body['id']}
        self.admin.wait_for(lambda: self.operating('compute1') == 'spawn',
                            timeout=30, what='compute1 spawning')
        self.stack.kill('compute1')
        self.stack.restart('compute1')
        # Its request is gone: ERROR with why (Nova's), deletable.
        self.assert_settled(server, 'ERROR',
                            'compute_build_and_run_instance', 'Error')
        shown = self.admin.server(server['id'])
        self.assertIn('interrupted', shown['fault']['message'])
        self.admin.delete('/servers/%s' % server['id'], expect=204)
        self.admin.wait_for(lambda: not self.allocated_on(server),
                            timeout=30, what='allocation dropped')

    def test_host_down_and_not_restarted_gives_the_claim_back(self):
        server = self.boot('lc-down', host='compute2')
        self.slow('compute2', 'power_off')
        self.admin.action(server['id'], {'os-stop': None}, expect=202)
        self.admin.wait_for(lambda: self.operating('compute2') ==
                            'power_off', timeout=30, what='powering off')
        self.stack.kill('compute2')
        service = [s for s in self.admin.services('nova-compute')
                   if s['host'] == 'compute2'][0]
        self.admin.put('/os-services/%s' % service['id'],
                       {'forced_down': True}, version='2.53', expect=200)
        self.addCleanup(self.admin.put, '/os-services/%s' % service['id'],
                        {'forced_down': False}, version='2.53',
                        expect=200)
        # The sweep: the host does not answer and is down; nothing can
        # reach the guest, so the claim goes and the server can be
        # evacuated or acted on once the host is back.
        shown = self.assert_settled(server, 'ACTIVE',
                                    'compute_stop_instance', 'Error')
        self.assertEqual('compute2', shown['OS-EXT-SRV-ATTR:host'])
        self.stack.restart('compute2')
        self.admin.put('/os-services/%s' % service['id'],
                       {'forced_down': False}, version='2.53', expect=200)
        self.admin.action(server['id'], {'os-stop': None}, expect=202)
        self.admin.wait_for_status(server['id'], 'SHUTOFF', timeout=60)
        self.admin.delete('/servers/%s' % server['id'], expect=204)
