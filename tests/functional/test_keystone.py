"""auth_strategy = keystone against a real Keystone (keystone_fixture):
python-openstackclient with ordinary password auth finds nova_moves in
the Keystone catalog and moves a server every way; another project's
member gets Nova's 404/403; expired, revoked and forged tokens get 401.
The authorization tests run again with the stack on PostgreSQL.

Keystone's [token] expiration is short here (TOKEN_EXPIRATION) so that a
real expired token costs seconds, not an hour; every client re-issues
its token before it runs out (keystone_fixture.Keystone.token_provider,
a fresh authentication per CLI run)."""
import base64
import os
import subprocess
import time
import uuid

from tests.functional import keystone_fixture
from tests.functional import databases
from tests.functional import evacuate_base
from tests.functional import test_openstackclient

PASSWORD = 'pw-%s' % uuid.uuid4().hex[:8]


class KeystoneTest(keystone_fixture.OnKeystone, evacuate_base.EvacuateBase):

    COMPUTES = 2
    TOKEN_EXPIRATION = 20
    KEYSTONE_OPTIONS = {'token_expiration': TOKEN_EXPIRATION}
    SERVICE_PASSWORD = PASSWORD

    @classmethod
    def setUpClass(cls):
        started = time.monotonic()
        super().setUpClass()
        cls.setup_seconds = time.monotonic() - started

    @classmethod
    def create_identities(cls):
        super().create_identities()
        ks = cls.keystone
        cls.projects = {}
        cls.users = {}
        for user, project in (('alice', 'alpha'), ('bob', 'beta')):
            cls.projects[project] = ks.create_project(project)
            cls.users[user] = ks.create_user(user, PASSWORD,
                                             cls.projects[project])

    @classmethod
    def stack_ready(cls):
        super().stack_ready()
        # The catalog a client finds us in: compute, and the image
        # service that `server create --image` resolves names with
        # (nova_moves serves it under /v2.1, api/images.py).
        cls.keystone.register_service('compute', 'nova',
                                      cls.stack.endpoint)
        cls.keystone.register_service('image', 'glance',
                                      cls.stack.endpoint)
        # A token that test_tokens_* sees expire: issued and used now,
        # so that its TOKEN_EXPIRATION mostly passes during the others.
        cls.early_token, cls.early_expires = cls.keystone.issue_token(
            'alice', PASSWORD, 'alpha')
        cls.early_status = cls.stack.client(cls.early_token).get(
            '/servers').status_code

    def setUp(self):
        super().setUp()
        self.addOnException(self._attach_keystone_log)

    def _attach_keystone_log(self, exc_info):
        import testtools.content as content
        self.addDetail('log-keystone', content.text_content(
            self.keystone.log()[-6000:]))

    # -- helpers ---------------------------------------------------------
    def member(self, user):
        project = {'alice': 'alpha', 'bob': 'beta'}[user]
        return self.admin.as_user(self.keystone.token_provider(
            user, PASSWORD, project))

    def osc(self, user, *args, version=None, check=True):
        """`openstack` as an operator runs it: password auth, endpoints
        from the catalog, nothing pointing at nova_moves directly."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith('OS_')}
        password, project = {
            'admin': (keystone_fixture.ADMIN_PASSWORD, 'admin'),
            'alice': (PASSWORD, 'alpha'), 'bob': (PASSWORD, 'beta')}[user]
        env.update(OS_AUTH_URL=self.keystone.auth_url, OS_AUTH_TYPE='password',
                   OS_USERNAME=user, OS_PASSWORD=password,
                   OS_PROJECT_NAME=project, OS_USER_DOMAIN_NAME='Default',
                   OS_PROJECT_DOMAIN_NAME='Default',
                   OS_IDENTITY_API_VERSION='3',
                   OS_REGION_NAME=keystone_fixture.REGION)
        argv = [test_openstackclient.openstack_binary()]
        if version:
            argv += ['--os-compute-api-version', version]
        proc = subprocess.run(argv + list(args), env=env, capture_output=True,
                              text=True, timeout=120)
        if check:
            self.assertEqual(0, proc.returncode, 'openstack %s failed:\n%s'
                             % (' '.join(args), proc.stderr[-3000:]))
        return proc

    def status(self, server_id, status, client=None):
        return (client or self.admin).wait_for_status(server_id, status)

    # -- tests -----------------------------------------------------------
    def test_moves_through_the_catalog(self):
        self.report('keystone + stack setup', self.setup_seconds)
        # Flavor create is the command that needed identity v3 on our own
        # endpoint (test_openstackclient); with Keystone it just works.
        self.osc('admin', 'flavor', 'create', '--vcpus', '2', '--ram',
                 '1024', '--disk', '1', 'ks-medium')
        alice = self.member('alice')
        created = self.osc('alice', 'server', 'create', '--flavor',
                           self.flavor('small')['id'], '--image', 'fake',
                           '--nic', 'none', '-f', 'value', '-c', 'id',
                           'ks-vm')
        server_id = created.stdout.strip()
        self.addCleanup(self.admin.delete, '/servers/%s' % server_id)
        server = self.status(server_id, 'ACTIVE', alice)
        # Owner and project are the token's, as Keystone issued them.
        self.assertEqual((self.projects['alpha']['id'],
                          self.users['alice']['id']),
                         (server['tenant_id'], server['user_id']))
        host = self.admin.server(server_id)['OS-EXT-SRV-ATTR:host']

        def other(host):
            return [h for h in self.stack.compute_hosts() if h != host][0]

        self.osc('admin', 'server', 'migrate', server_id)
        moved = self.status(server_id, 'VERIFY_RESIZE')
        self.assertEqual(other(host), moved['OS-EXT-SRV-ATTR:host'])
        self.osc('admin', 'server', 'migrate', 'confirm', server_id)
        host = self.status(server_id, 'ACTIVE')['OS-EXT-SRV-ATTR:host']

        self.osc('alice', 'server', 'resize', '--flavor', 'ks-medium',
                 server_id)
        self.status(server_id, 'VERIFY_RESIZE', alice)
        self.osc('alice', 'server', 'resize', 'confirm', server_id)
        resized = self.status(server_id, 'ACTIVE', alice)
        self.assertEqual(2, resized['flavor']['vcpus'])
        host = self.admin.server(server_id)['OS-EXT-SRV-ATTR:host']

        self.osc('admin', 'server', 'migrate', '--live-migration', '--host',
                 other(host), server_id, version='2.30')
        self.admin.wait_for(
            lambda: any(m['status'] == 'completed' for m in
                        self.admin.migrations(instance_uuid=server_id)
                        if m['migration_type'] == 'live-migration'),
            timeout=60, what='live migration completed')
        before, host = host, self.status(server_id, 'ACTIVE')[
            'OS-EXT-SRV-ATTR:host']
        self.assertEqual(other(before), host)

        self.fail_host(host)
        self.osc('admin', 'server', 'evacuate', '--host', other(host),
                 server_id, version='2.29')
        evacuated, _took = self.wait_evacuated(server_id)
        self.assertEqual(other(host), evacuated['OS-EXT-SRV-ATTR:host'])
        self.restore_host(host)

        self.assertEqual(
            {'create', 'migrate', 'confirmResize', 'resize',
             'live-migration', 'evacuate'},
            {a['action'] for a in alice.actions(server_id)})
        self.osc('alice', 'server', 'delete', server_id)

    def test_other_project_gets_novas_404_and_403(self):
        alice, bob = self.member('alice'), self.member('bob')
        server = self.boot('ks-alpha', client=alice)
        self.addCleanup(self.admin.delete, '/servers/%s' % server['id'])
        path = '/servers/%s' % server['id']
        self.assertEqual(404, bob.get(path).status_code)
        self.assertEqual(404, bob.post(path + '/action', {
            'resize': {'flavorRef': self.flavor('small')['id']}}).status_code)
        self.assertEqual(404, bob.delete(path).status_code)
        self.assertEqual(404, bob.get(path + '/os-instance-actions')
                         .status_code)
        self.assertNotIn(server['id'], [
            s['id'] for s in bob.get('/servers', expect=200).json()[
                'servers']])
        # Admin-only APIs: 403 with Nova's policy message, even for the
        # owner.
        for client in (alice, bob):
            for api in ('/os-services', '/os-hypervisors', '/os-migrations'):
                response = client.get(api)
                self.assertEqual(403, response.status_code, api)
                self.assertIn('forbidden', response.json())
        # Admin-only server actions: Nova looks the server up first, in
        # the caller's project: 403 for the owner, 404 for anyone else.
        for action in ({'migrate': None},
                       {'os-migrateLive': {'host': None,
                                           'block_migration': 'auto'}},
                       {'evacuate': {}}):
            self.assertEqual(403, alice.post(
                path + '/action', action, version='2.30').status_code,
                action)
            self.assertEqual(404, bob.post(
                path + '/action', action, version='2.30').status_code,
                action)
        self.assertEqual(200, alice.get(path).status_code)
        # And the CLI shows it the way it shows Nova's 404.
        proc = self.osc('bob', 'server', 'show', server['id'], check=False)
        self.assertNotEqual(0, proc.returncode)
        self.assertIn('No Server found', proc.stderr)

    def test_tokens_expired_revoked_and_forged_get_401(self):
        alice = self.member('alice')
        token, expires = self.early_token, self.early_expires
        self.assertEqual(200, self.early_status)
        # Revoked before its first use: auth_token caches validated
        # tokens (token_cache_time), as in Nova.
        revoked, _expires = self.keystone.issue_token('alice', PASSWORD,
                                                      'alpha')
        self.keystone.revoke(revoked)
        valid = alice.as_user(token)
        # A real token's bytes with one character changed; a well-formed
        # fernet token under a key Keystone never had; a noauth token.
        tampered = token[:-8] + ('A' if token[-8] != 'A' else 'B') + \
            token[-7:]
        foreign = _fernet_token()
        for bad in (revoked, tampered, foreign, 'admin:admin',
                    uuid.uuid4().hex):
            response = alice.as_user(bad).get('/servers')
            self.assertEqual(401, response.status_code, bad)
            self.assertIn('unauthorized', response.json())
            self.assertEqual('Keystone uri="%s"' % self.keystone.auth_url,
                             response.headers.get('WWW-Authenticate'))
        self.assertEqual(401, alice.as_user('').get('/servers').status_code)
        # The version document stays public.
        self.assertEqual(200, alice.as_user('').get('').status_code)
        # Identity headers a client sends are stripped by auth_token: they
        # neither authenticate a bad token nor make a member admin.
        claimed = {'X-Identity-Status': 'Confirmed', 'X-Roles': 'admin',
                   'X-User-Id': 'admin', 'X-Project-Id': 'admin',
                   'X-Service-Roles': 'admin'}
        self.assertEqual(401, alice.as_user(foreign).get(
            '/servers', headers=claimed).status_code)
        self.assertEqual(403, alice.get('/os-services',
                                        headers=claimed).status_code)

        time.sleep(max(0, expires - time.time()) + 1)
        response = valid.get('/servers')
        self.assertEqual(401, response.status_code)
        self.assertIn('unauthorized', response.json())


class PostgreSQLKeystoneTest(KeystoneTest, databases.FreshDatabase):
    """The same authorization answers with the stack on PostgreSQL (a
    fresh database as openstack_citest): project ids and user ids are
    Keystone's 32-hex ids there too. The CLI move tour runs once, above."""
    ADMIN_URL = databases.PG_ADMIN_URL
    URL_FORMAT = databases.PG_URL_FORMAT
    test_moves_through_the_catalog = None

    def test_stack_is_on_postgresql(self):
        self.assertTrue(self.stack.database_url.startswith('postgresql'),
                        self.stack.database_url)


def _fernet_token():
    from cryptography import fernet
    payload = fernet.Fernet(fernet.Fernet.generate_key()).encrypt(
        os.urandom(64))
    # Keystone strips the base64 padding from its tokens.
    return base64.urlsafe_b64encode(base64.urlsafe_b64decode(payload)
                                    ).decode().rstrip('=')
