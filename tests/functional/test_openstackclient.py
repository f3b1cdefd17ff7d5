"""The real python-openstackclient (and openstacksdk) against a real stack.

Run exactly as an operator would: ``openstack --os-auth-type admin_token
--os-token admin:admin --os-endpoint http://HOST:PORT/v2.1 ... -f json``.
The client negotiates the compute microversion itself (up to our 2.95).

Two client-side facts shape these tests (see api/versions.py):
- keystoneauth takes every service's major version from the endpoint URL
  ("/v2.1" -> 2), so python-openstackclient's ``server list`` and ``flavor
  create``, which demand identity v3 before sending any request, need
  ``OS_IDENTITY_ENDPOINT_OVERRIDE=http://HOST:PORT/v3`` (api/identity.py);
  test_identity_v3_needs_override pins that down.
- ``--image fake`` is resolved through the image service found on the same
  endpoint: /v2.1/images (api/images.py).
"""
import json
import os
import shutil
import subprocess
import sys
import time

from nova_moves.harness import quickstart
from tests.functional import base


def openstack_binary():
    """The `openstack` of the venv running the tests, else one on PATH."""
    candidate = os.path.join(os.path.dirname(sys.executable), 'openstack')
    return candidate if os.path.exists(candidate) else \
        shutil.which('openstack')


class OpenStackClientTest(base.StackTestCase):

    COMPUTES = 2

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.root = cls.stack.endpoint.rsplit('/v2.1', 1)[0]

    # -- helpers --------------------------------------------------------------
    def run_osc(self, *args, identity_override=False, parse=True,
                expect_ok=True):
        env = dict(os.environ)
        for key in list(env):
            if key.startswith('OS_'):
                del env[key]
        if identity_override:
            env['OS_IDENTITY_ENDPOINT_OVERRIDE'] = self.root + '/v3'
        argv = [openstack_binary(), '--os-auth-type', 'admin_token',
                '--os-token', 'admin:admin', '--os-endpoint',
                self.stack.endpoint] + list(args)
        if parse:
            argv += ['-f', 'json']
        proc = subprocess.run(argv, env=env, capture_output=True, text=True,
                              timeout=180)
        if expect_ok:
            self.assertEqual(0, proc.returncode, 'openstack %s failed:\n%s'
                             % (' '.join(args), proc.stderr[-3000:]))
        else:
            return proc
        return json.loads(proc.stdout) if parse and proc.stdout.strip() \
            else proc.stdout

    def wait_for_osc_status(self, server_id, status, timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            server = self.run_osc('server', 'show', server_id)
            if server['status'] == status and \
                    server['OS-EXT-STS:task_state'] is None:
                return server
            self.assertLess(time.monotonic(), deadline,
                            'server %s still %s' % (server_id,
                                                    server['status']))
            time.sleep(1)

    # -- tests ----------------------------------------------------------------
    def test_flavor_create_show_list(self):
        created = self.run_osc('flavor', 'create', '--vcpus', '2', '--ram',
                               '384', '--disk', '3', 'osc-flavor',
                               identity_override=True)
        self.assertEqual('osc-flavor', created['name'])
        self.assertEqual((2, 384, 3), (created['vcpus'], created['ram'],
                                       created['disk']))
        shown = self.run_osc('flavor', 'show', 'osc-flavor')
        self.assertEqual(created['id'], shown['id'])
        self.assertEqual({}, shown['properties'])
        listed = self.run_osc('flavor', 'list')
        self.assertIn(created['id'], [f['ID'] for f in listed])
        self.run_osc('flavor', 'delete', 'osc-flavor', parse=False)
        self.assertNotIn(created['id'], [
            f['ID'] for f in self.run_osc('flavor', 'list')])

    def test_server_lifecycle_and_events(self):
        flavor = self.flavor('osc')
        created = self.run_osc('server', 'create', '--flavor', flavor['name'],
                               '--image', 'fake', '--nic', 'none', 'osc-vm')
        server_id = created['id']
        self.assertIn('fake', created['image'])
        server = self.wait_for_osc_status(server_id, 'ACTIVE')
        self.assertIn(server['OS-EXT-SRV-ATTR:host'],
                      self.stack.compute_hosts())
        self.assertEqual('active', server['OS-EXT-STS:vm_state'])
        self.assertEqual(flavor['name'], server['flavor']['name'])
        self.assertEqual('UP', server['host_status'])
        self.assertEqual('nova', server['OS-EXT-AZ:availability_zone'])

        listed = self.run_osc('server', 'list', identity_override=True)
        row = [s for s in listed if s['ID'] == server_id]
        self.assertEqual(1, len(row), listed)
        self.assertEqual(('ACTIVE', 'fake', flavor['name']),
                         (row[0]['Status'], row[0]['Image'],
                          row[0]['Flavor']))

        events = self.run_osc('server', 'event', 'list', server_id)
        self.assertEqual(['create'], [e['Action'] for e in events])
        request_id = events[0]['Request ID']
        detail = self.run_osc('server', 'event', 'show', server_id,
                              request_id)
        self.assertEqual('create', detail['action'])
        results = {e['event']: e['result'] for e in detail['events']}
        self.assertEqual('Success',
                         results.get('compute_build_and_run_instance'),
                         detail)
        self.assertIn('conductor_schedule_and_build_instances', results)
        # Admin sees the real host of the compute event (2.62).
        build = [e for e in detail['events']
                 if e['event'] == 'compute_build_and_run_instance'][0]
        self.assertEqual(server['OS-EXT-SRV-ATTR:host'], build['host'])

        # An old microversion: flavor as a link, resolved by the client.
        old = self.run_osc('--os-compute-api-version', '2.1', 'server',
                           'show', server_id)
        self.assertEqual('ACTIVE', old['status'])
        self.assertIn(flavor['name'], str(old['flavor']))

        self.run_osc('server', 'delete', '--wait', server_id, parse=False)
        gone = self.run_osc('server', 'show', server_id, expect_ok=False)
        self.assertNotEqual(0, gone.returncode)
        self.assertIn('No Server found', gone.stderr)

    def test_server_stop_and_start(self):
        server = self.boot('osc-power')
        sid, host = server['id'], server['OS-EXT-SRV-ATTR:host']
        # Wrong state is Nova's 409, and claims nothing.
        resp = self.admin.action(sid, {'os-start': None}, expect=409)
        self.assertIn('vm_state active', resp.text)
        self.run_osc('server', 'stop', sid, parse=False)
        stopped = self.wait_for_osc_status(sid, 'SHUTOFF')
        self.assertEqual(('stopped', 4), (stopped['OS-EXT-STS:vm_state'],
                                          stopped['OS-EXT-STS:power_state']))
        self.assertEqual('shutdown', self.local_guests(host)[sid]['power'])
        self.admin.action(sid, {'os-stop': None}, expect=409)
        self.run_osc('server', 'start', sid, parse=False)
        started = self.wait_for_osc_status(sid, 'ACTIVE')
        self.assertEqual(('active', 1, host), (
            started['OS-EXT-STS:vm_state'], started['OS-EXT-STS:power_state'],
            started['OS-EXT-SRV-ATTR:host']))
        self.assertEqual('running', self.local_guests(host)[sid]['power'])
        events = self.run_osc('server', 'event', 'list', sid)
        self.assertEqual(['start', 'stop', 'create'],
                         [e['Action'] for e in events])
        detail = self.run_osc('server', 'event', 'show', sid,
                              events[0]['Request ID'])
        self.assertEqual({'compute_start_instance': 'Success'},
                         {e['event']: e['result'] for e in detail['events']})
        self.admin.delete('/servers/%s' % sid, expect=204)

    def test_compute_services_enable_disable_force_down(self):
        services = self.run_osc('compute', 'service', 'list')
        self.assertEqual(
            {'nova-conductor', 'nova-scheduler',
             'nova-compute'}, {s['Binary'] for s in services})
        self.assertTrue(all(s['State'] == 'up' for s in services), services)

        def compute1():
            return self.run_osc('compute', 'service', 'list', '--host',
                                'compute1', '--service',
                                'nova-compute', '--long')[0]

        service_id = [s['id'] for s in self.admin.services(
            'nova-moves-compute') if s['host'] == 'compute1'][0]
        self.addCleanup(self.admin.put, '/os-services/%s' % service_id,
                        {'status': 'enabled', 'forced_down': False},
                        version='2.53')
        self.run_osc('compute', 'service', 'set', '--disable',
                     '--disable-reason', 'osc test', 'compute1',
                     'nova-compute', parse=False)
        row = compute1()
        self.assertEqual(('disabled', 'osc test'),
                         (row['Status'], row['Disabled Reason']))
        self.run_osc('compute', 'service', 'set', '--enable', 'compute1',
                     'nova-compute', parse=False)
        self.assertEqual('enabled', compute1()['Status'])

        self.run_osc('compute', 'service', 'set', '--down', 'compute1',
                     'nova-compute', parse=False)
        row = compute1()
        self.assertEqual((True, 'down'), (row['Forced Down'], row['State']))
        self.run_osc('compute', 'service', 'set', '--up', 'compute1',
                     'nova-compute', parse=False)
        row = compute1()
        self.assertEqual((False, 'up'), (row['Forced Down'], row['State']))

    def test_hypervisor_list_and_show(self):
        hypervisors = self.run_osc('hypervisor', 'list')
        self.assertEqual(sorted(self.stack.compute_hosts()),
                         sorted(h['Hypervisor Hostname']
                                for h in hypervisors))
        self.assertTrue(all(h['State'] == 'up' for h in hypervisors))
        shown = self.run_osc('hypervisor', 'show', 'compute1')
        self.assertEqual('compute1', shown['hypervisor_hostname'])
        self.assertEqual('compute1', shown['service_host'])
        self.assertEqual([], shown['aggregates'])
        # uptime(1)-style line, which the client splits up.
        self.assertEqual('0', shown['users'])
        self.assertIn('load_average', shown)
        # Below 2.88: usage fields, and uptime from its own URL.
        old = self.run_osc('--os-compute-api-version', '2.87', 'hypervisor',
                           'show', 'compute1')
        self.assertIn('memory_mb', old)
        self.assertEqual('0', old['users'])
        # Below 2.28 cpu_info is a JSON string the client decodes.
        older = self.run_osc('--os-compute-api-version', '2.27',
                             'hypervisor', 'show', 'compute1')
        self.assertIn('model', older['cpu_info'])

    def test_limits_zones_and_hypervisor_stats(self):
        server = self.boot('limits-vm')
        limits = {row['Name']: row['Value'] for row in self.run_osc(
            'limits', 'show', '--absolute', identity_override=True)}
        # openstacksdk's names for Nova's totalInstancesUsed, maxTotalCores.
        self.assertGreaterEqual(limits['instances_used'], 1)
        self.assertIn('max_total_cores', limits)
        zones = self.run_osc('availability', 'zone', 'list', '--compute',
                             identity_override=True)
        self.assertIn('nova', [z['Zone Name'] for z in zones])
        stats = self.run_osc('--os-compute-api-version', '2.87',
                             'hypervisor', 'stats', 'show')
        self.assertEqual(self.COMPUTES, stats['count'])
        self.assertGreaterEqual(stats['running_vms'], 1)
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_identity_v3_needs_override(self):
        """Documents the client-side limit described in api/versions.py:
        without the identity override python-openstackclient refuses
        ``server list`` before sending anything; with it, it works."""
        proc = self.run_osc('server', 'list', expect_ok=False)
        self.assertNotEqual(0, proc.returncode)
        self.assertIn("API version '3'", proc.stderr)
        self.assertIsInstance(self.run_osc('server', 'list',
                                           identity_override=True), list)


    def test_quickstart_hint_runs(self):
        """The command lines quickstart --keep prints work as pasted."""
        server = self.boot('hint-vm')
        env = {k: v for k, v in os.environ.items()
               if not k.startswith('OS_')}
        env['PATH'] = os.path.dirname(openstack_binary()) + os.pathsep + \
            env.get('PATH', '')
        proc = subprocess.run(
            ['bash', '-ec', quickstart.client_hint(self.stack.endpoint)],
            env=env, capture_output=True, text=True, timeout=180)
        self.assertEqual(0, proc.returncode, proc.stderr[-3000:])
        self.assertIn(server['id'], proc.stdout)


class OpenStackSDKTest(base.StackTestCase):
    """openstacksdk with its defaults: it negotiates the microversion up to
    its own maximum against our 2.95."""

    COMPUTES = 1

    def connect(self):
        import openstack
        return openstack.connect(
            auth_type='admin_token',
            auth={'endpoint': self.stack.endpoint, 'token': 'admin:admin'},
            compute_api_version='2', identity_api_version='3')

    def test_sdk_reads_everything(self):
        conn = self.connect()
        server = self.boot('sdk-vm')
        fetched = conn.compute.get_server(server['id'])
        self.assertEqual('ACTIVE', fetched.status)
        self.assertEqual('compute1', fetched.compute_host)
        self.assertEqual('active', fetched.vm_state)
        self.assertIn(server['id'], [s.id for s in conn.compute.servers()])
        self.assertIn(self.flavor('small')['id'],
                      [f.id for f in conn.compute.flavors()])
        self.assertEqual({'nova-compute', 'nova-conductor',
                          'nova-scheduler'},
                         {s.binary for s in conn.compute.services()})
        self.assertEqual(['compute1'], [h.name for h in
                                         conn.compute.hypervisors()])
        actions = list(conn.compute.server_actions(server['id']))
        self.assertEqual(['create'], [a.action for a in actions])
        action = conn.compute.get_server_action(actions[0].request_id,
                                                server['id'])
        self.assertIn('compute_build_and_run_instance',
                      [e.event for e in action.events])
        # The SDK settled on a microversion within our range.
        response = conn.compute.get('/servers/%s' % server['id'],
                                    microversion='2.95')
        self.assertEqual('compute 2.95',
                         response.headers['OpenStack-API-Version'])
        conn.compute.delete_server(server['id'])
        conn.compute.wait_for_delete(fetched, wait=60)
