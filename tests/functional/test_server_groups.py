"""os-server-groups over HTTP, and every placement honouring them: boot,
cold migrate, live migrate and a host drain never put two anti-affine
servers together (nor split an affinity group), on 3 fake computes."""
from tests.functional import base

V = '2.64'


class ServerGroupsTest(base.StackTestCase):

    COMPUTES = 3

    def _group(self, policy, rules=None, client=None, version=V):
        body = {'name': 'g-%s' % policy, 'policy': policy}
        if rules:
            body['rules'] = rules
        return (client or self.admin).post(
            '/os-server-groups', {'server_group': body}, version=version,
            expect=200).json()['server_group']

    def _boot_in(self, group, name, wait=True):
        server = {'name': name, 'flavorRef': self.flavor('small')['id'],
                  'imageRef': 'fake', 'networks': 'none'}
        body = self.admin.post('/servers', {
            'server': server, 'os:scheduler_hints': {'group': group['id']}},
            expect=202).json()['server']
        self.addCleanup(self._delete, body['id'])
        if not wait:
            return body
        return self.admin.wait_for_status(body['id'], ('ACTIVE', 'ERROR'))

    def _delete(self, server_id):
        self.admin.request('DELETE', '/servers/%s' % server_id)
        self.admin.wait_for(lambda: self.admin.get(
            '/servers/%s' % server_id).status_code == 404, timeout=30,
            what='%s deleted' % server_id)

    def _host(self, server_id):
        return self.admin.server(server_id, version='2.47')[
            'OS-EXT-SRV-ATTR:host']

    def test_api_shapes_and_validation(self):
        old = self.admin.post('/os-server-groups', {'server_group': {
            'name': 'old', 'policies': ['anti-affinity']}},
            expect=200).json()['server_group']
        self.assertEqual(['anti-affinity'], old['policies'])
        self.assertEqual({}, old['metadata'])
        self.assertNotIn('policy', old)
        new = self._group('anti-affinity', {'max_server_per_host': 2})
        self.assertEqual('anti-affinity', new['policy'])
        self.assertEqual({'max_server_per_host': 2}, new['rules'])
        self.assertEqual([], new['members'])
        self.assertNotIn('policies', new)
        for version, body, words in (
                (V, {'name': 'x', 'policy': 'affinity',
                     'rules': {'max_server_per_host': 2}}, 'anti-affinity'),
                (V, {'name': 'x', 'policies': ['affinity']}, 'policies'),
                ('2.14', {'name': 'x', 'policies': ['soft-affinity']},
                 'soft-affinity'),
                (V, {'name': 'x', 'policy': 'sideways'}, 'policy'),
                (V, {'name': '', 'policy': 'affinity'}, 'name'),
                (V, {'name': 'x', 'policy': 'anti-affinity',
                     'rules': {'max_server_per_host': 0}}, 'max_server')):
            response = self.admin.post('/os-server-groups', {
                'server_group': body}, version=version)
            self.assertEqual(400, response.status_code, (body, response.text))
            self.assertIn(words, response.text)
        listed = {g['id'] for g in self.admin.get(
            '/os-server-groups', version=V, expect=200).json()[
                'server_groups']}
        self.assertLessEqual({old['id'], new['id']}, listed)
        # Another project neither sees nor deletes the group.
        other = self.admin.as_user('bob:beta')
        self.assertNotIn(new['id'], {g['id'] for g in other.get(
            '/os-server-groups', version=V, expect=200).json()[
                'server_groups']})
        self.assertEqual(403, other.get('/os-server-groups/%s' % new['id'],
                                        version=V).status_code)
        self.assertEqual(403, other.request(
            'DELETE', '/os-server-groups/%s' % new['id']).status_code)
        # Booting into another project's or an unknown group is a 400 and
        # leaves no server behind.
        before = len(other.get('/servers', expect=200).json()['servers'])
        response = other.post('/servers', {
            'server': {'name': 'x', 'flavorRef': self.flavor('small')['id'],
                       'imageRef': 'fake', 'networks': 'none'},
            'os:scheduler_hints': {'group': new['id']}})
        self.assertEqual(400, response.status_code, response.text)
        self.assertEqual(before, len(other.get('/servers', expect=200).json()[
            'servers']))
        self.admin.request('DELETE', '/os-server-groups/%s' % old['id'],
                           expect=204)
        self.assertEqual(404, self.admin.get(
            '/os-server-groups/%s' % old['id']).status_code)

    def test_anti_affinity_at_boot_and_on_every_move(self):
        group = self._group('anti-affinity')
        servers = [self._boot_in(group, 'aa%d' % i) for i in range(3)]
        self.assertEqual(['ACTIVE'] * 3, [s['status'] for s in servers])
        hosts = [self._host(s['id']) for s in servers]
        self.assertEqual(3, len(set(hosts)), hosts)
        shown = self.admin.get('/os-server-groups/%s' % group['id'],
                               version=V, expect=200).json()['server_group']
        self.assertEqual({s['id'] for s in servers}, set(shown['members']))
        self.assertEqual([group['id']], self.admin.server(
            servers[0]['id'], version='2.71')['server_groups'])
        # A fourth member has nowhere to go: ERROR, nothing held.
        fourth = self._boot_in(group, 'aa3')
        self.assertEqual('ERROR', fourth['status'])
        # Every host holds a member: a cold migration finds no host and
        # the server stays where it is.
        first = servers[0]['id']
        self.admin.action(first, {'migrate': None}, expect=202)
        self.admin.wait_for(lambda: any(
            m['status'] == 'error' for m in self.admin.migrations(
                instance_uuid=first)), what='migration error')
        self.admin.wait_for_status(first, 'ACTIVE')
        self.assertEqual(hosts[0], self._host(first))
        # With the third member gone, its host is the only place left.
        self._delete(servers[2]['id'])
        self.admin.action(first, {'migrate': None}, expect=202)
        self.admin.wait_for_status(first, 'VERIFY_RESIZE')
        self.assertEqual(hosts[2], self._host(first))
        self.admin.action(first, {'confirmResize': None}, expect=204)
        self.admin.wait_for_status(first, 'ACTIVE')
        # Live: back to the freed host, never onto the second member's.
        self.admin.action(first, {'os-migrateLive': {
            'host': None, 'block_migration': 'auto'}}, version='2.34',
            expect=202)
        self.admin.wait_for(lambda: self._host(first) == hosts[0] and
                            self.admin.server(first)['status'] == 'ACTIVE',
                            what='live migrated back')
        # A named host holding a member is refused by the check.
        verdict = self.admin.action(first, {'migrate': {
            'host': hosts[1], 'check': True}}, version='2.56').json()
        self.assertFalse(verdict['valid'], verdict)
        self.assertIn('ServerGroupAntiAffinityFilter',
                      ' '.join(verdict['reasons']))

    def test_drain_keeps_anti_affine_servers_apart(self):
        group = self._group('anti-affinity')
        a, b = (self._boot_in(group, 'dr%d' % i) for i in range(2))
        host_a, host_b = self._host(a['id']), self._host(b['id'])
        free = (set(self.stack.compute_hosts()) - {host_a, host_b}).pop()
        drain = self.admin.post('/os-host-drains', {
            'host': host_a, 'mode': 'live'}, expect=202).json()['host_drain']
        self.addCleanup(self.admin.put, '/os-services/%s' % self._service(
            host_a), {'status': 'enabled'}, version='2.53')
        self.admin.wait_for(lambda: self.admin.get(
            '/os-host-drains/%s' % drain['id'], expect=200).json()[
                'host_drain']['status'] == 'completed', timeout=120,
            what='drain completed')
        self.admin.wait_for_status(a['id'], 'ACTIVE')
        self.assertEqual(free, self._host(a['id']))
        self.assertEqual(host_b, self._host(b['id']))

    def _service(self, host):
        return [s for s in self.admin.services(version='2.53')
                if s['host'] == host and 'compute' in s['binary']][0]['id']

    def test_affinity_keeps_members_together(self):
        group = self._group('affinity')
        a = self._boot_in(group, 'af0')
        b = self._boot_in(group, 'af1')
        self.assertEqual(self._host(a['id']), self._host(b['id']))
        # Moving one member alone would split the group: no valid host.
        self.admin.action(a['id'], {'migrate': None}, expect=202)
        self.admin.wait_for(lambda: any(
            m['status'] == 'error' for m in self.admin.migrations(
                instance_uuid=a['id'])), what='migration error')
        self.admin.wait_for_status(a['id'], 'ACTIVE')
        self.assertEqual(self._host(b['id']), self._host(a['id']))

    def test_soft_anti_affinity_spreads_but_never_fails(self):
        group = self._group('soft-anti-affinity')
        servers = [self._boot_in(group, 'sa%d' % i) for i in range(4)]
        self.assertEqual(['ACTIVE'] * 4, [s['status'] for s in servers])
        hosts = [self._host(s['id']) for s in servers]
        self.assertEqual(3, len(set(hosts[:3])), hosts)

    def test_max_server_per_host_rule(self):
        group = self._group('anti-affinity', {'max_server_per_host': 2})
        servers = [self._boot_in(group, 'mx%d' % i) for i in range(6)]
        self.assertEqual(['ACTIVE'] * 6, [s['status'] for s in servers])
        hosts = [self._host(s['id']) for s in servers]
        self.assertEqual(2, max(hosts.count(h) for h in set(hosts)), hosts)
        self.assertEqual('ERROR', self._boot_in(group, 'mx6')['status'])
