"""Nova's default policies against a real Keystone: eight personas ×
every route the API serves, on one stack.

Personas (Keystone's bootstrap roles imply admin -> manager -> member ->
reader): the cloud admin, a project manager, member and reader of
project alpha, a member of project beta, a user whose only role in alpha
is a custom ``observer``, the admin with a system-scoped token, and the
service user (role ``service`` in project service).

Every row is requested by every persona. A persona the row does not
allow gets 403, or 404 where Nova hides another project's server; a
persona it allows gets the row's status: a read answers, a write is
built to fail just after the policy check (a state conflict, a body the
handler refuses, an unknown id) or to change nothing, and the test
checks that the loop changed nothing. A body that fails the route's
schema is 400 for everyone (``invalid``), as in Nova, whose
@validation.schema runs before the handler's policy check. The writes
that must really happen for the least-privileged allowed persona
(member: create, stop, start, resize, revert, confirm, delete, delete a
server group; manager: cold and live migrate, their own migrations
without hosts) run once each, after the loop."""
import json
import os
import re
import time
import uuid

import requests
from testtools import content

from tests.functional import base
from tests.functional import keystone_fixture

PASSWORD = 'pw-%s' % uuid.uuid4().hex[:8]
PERSONAS = ('admin', 'manager', 'member', 'reader', 'observer', 'other',
            'system', 'service')
# Who passes each base rule (system-scoped tokens pass none: every rule
# is project-scoped).
ANYONE = {'admin', 'manager', 'member', 'reader', 'observer', 'other',
          'service'}
READERS = {'admin', 'manager', 'member', 'reader'}
MEMBERS = {'admin', 'manager', 'member'}
MANAGERS = {'admin', 'manager'}
ADMIN = {'admin'}
NO_POLICY = set(PERSONAS)  # routes with no rule, as in Nova
# Personas from another project: a server of alpha is not there for them.
OUTSIDERS = {'other', 'service'}
# Rules whose target is the caller's own project: beta's member passes.
OWN_READERS = READERS | {'other'}
SERVER_A = '/servers/{a}'
SSH_KEY = ('ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGVf3oO5xVqWnS6B3H0d5W'
           'h0m0uYtq0lq9b0d5m4Y1Qy matrix')
PUBLIC = ('/', '/v2', '/v2.1', '/openapi.json', '/v3', '/v3/projects',
          '/v3/projects/x', '/v3/users', '/v3/users/x', '/v3/domains',
          '/v3/domains/default')
OPENAPI = os.path.join(os.path.dirname(__file__), '..', '..', 'doc',
                       'api-ref', 'openapi.json')


def invalid(method, path, body, version):
    """A row whose body fails the route's schema: every persona gets 400,
    as in Nova, where @validation.schema runs before the handler's policy
    check (and before it looks the server up)."""
    return (method, path, body, version, set(PERSONAS), {400}, False)


def rows(ctx):
    """(method, path, body, version, allowed personas, allowed statuses,
    server-scoped[, personas not asked here])."""
    a, b = SERVER_A.format(**ctx), '/servers/%(b)s' % ctx
    act = a + '/action'
    alpha = ctx['alpha']
    return [
        ('GET', '/servers', None, '2.1', OWN_READERS, {200}, False),
        ('GET', '/servers/detail', None, '2.1', OWN_READERS, {200}, False),
        ('GET', '/servers?all_tenants=1', None, '2.1', ADMIN, {200}, False),
        # A valid body naming no flavor: refused after the rule.
        ('POST', '/servers', {'server': {
            'name': 'pm', 'flavorRef': 'no-such-flavor', 'imageRef': 'fake'}},
         '2.1', MEMBERS | {'other'}, {400}, False),
        ('GET', a, None, '2.1', READERS, {200}, True),
        # Allowed personas really delete, once, in the positive flows.
        ('DELETE', a, None, '2.1', MEMBERS, set(), True, MEMBERS),
        ('POST', act, {'os-start': None}, '2.1', MEMBERS, {409}, True),
        ('POST', b + '/action', {'os-stop': None}, '2.1', MEMBERS, {409},
         True),
        ('POST', act, {'resize': {'flavorRef': ctx['small']}}, '2.1',
         MEMBERS, {400}, True),
        ('POST', act, {'confirmResize': None}, '2.1', MEMBERS, {409}, True),
        ('POST', act, {'revertResize': None}, '2.1', MEMBERS, {409}, True),
        invalid('POST', act, {'migrate': {'no-such-field': 1}}, '2.56'),
        ('POST', act, {'migrate': {'host': 'no-such-host'}}, '2.56', ADMIN,
         {400}, True),
        ('POST', act, {'os-migrateLive': {'host': 'no-such-host',
                                          'block_migration': 'auto'}},
         '2.30', ADMIN, {400}, True),
        ('POST', act, {'evacuate': {}}, '2.29', ADMIN, {400, 409}, True),
        ('POST', act, {'injectNetworkInfo': None}, '2.1', ADMIN, {202},
         True),
        # The stopped server: a 409 for those allowed, nothing recorded.
        ('POST', b + '/action', {'changePassword': {'adminPass': 'p'}},
         '2.1', MEMBERS, {409}, True),
        ('POST', act, {'addSecurityGroup': {'name': 'default'}}, '2.1',
         MEMBERS, {202}, True),
        ('POST', act, {'removeSecurityGroup': {'name': 'web'}}, '2.1',
         MEMBERS, {404}, True),
        ('POST', act, {'restore': None}, '2.1', MEMBERS, {409}, True),
        # rescue: an image that does not exist, refused after the rule;
        # unrescue of a server not rescued: 409. Nothing recorded.
        ('POST', act, {'rescue': {'rescue_image_ref': 'no-such-image'}},
         '2.1', MEMBERS, {400}, True),
        ('POST', act, {'unrescue': None}, '2.1', MEMBERS, {409}, True),
        # Reads of the server's host (compute RPC 1.9): nothing recorded.
        ('POST', act, {'os-getConsoleOutput': {'length': 5}}, '2.1',
         MEMBERS, {200}, True),
        ('GET', a + '/diagnostics', None, '2.48', ADMIN, {200}, True),
        ('GET', a + '/migrations', None, '2.23', MANAGERS, {200}, True),
        ('GET', a + '/migrations/999999', None, '2.23', ADMIN, {404}, True),
        ('POST', a + '/migrations/999999/action', {'force_complete': None},
         '2.22', MANAGERS, {400, 404}, True),
        ('DELETE', a + '/migrations/999999', None, '2.24', MANAGERS,
         {400, 404}, True),
        ('GET', a + '/os-instance-actions', None, '2.1', READERS, {200},
         True),
        ('GET', a + '/os-instance-actions/%(request_id)s' % ctx, None, '2.1',
         READERS, {200}, True),
        ('GET', '/os-migrations', None, '2.80', ADMIN, {200}, False),
        ('GET', '/os-migrations?project_id=%s' % alpha, None, '2.80',
         MANAGERS, {200}, False),
        ('GET', '/os-migrations/999999', None, '2.80', MANAGERS, {404},
         False),
        invalid('POST', '/os-server-groups', {'server_group': {}}, '2.64'),
        ('GET', '/os-server-groups', None, '2.64', OWN_READERS, {200},
         False),
        # Nova checks a group's rules against its project: 403 outside.
        ('GET', '/os-server-groups/%(group)s' % ctx, None, '2.64', READERS,
         {200}, False),
        ('DELETE', '/os-server-groups/%(group)s' % ctx, None, '2.64',
         MEMBERS, set(), False, MEMBERS),
        # os-keypairs: the admin or the key pairs' own user (Nova's
        # rule), so every project persona acts on its own; the create
        # fails after the rule (a public key that does not parse).
        ('GET', '/os-keypairs', None, '2.35', ANYONE, {200}, False),
        ('POST', '/os-keypairs', {'keypair': {
            'name': 'pk', 'public_key': 'ssh-rsa not-a-key'}}, '2.92',
         ANYONE, {400}, False),
        ('GET', '/os-keypairs/no-such-key', None, '2.2', ANYONE, {404},
         False),
        ('DELETE', '/os-keypairs/no-such-key', None, '2.2', ANYONE, {404},
         False),
        ('GET', '/os-keypairs?user_id=someone-else', None, '2.10', ADMIN,
         {200}, False),
        ('GET', '/flavors', None, '2.1', NO_POLICY, {200}, False),
        ('GET', '/flavors/detail', None, '2.1', NO_POLICY, {200}, False),
        ('GET', '/flavors/%(small)s' % ctx, None, '2.1', NO_POLICY, {200},
         False),
        ('POST', '/flavors', {'flavor': {
            'name': 'pm', 'ram': 64, 'vcpus': 1, 'disk': 1,
            'id': ctx['small']}}, '2.1', ADMIN, {409}, False),
        ('DELETE', '/flavors/no-such-flavor', None, '2.1', ADMIN, {404},
         False),
        ('GET', '/flavors/%(small)s/os-extra_specs' % ctx, None, '2.1',
         OWN_READERS, {200}, False),
        ('GET', '/flavors/%(small)s/os-extra_specs/k' % ctx, None, '2.1',
         OWN_READERS, {404}, False),
        # Extra specs and access lists (issue 26): each write fails after
        # its policy check (a key the body does not name, a key or a
        # project not there, access to a public flavor).
        ('POST', '/flavors/no-such-flavor/os-extra_specs',
         {'extra_specs': {'k': 'v'}}, '2.1', ADMIN, {404}, False),
        ('PUT', '/flavors/no-such-flavor/os-extra_specs/k', {'k': 'v'},
         '2.1', ADMIN, {404}, False),
        ('DELETE', '/flavors/%(small)s/os-extra_specs/k' % ctx, None, '2.1',
         ADMIN, {404}, False),
        ('GET', '/flavors/%(small)s/os-flavor-access' % ctx, None, '2.1',
         ADMIN, {404}, False),
        ('POST', '/flavors/%(small)s/action' % ctx,
         {'addTenantAccess': {'tenant': alpha}}, '2.1', ADMIN, {409}, False),
        ('POST', '/flavors/%(small)s/action' % ctx,
         {'removeTenantAccess': {'tenant': alpha}}, '2.1', ADMIN, {404},
         False),
        ('GET', '/images', None, '2.1', NO_POLICY, {200}, False),
        ('GET', '/images/%(image)s' % ctx, None, '2.1', NO_POLICY, {200},
         False),
        ('GET', '/limits', None, '2.1', ANYONE, {200}, False),
        # Another project's limits: admin only; alpha's own users see
        # theirs (any role: Nova's '@'), beta's member does not.
        ('GET', '/limits?tenant_id=%s' % alpha, None, '2.1',
         ANYONE - OUTSIDERS, {200}, False),
        ('GET', '/os-aggregates', None, '2.1', ADMIN, {200}, False),
        # Writes fail after the rule: a bad body, an unknown aggregate.
        invalid('POST', '/os-aggregates', {'aggregate': {}}, '2.41'),
        ('GET', '/os-aggregates/999999', None, '2.41', ADMIN, {404}, False),
        ('PUT', '/os-aggregates/999999', {'aggregate': {'name': 'n'}},
         '2.41', ADMIN, {404}, False),
        ('DELETE', '/os-aggregates/999999', None, '2.41', ADMIN, {404},
         False),
        ('POST', '/os-aggregates/999999/action',
         {'add_host': {'host': 'no-such-host'}}, '2.41', ADMIN, {404}, False),
        ('POST', '/os-aggregates/999999/action',
         {'remove_host': {'host': 'no-such-host'}}, '2.41', ADMIN, {404},
         False),
        ('POST', '/os-aggregates/999999/action',
         {'set_metadata': {'metadata': {'k': 'v'}}}, '2.41', ADMIN, {404},
         False),
        ('GET', '/os-availability-zone', None, '2.1', ANYONE, {200}, False),
        ('GET', '/os-availability-zone/detail', None, '2.1', ADMIN, {200},
         False),
        ('GET', '/extensions', None, '2.1', ANYONE, {200}, False),
        ('GET', '/extensions/%(alias)s' % ctx, None, '2.1', ANYONE, {200},
         False),
        ('GET', '/os-host-drains', None, '2.1', ADMIN, {200}, False),
        invalid('POST', '/os-host-drains', {}, '2.1'),
        ('GET', '/os-host-drains/999999', None, '2.1', ADMIN, {404}, False),
        ('DELETE', '/os-host-drains/999999', None, '2.1', ADMIN, {404},
         False),
        ('GET', '/os-hypervisors', None, '2.1', ADMIN, {200}, False),
        ('GET', '/os-hypervisors/detail', None, '2.1', ADMIN, {200}, False),
        ('GET', '/os-hypervisors/statistics', None, '2.87', ADMIN, {200},
         False),
        ('GET', '/os-hypervisors/%(hypervisor)s' % ctx, None, '2.53', ADMIN,
         {200}, False),
        ('GET', '/os-hypervisors/%(hypervisor)s/uptime' % ctx, None, '2.53',
         ADMIN, {200}, False),
        ('GET', '/os-nova-moves-placement', None, '2.1', ADMIN, {200}, False),
        ('GET', '/os-quota-sets/%s' % alpha, None, '2.1', READERS, {200},
         False),
        ('GET', '/os-quota-sets/%s/detail' % alpha, None, '2.1', READERS,
         {200}, False),
        ('GET', '/os-quota-sets/%s/defaults' % alpha, None, '2.1', ANYONE,
         {200}, False),
        ('PUT', '/os-quota-sets/%s' % alpha, {'quota_set': {}}, '2.1',
         ADMIN, {200}, False),
        ('DELETE', '/os-quota-sets/%s' % ctx['beta'], None, '2.1', ADMIN,
         {202}, False),
        ('GET', '/os-services', None, '2.1', ADMIN, {200}, False),
        ('PUT', '/os-services/%s' % uuid.uuid4(), {'status': 'enabled'},
         '2.53', ADMIN, {400, 404}, False),
        ('DELETE', '/os-services/%s' % uuid.uuid4(), None, '2.53', ADMIN,
         {404}, False),
        invalid('PUT', '/os-nova-moves-test/computes/no-such-host/faults',
                {}, '2.1'),
        # The conformance routes (issue 26), each write failing after its
        # policy check (an unknown key) or changing nothing.
        ('PUT', a, {'server': {}}, '2.1', MEMBERS, {200}, True),
        ('GET', a + '/metadata', None, '2.1', READERS, {200}, True),
        ('POST', a + '/metadata', {'metadata': {}}, '2.1', MEMBERS, {200},
         True),
        ('PUT', a + '/metadata', {'metadata': {}}, '2.1', MEMBERS, {200},
         True),
        ('GET', a + '/metadata/nokey', None, '2.1', READERS, {404}, True),
        ('PUT', a + '/metadata/nokey', {'meta': {'other': 'v'}}, '2.1',
         MEMBERS, {400}, True),
        ('DELETE', a + '/metadata/nokey', None, '2.1', MEMBERS, {404}, True),
        # Server tags (2.26): the server has none, so deleting them all
        # changes nothing.
        ('GET', a + '/tags', None, '2.26', READERS, {200}, True),
        ('PUT', a + '/tags', {'tags': []}, '2.26', MEMBERS, {200}, True),
        ('DELETE', a + '/tags', None, '2.26', MEMBERS, {204}, True),
        ('GET', a + '/tags/notag', None, '2.26', READERS, {404}, True),
        ('PUT', a + '/tags/a,b', None, '2.26', MEMBERS, {400}, True),
        ('DELETE', a + '/tags/notag', None, '2.26', MEMBERS, {404}, True),
        ('PUT', '/flavors/no-such-flavor', {'flavor': {'description': 'd'}},
         '2.55', ADMIN, {404}, False),
        ('GET', '/os-hypervisors/compute/search', None, '2.1', ADMIN, {200},
         False),
        ('GET', '/os-hypervisors/compute/servers', None, '2.1', ADMIN,
         {200}, False),
        ('GET', '/os-quota-class-sets/default', None, '2.1', ADMIN, {200},
         False),
        ('PUT', '/os-quota-class-sets/default', {'quota_class_set': {}},
         '2.1', ADMIN, {200}, False),
        # Nova's own compute APIs (issue 40); the password clear empties
        # a password the server never had.
        ('GET', a + '/ips', None, '2.1', READERS, {200}, True),
        ('GET', a + '/ips/no-such-net', None, '2.1', READERS, {404}, True),
        ('GET', a + '/os-server-password', None, '2.1', READERS, {200},
         True),
        ('DELETE', a + '/os-server-password', None, '2.1', MEMBERS, {204},
         True),
        ('GET', '/os-hosts', None, '2.1', ADMIN, {200}, False),
        ('GET', '/os-hosts/no-such-host', None, '2.1', ADMIN, {404}, False),
        ('PUT', '/os-hosts/no-such-host', {'status': 'enable'}, '2.1',
         ADMIN, {404}, False),
        ('GET', '/os-hosts/no-such-host/startup', None, '2.1', ADMIN,
         {404}, False),
        ('GET', '/os-hosts/no-such-host/shutdown', None, '2.1', ADMIN,
         {404}, False),
        ('GET', '/os-hosts/no-such-host/reboot', None, '2.1', ADMIN, {404},
         False),
        ('GET', '/os-simple-tenant-usage', None, '2.40', ADMIN, {200},
         False),
        ('GET', '/os-simple-tenant-usage/%s' % alpha, None, '2.40',
         READERS, {200}, False),
        ('GET', '/os-instance_usage_audit_log', None, '2.1', ADMIN, {200},
         False),
        ('GET', '/os-instance_usage_audit_log/2026-01-01%2000:00:00', None,
         '2.1', ADMIN, {200}, False),
        ('POST', '/os-server-external-events', {'events': [{
            'name': 'network-changed', 'server_uuid': str(uuid.uuid4())}]},
         '2.1', ADMIN | {'service'}, {207}, False),
    ]


class PolicyMatrixTest(keystone_fixture.OnKeystone, base.StackTestCase):

    COMPUTES = 2
    SERVICE_PASSWORD = PASSWORD

    @classmethod
    def setUpClass(cls):
        cls.started = time.monotonic()
        super().setUpClass()

    @classmethod
    def create_identities(cls):
        ks = cls.keystone
        for role in ('manager', 'reader', 'member', 'service', 'observer'):
            if not ks.request('GET', '/roles?name=' + role,
                              expect=200).json()['roles']:
                ks.request('POST', '/roles', {'role': {'name': role}},
                           expect=201)
        projects = {name: ks.create_project(name)
                    for name in ('service', 'alpha', 'beta')}
        cls.project_ids = {k: v['id'] for k, v in projects.items()}
        cls.logins = {'admin': ('admin', keystone_fixture.ADMIN_PASSWORD,
                                'admin')}
        for persona, user, project, role in (
                ('service', 'nova-moves', 'service', 'service'),
                ('manager', 'mia', 'alpha', 'manager'),
                ('member', 'alice', 'alpha', 'member'),
                ('reader', 'rita', 'alpha', 'reader'),
                ('observer', 'olga', 'alpha', 'observer'),
                ('other', 'bob', 'beta', 'member')):
            ks.create_user(user, PASSWORD, projects[project], role=role)
            cls.logins[persona] = (user, PASSWORD, project)

    def setUp(self):
        super().setUp()
        self.clients = {name: self.admin.as_user(
            self.keystone.token_provider(*login))
            for name, login in self.logins.items()}
        self.clients['system'] = self.admin.as_user(self._system_token())

    def _system_token(self):
        body = {'auth': {
            'identity': {'methods': ['password'], 'password': {'user': {
                'name': 'admin', 'password': keystone_fixture.ADMIN_PASSWORD,
                'domain': {'id': 'default'}}}},
            'scope': {'system': {'all': True}}}}
        response = requests.post(self.keystone.auth_url + '/auth/tokens',
                                 json=body, timeout=30)
        self.assertEqual(201, response.status_code, response.text)
        self.assertIn('system', response.json()['token'])
        return response.headers['X-Subject-Token']

    def _state(self, server_ids):
        """What no request of the loop may change."""
        admin = self.admin
        servers = admin.get('/servers/detail?all_tenants=1', version='2.47',
                            expect=200).json()['servers']
        return {
            'servers': sorted((s['id'], s['status'],
                               s['OS-EXT-SRV-ATTR:host'],
                               s['OS-EXT-STS:task_state'],
                               s['flavor']['original_name'])
                              for s in servers),
            'actions': {i: len(admin.actions(i)) for i in server_ids},
            'migrations': len(admin.migrations()),
            'flavors': len(admin.get('/flavors', expect=200).json()[
                'flavors']),
            'services': sorted((s['id'], s['status'], s['forced_down'])
                               for s in admin.services()),
            'drains': admin.get('/os-host-drains', expect=200).json(),
            'groups': admin.get('/os-server-groups?all_projects=1',
                                version='2.64', expect=200).json(),
        }

    def test_the_matrix_covers_every_route(self):
        with open(OPENAPI) as f:
            paths = json.load(f)['paths']
        dummy = dict.fromkeys(('a', 'b', 'small', 'alpha', 'beta',
                               'request_id', 'image', 'alias', 'hypervisor',
                               'group'), 'x')
        asked = {(row[0], '/v2.1' + row[1].split('?')[0])
                 for row in rows(dummy)}
        missing = []
        for path, methods in paths.items():
            # The public documents and the identity shim: PUBLIC below.
            if path.rstrip('/') in ('/v2', '/v2.1', '', '/openapi.json') or \
                    path.startswith('/v3'):
                continue
            pattern = re.compile('^%s$' % re.sub(r'\{[^}]+\}', '[^/]+',
                                                 path))
            for method in methods:
                if method.upper() in ('GET', 'POST', 'PUT', 'DELETE') and \
                        not any(m == method.upper() and pattern.match(p)
                                for m, p in asked):
                    missing.append('%s %s' % (method.upper(), path))
        self.assertEqual([], missing)

    def test_every_route_by_every_persona(self):
        member = self.clients['member']
        small, medium = self.flavor('small'), self.flavor('medium', vcpus=2)
        a = self.boot('pa', client=member)
        b = self.boot('pb', client=member)
        member.action(b['id'], {'os-stop': None}, expect=202)
        member.wait_for_status(b['id'], 'SHUTOFF')
        group = member.post('/os-server-groups', {'server_group': {
            'name': 'pg', 'policy': 'anti-affinity'}}, version='2.64',
            expect=200).json()['server_group']
        hypervisor = self.admin.get('/os-hypervisors', version='2.53',
                                    expect=200).json()['hypervisors'][0]
        ctx = {'a': a['id'], 'b': b['id'], 'small': small['id'],
               'alpha': self.project_ids['alpha'],
               'beta': self.project_ids['beta'],
               'request_id': member.actions(a['id'])[0]['request_id'],
               'image': self.admin.get('/images', expect=200).json()[
                   'images'][0]['id'],
               'alias': self.admin.get('/extensions', expect=200).json()[
                   'extensions'][0]['alias'],
               'hypervisor': hypervisor['id'], 'group': group['id']}
        before = self._state([a['id'], b['id']])
        requests_made, failures = 0, []
        for row in rows(ctx):
            method, path, body, version, allowed, statuses, server = row[:7]
            for persona in set(PERSONAS) - set(row[7:8] and row[7]):
                if persona in allowed:
                    expected = statuses
                elif server and persona in OUTSIDERS:
                    expected = {404}  # Nova hides another project's server
                else:
                    expected = {403}
                response = self.clients[persona].request(
                    method, path, body, version=version)
                requests_made += 1
                if response.status_code not in expected:
                    failures.append('%s %s %s as %s: %s, expected %s: %s' % (
                        method, path, body, persona, response.status_code,
                        sorted(expected), response.text[:200]))
        self.assertEqual([], failures)
        # Not one write got through the loop.
        self.assertEqual(before, self._state([a['id'], b['id']]))
        self.report_numbers(requests_made, len(rows(ctx)))
        # The public documents (and the identity shim, whatever the
        # harden work makes of it under Keystone): never a 5xx.
        root = self.stack.endpoint[:-len('/v2.1')]
        for path in PUBLIC:
            for persona in PERSONAS:
                response = self.clients[persona].session.get(
                    root + path, timeout=30, headers={
                        'X-Auth-Token': self.clients[persona].token()
                        if callable(self.clients[persona].token)
                        else self.clients[persona].token})
                self.assertLess(response.status_code, 500, (path, persona))
        member.delete('/os-server-groups/%s' % group['id'], version='2.64',
                      expect=204)
        self._keypair_flow()
        self._positive_flows(a, medium)

    def _keypair_flow(self):
        """The least-privileged persona imports and deletes its own key
        pair; another project's member cannot name its user, the admin
        can."""
        reader, other = self.clients['reader'], self.clients['other']
        made = reader.post('/os-keypairs', {'keypair': {
            'name': 'rk', 'public_key': SSH_KEY}}, version='2.92',
            expect=201).json()['keypair']
        path = '/os-keypairs/rk?user_id=%s' % made['user_id']
        self.assertEqual(403, other.request('GET', path,
                                            version='2.10').status_code)
        self.assertEqual(404, other.request('GET', '/os-keypairs/rk',
                                            version='2.10').status_code)
        self.admin.get(path, version='2.10', expect=200)
        reader.request('DELETE', '/os-keypairs/rk', version='2.2',
                       expect=204)

    def report_numbers(self, requests_made, routes):
        self.addDetail('matrix', content.text_content(
            '%d requests, %d rows, %.0f s since Keystone start' % (
                requests_made, routes, time.monotonic() - self.started)))

    def _positive_flows(self, a, medium):
        """The least-privileged allowed persona really does it."""
        member, manager = self.clients['member'], self.clients['manager']
        server = member.post('/servers', {'server': {
            'name': 'pc', 'flavorRef': self.flavor('small')['id'],
            'imageRef': 'fake', 'networks': 'none'}}, version='2.37',
            expect=202).json()['server']
        sid = server['id']
        member.wait_for_status(sid, 'ACTIVE')
        member.action(sid, {'os-stop': None}, expect=202)
        member.wait_for_status(sid, 'SHUTOFF')
        member.action(sid, {'os-start': None}, expect=202)
        member.wait_for_status(sid, 'ACTIVE')
        member.action(sid, {'resize': {'flavorRef': medium['id']}},
                      expect=202)
        member.wait_for_status(sid, 'VERIFY_RESIZE')
        member.action(sid, {'revertResize': None}, expect=202)
        member.wait_for_status(sid, 'ACTIVE')
        # A manager moves their project's server without naming a host.
        manager.action(sid, {'migrate': None}, expect=202)
        member.wait_for_status(sid, 'VERIFY_RESIZE')
        member.action(sid, {'confirmResize': None}, expect=204)
        member.wait_for_status(sid, 'ACTIVE')
        manager.action(sid, {'os-migrateLive': {
            'host': None, 'block_migration': 'auto'}}, version='2.30',
            expect=202)
        self.admin.wait_for(
            lambda: any(m['status'] == 'completed' for m in
                        self.admin.migrations(instance_uuid=sid)
                        if m['migration_type'] == 'live-migration'),
            timeout=60, what='live migration completed')
        member.wait_for_status(sid, 'ACTIVE')
        # Their own project's migrations, without the hosts.
        own = manager.get('/os-migrations?project_id=%s'
                          % self.project_ids['alpha'], version='2.80',
                          expect=200).json()['migrations']
        self.assertEqual({'migration', 'resize', 'live-migration'},
                         {m['migration_type'] for m in own
                          if m['instance_uuid'] == sid})
        for migration in own:
            self.assertIsNone(migration['source_compute'])
            self.assertIsNone(migration['dest_compute'])
        shown = manager.get('/os-migrations/%s' % own[0]['id'],
                            version='2.80', expect=200).json()['migration']
        self.assertIsNone(shown['dest_host'])
        # A member (no manager role) may not list them at all.
        self.assertEqual(403, member.get('/os-migrations/%s' % own[0]['id'],
                                         version='2.80').status_code)
        admin_view = self.admin.get('/os-migrations?instance_uuid=%s' % sid,
                                    version='2.80', expect=200).json()
        self.assertTrue(all(m['source_compute'] for m in
                            admin_view['migrations']))
        # Readers, observers and other projects still changed nothing.
        self.assertEqual(
            {'create', 'stop', 'start', 'resize', 'revertResize', 'migrate',
             'confirmResize', 'live-migration'},
            {x['action'] for x in member.actions(sid)})
        member.delete('/servers/%s' % sid, expect=204)
        self.admin.wait_for(
            lambda: self.admin.get('/servers/%s' % sid).status_code == 404,
            timeout=30, what='server deleted')
        self.assertEqual('ACTIVE', self.admin.server(a['id'])['status'])
