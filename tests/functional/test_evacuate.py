"""Evacuate on real processes: the source compute is killed (SIGKILL),
forced down through the API (or left to time out), its servers are
rebuilt elsewhere, and when it is restarted it cleans up after itself."""
import os
import subprocess
import sys
import time

from tests.functional.evacuate_base import COMPUTE
from tests.functional.evacuate_base import EvacuateBase


class EvacuateTest(EvacuateBase):

    COMPUTES = 3

    def test_bad_requests(self):
        server = self.boot('ev-bad', host='compute1')
        sid = server['id']
        # The source is up: Nova's 400.
        resp = self.evacuate(sid, {'onSharedStorage': False}, '2.1',
                             expect=400)
        self.assertIn('Compute service of compute1 is still in use.',
                      resp.text)
        resp = self.evacuate(sid, {}, '2.68', expect=400)
        self.assertIn('still in use', resp.text)
        # The dry run lists that instead (nova_moves-move-check).
        verdict = self.evacuate(sid, {'host': 'compute2', 'check': True},
                                '2.68').json()
        self.assertEqual({'valid': False, 'reasons': [
            'Compute service of compute1 is still in use.']}, verdict)
        resp = self.evacuate(sid, {'check': True}, '2.68', expect=400)
        self.assertIn('check', resp.text)
        # Bodies per microversion.
        resp = self.evacuate(sid, {}, '2.13', expect=400)
        self.assertIn("'onSharedStorage' is a required property", resp.text)
        resp = self.evacuate(sid, {'onSharedStorage': False}, '2.14',
                             expect=400)
        self.assertIn('onSharedStorage', resp.text)
        resp = self.evacuate(sid, {'host': 'compute2', 'force': True},
                             '2.68', expect=400)
        self.assertIn('force', resp.text)
        resp = self.evacuate(sid, {'force': True}, '2.29', expect=400)
        self.assertIn("Can't force to a non-provided destination", resp.text)
        resp = self.evacuate(sid, {'host': 'nowhere'}, '2.29', expect=404)
        self.assertIn('Compute host nowhere could not be found.', resp.text)
        resp = self.evacuate(sid, {'host': 'compute1'}, '2.29', expect=400)
        self.assertIn("can't be the same", resp.text)
        user = self.admin.as_user('alice:proj-a')
        user.action(sid, {'evacuate': {}}, version='2.68', expect=404)
        # Nothing changed.
        shown = self.admin.server(sid, version='2.47')
        self.assertEqual(('ACTIVE', None, 'compute1'), (
            shown['status'], shown['OS-EXT-STS:task_state'],
            shown['OS-EXT-SRV-ATTR:host']))
        self.assertIsNone(self.evacuation_of(sid))
        self.admin.delete('/servers/%s' % sid, expect=204)

    def test_evacuate_with_and_without_host_then_source_cleans_up(self):
        stay = self.boot('ev-stay', host='compute1')
        moved = self.boot('ev-auto', host='compute1')
        forced = self.boot('ev-forced', host='compute1')
        self.fail_host('compute1')
        # Both stay on compute1's disk while it is dead.
        self.assertLessEqual({stay['id'], moved['id'], forced['id']},
                             set(self.local_guests('compute1')))

        verdict = self.evacuate(moved['id'], {'host': 'compute2',
                                              'check': True}, '2.14').json()
        self.assertEqual({'valid': True, 'reasons': []}, verdict)
        self.assertIsNone(self.evacuation_of(moved['id']))
        resp = self.evacuate(moved['id'], {}, '2.14')
        self.assertEqual(200, resp.status_code)
        self.assertEqual(b'', resp.content)
        server, took = self.wait_evacuated(moved['id'])
        self.report('evacuate (scheduler) API latency', self.latencies[-1])
        self.report('evacuate (scheduler) to ACTIVE elsewhere', took)
        self.assertIn(server['OS-EXT-SRV-ATTR:host'], ('compute2',
                                                       'compute3'))
        migration = self.evacuation_of(moved['id'])
        self.assertEqual(('done', 'compute1', server['OS-EXT-SRV-ATTR:host']),
                         (migration['status'], migration['source_compute'],
                          migration['dest_compute']))
        # The source half is parked on the migration until compute1 returns.
        allocations = self.admin.placement()['allocations']
        self.assertIn(migration['uuid'], allocations)
        self.assert_invariants()

        resp = self.evacuate(forced['id'], {'host': 'compute3',
                                            'force': True}, '2.29')
        self.assertEqual(200, resp.status_code)
        server, took = self.wait_evacuated(forced['id'])
        self.report('evacuate (forced, 2.29) to ACTIVE elsewhere', took)
        self.assertEqual('compute3', server['OS-EXT-SRV-ATTR:host'])

        detail = self.admin.action_detail(
            moved['id'], self.admin.actions(moved['id'])[0]['request_id'])
        self.assertEqual('evacuate', detail['action'])
        self.assertEqual(
            {'conductor_rebuild_instance': 'Success',
             'compute_rebuild_instance': 'Success'},
            {e['event']: e['result'] for e in detail['events']})

        started = time.monotonic()
        self.stack.restart('compute1')
        self.set_forced_down('compute1', False)
        self.wait_service_state('compute1', 'up')
        for sid in (moved['id'], forced['id']):
            self.admin.wait_for(
                lambda: self.evacuation_of(sid)['status'] == 'completed',
                timeout=30, what='evacuation of %s completed' % sid)
        self.report('restart to evacuations completed',
                    time.monotonic() - started)
        guests = self.local_guests('compute1')
        self.assertNotIn(moved['id'], guests)
        self.assertNotIn(forced['id'], guests)
        # Its own server is untouched.
        self.assertIn(stay['id'], guests)
        allocations = self.admin.placement()['allocations']
        for sid in (moved['id'], forced['id']):
            self.assertNotIn(self.evacuation_of(sid)['uuid'], allocations)
        self.assertEqual('compute1', self.admin.server(
            stay['id'], version='2.47')['OS-EXT-SRV-ATTR:host'])
        for sid in (stay['id'], moved['id'], forced['id']):
            self.admin.delete('/servers/%s' % sid, expect=204)

    def test_killed_source_down_after_service_down_time_and_295_stopped(self):
        server = self.boot('ev-295', host='compute1')
        self.fail_host('compute1', force_down=False)
        # Still "up" until its heartbeat is older than service_down_time.
        self.evacuate(server['id'], {}, '2.95', expect=400)
        started = time.monotonic()
        self.wait_service_state('compute1', 'down')
        self.report('killed compute seen down after',
                    time.monotonic() - started)
        self.evacuate(server['id'], {'host': 'compute2'}, '2.95')
        shown, took = self.wait_evacuated(server['id'], ('SHUTOFF',))
        self.report('evacuate (2.95) to SHUTOFF elsewhere', took)
        self.assertEqual('compute2', shown['OS-EXT-SRV-ATTR:host'])
        self.assertEqual(4, shown['OS-EXT-STS:power_state'])
        self.assertEqual('stopped', shown['OS-EXT-STS:vm_state'])
        # Nova shows no progress on a SHUTOFF server.
        self.assertNotIn('progress', shown)
        self.assertEqual('shutdown',
                         self.local_guests('compute2')[server['id']]['power'])
        self.restore_host('compute1')
        self.assertNotIn(server['id'], self.local_guests('compute1'))
        self.assertEqual('completed',
                         self.evacuation_of(server['id'])['status'])
        # os-start powers the evacuated server on where it now is.
        self.admin.action(server['id'], {'os-start': None}, expect=202)
        shown = self.admin.wait_for_status(server['id'], 'ACTIVE')
        self.assertEqual(('compute2', 1), (shown['OS-EXT-SRV-ATTR:host'],
                                           shown['OS-EXT-STS:power_state']))
        self.assertEqual('running',
                         self.local_guests('compute2')[server['id']]['power'])
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_no_capacity_anywhere_is_error_and_nothing_leaks(self):
        big = self.flavor('ev-big', ram=20000)
        victim = self.boot('ev-victim', flavor=big, host='compute1')
        fillers = [self.boot('ev-fill%d' % i, flavor=big, host=host)
                   for i, host in enumerate(('compute2', 'compute3'))]
        self.fail_host('compute1')
        before = self.admin.placement()['allocations'][victim['id']]
        self.evacuate(victim['id'], {}, '2.68')
        shown, _took = self.wait_evacuated(victim['id'], ('ERROR',))
        self.assertEqual('compute1', shown['OS-EXT-SRV-ATTR:host'])
        self.assertIn('No valid host', shown['fault']['message'])
        migration = self.evacuation_of(victim['id'])
        self.assertEqual('error', migration['status'])
        allocations = self.admin.placement()['allocations']
        self.assertEqual(before, allocations[victim['id']])
        self.assertNotIn(migration['uuid'], allocations)
        detail = self.admin.action_detail(
            victim['id'], self.admin.actions(victim['id'])[0]['request_id'])
        self.assertEqual('Error', {e['event']: e['result'] for e in
                                   detail['events']}
                         ['conductor_rebuild_instance'])
        # Returning, compute1 keeps its server (still its own).
        self.restore_host('compute1')
        self.assertIn(victim['id'], self.local_guests('compute1'))
        for server in [victim] + fillers:
            self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_rebuild_failure_on_destination_puts_everything_back(self):
        server = self.boot('ev-rebuild-fails', host='compute1')
        self.fail_host('compute1')
        self.admin.set_faults('compute2', ['rebuild'])
        self.addCleanup(self.admin.set_faults, 'compute2', [])
        before = self.admin.placement()['allocations'][server['id']]
        self.evacuate(server['id'], {'host': 'compute2'}, '2.68')
        shown, _took = self.wait_evacuated(server['id'], ('ERROR',))
        self.assertEqual('compute1', shown['OS-EXT-SRV-ATTR:host'])
        self.assertIn('rebuild', shown['fault']['message'])
        migration = self.evacuation_of(server['id'])
        self.assertEqual('failed', migration['status'])
        allocations = self.admin.placement()['allocations']
        self.assertEqual(before, allocations[server['id']])
        self.assertNotIn(migration['uuid'], allocations)
        self.assertNotIn(server['id'], self.local_guests('compute2'))
        detail = self.admin.action_detail(
            server['id'], self.admin.actions(server['id'])[0]['request_id'])
        self.assertEqual(
            {'conductor_rebuild_instance': 'Success',
             'compute_rebuild_instance': 'Error'},
            {e['event']: e['result'] for e in detail['events']})
        self.restore_host('compute1')
        self.assertIn(server['id'], self.local_guests('compute1'))
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_ten_at_once(self):
        import concurrent.futures
        servers = [self.boot('ev-many%d' % i, host='compute1')
                   for i in range(10)]
        self.fail_host('compute1')
        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(10) as pool:
            codes = list(pool.map(
                lambda s: self.evacuate(s['id'], {}, '2.68').status_code,
                servers))
        self.assertEqual([200] * 10, codes)
        self.report('10 concurrent evacuate API latency (max)',
                    max(self.latencies))
        for server in servers:
            shown, _took = self.wait_evacuated(server['id'])
            self.assertNotEqual('compute1', shown['OS-EXT-SRV-ATTR:host'])
        self.report('10 concurrent evacuations all ACTIVE elsewhere',
                    time.monotonic() - started)
        self.assert_invariants()
        self.restore_host('compute1')
        guests = self.local_guests('compute1')
        for server in servers:
            self.assertNotIn(server['id'], guests)
            self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_restart_while_evacuation_still_running(self):
        server = self.boot('ev-slow', host='compute1')
        self.fail_host('compute1')
        self.admin.set_faults('compute2', [], {'rebuild': 8})
        self.addCleanup(self.admin.set_faults, 'compute2', [], {})
        self.evacuate(server['id'], {'host': 'compute2'}, '2.68')
        self.admin.wait_for(
            lambda: self.admin.server(server['id'], version='2.47')
            ['OS-EXT-STS:task_state'] == 'rebuild_spawning', timeout=20,
            what='rebuild started')
        # A second evacuation while the first runs: 409 (compare-and-swap).
        resp = self.evacuate(server['id'], {}, '2.68', expect=409)
        self.assertIn('task_state', resp.text)
        # compute1 returns while compute2 is still rebuilding.
        self.stack.restart('compute1')
        self.set_forced_down('compute1', False)
        self.wait_service_state('compute1', 'up')
        self.assertEqual('pre-migrating',
                         self.evacuation_of(server['id'])['status'])
        self.assertIn(server['id'], self.local_guests('compute1'))
        shown, _took = self.wait_evacuated(server['id'])
        self.assertEqual('compute2', shown['OS-EXT-SRV-ATTR:host'])
        self.admin.wait_for(
            lambda: self.evacuation_of(server['id'])['status'] ==
            'completed', timeout=30, what='evacuation completed')
        self.assertNotIn(server['id'], self.local_guests('compute1'))
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def _openstack(self, *args, version=None):
        argv = [os.path.join(os.path.dirname(sys.executable), 'openstack'),
                '--os-auth-type', 'admin_token', '--os-token', 'admin:admin',
                '--os-endpoint', self.stack.endpoint]
        if version:
            argv += ['--os-compute-api-version', version]
        started = time.monotonic()
        result = subprocess.run(argv + list(args), capture_output=True,
                                text=True, timeout=120)
        self.assertEqual(0, result.returncode,
                         'openstack %s: %s %s' % (' '.join(args),
                                                  result.stdout,
                                                  result.stderr))
        return result.stdout, time.monotonic() - started

    def test_openstackclient_service_set_down_and_server_evacuate(self):
        server = self.boot('ev-osc', host='compute1')
        self.stack.kill('compute1')
        self.addCleanup(self.restore_host, 'compute1')
        self._openstack('compute', 'service', 'set', '--down', 'compute1',
                        COMPUTE, version='2.11')
        self.assertTrue(self.service('compute1')['forced_down'])
        self.assertEqual('down', self.service('compute1')['state'])
        self._openstack('compute', 'service', 'set', '--up', 'compute1',
                        COMPUTE, version='2.53')
        self.assertFalse(self.service('compute1')['forced_down'])
        self._openstack('compute', 'service', 'set', '--down', 'compute1',
                        COMPUTE, version='2.53')
        self.assertTrue(self.service('compute1')['forced_down'])
        # Not --wait: OSC 10.5 compares the lower-cased status with
        # ['ACTIVE'] and never returns; poll through the API instead.
        out, took = self._openstack('server', 'evacuate', '--host',
                                    'compute3', server['id'],
                                    version='2.29')
        self.report('openstack server evacuate (CLI run)', took)
        shown, _took = self.wait_evacuated(server['id'])
        self.assertEqual(('ACTIVE', 'compute3'), (
            shown['status'], shown['OS-EXT-SRV-ATTR:host']))
        self.admin.wait_for(
            lambda: self.evacuation_of(server['id'])['status'] == 'done',
            timeout=20, what='migration done')
        # Without a host.
        other = self.boot('ev-osc2', host='compute3')
        self.assertEqual('compute3', other['OS-EXT-SRV-ATTR:host'])
        self.restore_host('compute1')
        self.assertNotIn(server['id'], self.local_guests('compute1'))
        self.stack.kill('compute3')
        self.addCleanup(self.restore_host, 'compute3')
        self._openstack('compute', 'service', 'set', '--down', 'compute3',
                        COMPUTE, version='2.53')
        # 2.1 sends onSharedStorage: false. (With no version OSC
        # negotiates the newest, 2.95, and the server ends up SHUTOFF.)
        self._openstack('server', 'evacuate', other['id'], version='2.1')
        shown, _took = self.wait_evacuated(other['id'])
        self.assertEqual('ACTIVE', shown['status'])
        self.assertNotEqual('compute3', shown['OS-EXT-SRV-ATTR:host'])
        self.admin.wait_for(
            lambda: self.evacuation_of(other['id'])['status'] == 'done',
            timeout=20, what='migration done')
        self.restore_host('compute3')
        for sid in (server['id'], other['id']):
            self.admin.delete('/servers/%s' % sid, expect=204)

    def test_manage_host_evacuate(self):
        servers = [self.boot('ev-mng%d' % i, host='compute2')
                   for i in range(3)]
        manage = [os.path.join(os.path.dirname(sys.executable),
                               'nova-moves-manage'),
                  '--config-file', self.stack.config_path, 'host']
        env = dict(os.environ)
        noauth = ['--os-auth-type', 'none']
        listed = subprocess.run(
            manage + ['servers', 'compute2'] + noauth + ['--endpoint',
                      self.stack.endpoint], capture_output=True, text=True,
            timeout=60, env=env)
        self.assertEqual(0, listed.returncode, listed.stderr)
        for server in servers:
            self.assertIn(server['id'], listed.stdout)
        self.stack.kill('compute2')
        self.addCleanup(self.restore_host, 'compute2')
        started = time.monotonic()
        result = subprocess.run(
            manage + ['evacuate', 'compute2'] + noauth + ['--endpoint',
                      self.stack.endpoint, '--concurrency', '2',
                      '--force-down'],
            capture_output=True, text=True, timeout=120, env=env)
        self.report('manage host evacuate of 3 servers',
                    time.monotonic() - started)
        self.assertEqual(0, result.returncode, result.stdout + result.stderr)
        self.assertIn('3 of 3 servers evacuated from compute2',
                      result.stdout)
        for server in servers:
            self.assertIn(server['id'], result.stdout)
            shown = self.admin.server(server['id'], version='2.47')
            self.assertEqual('ACTIVE', shown['status'])
            self.assertNotEqual('compute2', shown['OS-EXT-SRV-ATTR:host'])
            self.admin.wait_for(
                lambda: self.evacuation_of(server['id'])['status'] ==
                'done', timeout=20, what='migration done')
        # Nothing left: exit 0 and says so.
        again = subprocess.run(
            manage + ['evacuate', 'compute2'] + noauth + ['--endpoint',
                      self.stack.endpoint],
            capture_output=True, text=True, timeout=60, env=env)
        self.assertEqual(0, again.returncode, again.stderr)
        self.assertIn('No servers on compute2', again.stdout)
        self.restore_host('compute2')
        for server in servers:
            self.assertNotIn(server['id'], self.local_guests('compute2'))
            self.admin.delete('/servers/%s' % server['id'], expect=204)


class ForcedEvacuateComplexAllocationTest(EvacuateBase):
    """Nova spec "Remove force flag from live-migrate and evacuate", on
    older microversions: a forced evacuation of a server
    whose allocation is not a single root provider is NoValidHost, with
    nothing leaked; without force the scheduler handles it."""

    COMPUTES = [{'name': 'compute1', 'compute': {'disk_provider': 'nested'}},
                {'name': 'compute2',
                 'compute': {'disk_provider': 'sharing:agg1'}},
                {'name': 'compute3'}]

    def _forced_is_no_valid_host(self, source, dest):
        server = self.boot('ev-complex-%s' % source, host=source)
        before = self.admin.placement()['allocations'][server['id']]
        self.assertGreater(len(before), 1, before)
        self.fail_host(source)
        self.evacuate(server['id'], {'host': dest, 'force': True}, '2.67')
        shown, _took = self.wait_evacuated(server['id'], ('ERROR',))
        self.assertIn('No valid host', shown['fault']['message'])
        self.assertEqual(source, shown['OS-EXT-SRV-ATTR:host'])
        migration = self.evacuation_of(server['id'])
        self.assertEqual('error', migration['status'])
        allocations = self.admin.placement()['allocations']
        self.assertEqual(before, allocations[server['id']])
        self.assertNotIn(migration['uuid'], allocations)
        self.assert_invariants()
        # Letting the scheduler choose works (server in ERROR may move).
        self.evacuate(server['id'], {'host': dest}, '2.68')
        shown, _took = self.wait_evacuated(server['id'])
        self.assertEqual(dest, shown['OS-EXT-SRV-ATTR:host'])
        self.restore_host(source)
        self.assertNotIn(server['id'], self.local_guests(source))
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_forced_nested_allocation_is_no_valid_host(self):
        self._forced_is_no_valid_host('compute1', 'compute3')

    def test_forced_sharing_allocation_is_no_valid_host(self):
        self._forced_is_no_valid_host('compute2', 'compute3')
