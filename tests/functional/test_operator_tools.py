"""The operator's tools against a Keystone-authenticated stack (one
stack, several verbs): the openstackclient plugin's commands
(``openstack host drain ...``, ``openstack server move ...``) with
ordinary password auth and the catalog, and ``nova-moves-manage host``
through keystoneauth (OS_* and clouds.yaml; no noauth unless asked)."""
import json
import os
import subprocess
import time
import uuid

import fixtures

from nova_moves.harness import stack as nm_stack
from tests.functional import base
from tests.functional import keystone_fixture
from tests.functional import test_openstackclient

PASSWORD = 'pw-%s' % uuid.uuid4().hex[:8]


class OperatorToolsKeystoneTest(keystone_fixture.OnKeystone,
                                base.StackTestCase):

    COMPUTES = 3
    SERVICE_PASSWORD = PASSWORD

    @classmethod
    def stack_ready(cls):
        super().stack_ready()
        cls.keystone.register_service('compute', 'nova', cls.stack.endpoint)

    # -- helpers ---------------------------------------------------------
    def os_env(self):
        """An operator's shell: OS_* for the admin, nothing pointing at
        nova_moves directly (the catalog has it)."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith('OS_')}
        env.update(OS_AUTH_URL=self.keystone.auth_url,
                   OS_AUTH_TYPE='password', OS_USERNAME='admin',
                   OS_PASSWORD=keystone_fixture.ADMIN_PASSWORD,
                   OS_PROJECT_NAME='admin', OS_USER_DOMAIN_NAME='Default',
                   OS_PROJECT_DOMAIN_NAME='Default',
                   OS_IDENTITY_API_VERSION='3',
                   OS_REGION_NAME=keystone_fixture.REGION)
        return env

    def osc(self, *args, check=True):
        proc = subprocess.run(
            [test_openstackclient.openstack_binary()] + list(args),
            env=self.os_env(), capture_output=True, text=True, timeout=300)
        if check:
            self.assertEqual(0, proc.returncode, 'openstack %s:\n%s%s' % (
                ' '.join(args), proc.stdout[-2000:], proc.stderr[-3000:]))
        return proc

    def osc_json(self, *args):
        return json.loads(self.osc(*(args + ('-f', 'json'))).stdout)

    def manage(self, *args, env=None):
        return subprocess.run(
            [nm_stack._script('nova-moves-manage'), '--config-file',
             self.stack.config_path] + list(args),
            env=env or self.os_env(), capture_output=True, text=True,
            timeout=300)

    def enable(self, host):
        service = [s for s in self.admin.services('nova-moves-compute')
                   if s['host'] == host][0]
        self.admin.put('/os-services/%s' % service['id'],
                       {'status': 'enabled'}, version='2.53', expect=200)

    # -- tests -----------------------------------------------------------
    def test_server_move_verbs(self):
        server = self.boot('osc-move', host='compute1')
        # Cold: the dry run, then the move itself (2.56, --host checked).
        checked = self.osc_json('server', 'move', 'cold', server['id'],
                                '--host', 'compute2', '--check')
        self.assertEqual({'valid': True, 'reasons': ''}, checked)
        own = self.osc('server', 'move', 'cold', server['id'], '--host',
                       'compute1', '--check', check=False)
        self.assertIn('current host compute1 of the server. (HTTP 400)',
                      own.stderr)
        service = [s for s in self.admin.services('nova-moves-compute')
                   if s['host'] == 'compute3'][0]
        self.admin.put('/os-services/%s' % service['id'],
                       {'status': 'disabled'}, version='2.53', expect=200)
        try:
            invalid = self.osc_json('server', 'move', 'cold', server['id'],
                                    '--host', 'compute3', '--check')
        finally:
            self.enable('compute3')
        self.assertFalse(invalid['valid'])
        self.assertIn('ComputeFilter', invalid['reasons'])
        bad = self.osc('server', 'move', 'cold', server['id'], '--force',
                       check=False)
        self.assertNotEqual(0, bad.returncode)
        self.assertIn('--force needs --host', bad.stderr)
        moved = self.osc_json('server', 'move', 'cold', 'osc-move',
                              '--host', 'compute2', '--wait')
        self.assertEqual(('VERIFY_RESIZE', 'compute2'),
                         (moved['status'], moved['host']))
        self.admin.action(server['id'], {'confirmResize': None}, expect=204)
        self.admin.wait_for_status(server['id'], 'ACTIVE')
        # Live at 2.34: the dry run, then the asynchronous move.
        checked = self.osc_json('server', 'move', 'live', server['id'],
                                '--host', 'compute3', '--check')
        self.assertTrue(checked['valid'], checked)
        moved = self.osc_json('server', 'move', 'live', server['id'],
                              '--host', 'compute3', '--wait')
        self.assertEqual(('ACTIVE', 'compute3'),
                         (moved['status'], moved['host']))
        live = self.admin.migrations(instance_uuid=server['id'],
                                     migration_type='live-migration')[0]
        # The 2.34 path: the pre-checks ran in the conductor, recorded as
        # events of the live-migration action.
        actions = [a for a in self.admin.actions(server['id'])
                   if a['action'] == 'live-migration']
        events = {e['event'] for e in self.admin.action_detail(
            server['id'], actions[0]['request_id'])['events']}
        self.assertIn('conductor_live_migrate_instance', events)
        # Show: the migration with when each phase began and lasted.
        shown = self.osc_json('server', 'move', 'show', server['id'],
                              str(live['id']))
        self.assertEqual('completed', shown['status'])
        lines = shown['phases'].splitlines()
        self.assertEqual('accepted', lines[0].split()[0])
        self.assertEqual('completed', lines[-1].split()[0])
        self.assertRegex(lines[0], r'\d+\.\d{3}s$')
        other = self.boot('osc-other', host='compute1')
        wrong = self.osc('server', 'move', 'show', other['id'],
                         str(live['id']), check=False)
        self.assertIn('is not a migration of server', wrong.stderr)

    def test_unshelve_host(self):
        server = self.boot('osc-shelved', host='compute1')
        proc = self.osc('server', 'move', 'unshelve', server['id'],
                        '--host', 'compute2', check=False)
        # The server is not shelved (and this API may not serve unshelve
        # yet): either way a clear 4xx from the API, passed on as is.
        self.assertNotEqual(0, proc.returncode)
        self.assertRegex(proc.stderr, r'\(HTTP 4\d\d\)')

    def test_host_drain_verbs(self):
        ids = [self.boot('osc-drain%d' % i, host='compute2')['id']
               for i in range(2)]
        self.addCleanup(self.enable, 'compute2')
        # The plan first: nothing changes, every server has a move.
        plan = self.osc_json('host', 'drain', 'create', 'compute2',
                             '--target', 'compute3', '--check')
        self.assertEqual(2, plan['movable'], plan)
        # The plan's per-host live-migration limit the ETA used.
        self.assertEqual(1, plan['live_concurrency'], plan)
        for server_id in ids:
            self.assertIn('%s' % server_id, plan['servers'])
        self.assertIn('-> compute3', plan['servers'])
        self.assertEqual([], self.osc_json('host', 'drain', 'list',
                                           '--host', 'compute2'))
        started = time.monotonic()
        proc = self.osc('host', 'drain', 'create', 'compute2', '--target',
                        'compute3', '--wait', '-f', 'json')
        drain = json.loads(proc.stdout)
        self.assertEqual('completed', drain['status'], proc.stderr)
        self.assertIn('done=2', drain['counts'])
        # Progress went to stderr, one line per change.
        self.assertIn('compute2 [', proc.stderr)
        self.assertLess(time.monotonic() - started, 200)
        for server_id in ids:
            self.assertEqual('compute3', self.admin.server(
                server_id, version='2.47')['OS-EXT-SRV-ATTR:host'])
        listed = self.osc_json('host', 'drain', 'list', '--host',
                               'compute2')
        self.assertIn(drain['id'], [d['Id'] for d in listed])
        shown = self.osc_json('host', 'drain', 'show', drain['id'])
        for server_id in ids:
            self.assertIn(server_id, shown['servers'])
        self.assertIn('actual_seconds=', shown['estimate'])
        ended = self.osc('host', 'drain', 'delete', drain['id'],
                         check=False)
        self.assertNotEqual(0, ended.returncode)
        self.assertIn('HTTP 409', ended.stderr)
        missing = self.osc('host', 'drain', 'create', 'no-such-host',
                           check=False)
        self.assertIn('HTTP 404', missing.stderr)

    def test_manage_host_through_keystone(self):
        server = self.boot('mng-ks', host='compute1')
        # OS_* only: the token from Keystone, the endpoint from the catalog.
        listed = self.manage('host', 'servers', 'compute1')
        self.assertEqual(0, listed.returncode, listed.stderr)
        self.assertIn(server['id'], listed.stdout)
        self.assertIn('+--', listed.stdout)  # prettytable
        # clouds.yaml and --os-cloud, no OS_* at all.
        tmp = self.useFixture_tempdir()
        path = os.path.join(tmp, 'clouds.yaml')
        with open(path, 'w') as f:
            f.write('clouds:\n  lab:\n    auth:\n'
                    '      auth_url: %s\n      username: admin\n'
                    '      password: %s\n      project_name: admin\n'
                    '      user_domain_name: Default\n'
                    '      project_domain_name: Default\n'
                    '    region_name: %s\n    identity_api_version: 3\n'
                    % (self.keystone.auth_url,
                       keystone_fixture.ADMIN_PASSWORD,
                       keystone_fixture.REGION))
        bare = {k: v for k, v in os.environ.items()
                if not k.startswith('OS_')}
        listed = self.manage('host', 'servers', 'compute1', '--os-cloud',
                             'lab', env=dict(bare,
                                             OS_CLIENT_CONFIG_FILE=path))
        self.assertEqual(0, listed.returncode, listed.stderr)
        self.assertIn(server['id'], listed.stdout)
        # No credentials: a clear refusal, not a noauth token.
        refused = self.manage('host', 'servers', 'compute1', env=bare)
        self.assertNotEqual(0, refused.returncode)
        self.assertIn('No credentials', refused.stderr)
        # noauth when asked is what it was: a 401 under keystone.
        noauth = self.manage('host', 'servers', 'compute1',
                             '--os-auth-type', 'none', '--endpoint',
                             self.stack.endpoint, env=bare)
        self.assertNotEqual(0, noauth.returncode)

    def useFixture_tempdir(self):
        return self.useFixture(fixtures.TempDir()).path
