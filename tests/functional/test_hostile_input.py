"""Hostile input against the real API on SQLite, PostgreSQL and MySQL:
every case the issue lists is a 4xx with Nova's fault body, and a bounded
property-based fuzz (hypothesis) over every route gets no 5xx at all.

NOVA_MOVES_FUZZ_EXAMPLES (default 300) sets the fuzzed requests per
database; the count and the 5xx are attached to the test's details.
"""
import json
import os
import socket
import urllib.parse

import hypothesis
from hypothesis import strategies as st
import requests
import testtools.content as content

from tests.functional import base
from tests.functional import test_databases

FUZZ_EXAMPLES = int(os.environ.get('NOVA_MOVES_FUZZ_EXAMPLES', '300'))

DEEP = '[' * 100000 + ']' * 100000
HUGE = '9' * 23


class _HostileInput(base.StackTestCase):

    COMPUTES = 1
    # Fuzzed actions may start moves that are still running at the end.
    CHECK_INVARIANTS = False

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.small = cls.stack.client().create_flavor('hostile-small')
        cls.server = cls.stack.client().boot('hostile', cls.small['id'])
        services = cls.stack.client().get('/os-services', version='2.53',
                                          expect=200).json()['services']
        cls.service_id = services[0]['id']

    def raw(self, method, path, data=None, params=None, token='alice:proj-a',
            headers=None, version='2.95'):
        all_headers = {'X-Auth-Token': token,
                       'OpenStack-API-Version': 'compute %s' % version,
                       'Content-Type': 'application/json'}
        all_headers.update(headers or {})
        url = self.stack.endpoint + path
        return requests.request(method, url, data=data, params=params,
                                headers=all_headers, timeout=60)

    def admin_raw(self, *args, **kw):
        return self.raw(*args, token='admin:admin', **kw)

    def assertFault(self, response, low=400, high=499, echo=None):
        self.assertTrue(low <= response.status_code <= high,
                        '%s %s -> %s %s' % (
                            response.request.method,
                            response.request.url[:200],
                            response.status_code, response.text[:300]))
        body = response.json()
        fault = list(body.values())[0]
        self.assertEqual(response.status_code, fault['code'])
        if echo:
            self.assertNotIn(echo, fault['message'])
        return fault['message']

    # -- the list, one by one ---------------------------------
    def test_deep_json_is_400(self):
        server = '/servers/%s/action' % self.server['id']
        for path in ('/servers', '/flavors', server, '/os-services/x'):
            method = 'PUT' if 'os-services' in path else 'POST'
            self.assertFault(self.admin_raw(method, path, data=DEEP[:60000]
                                            + DEEP[-60000:]))
        message = self.assertFault(self.admin_raw(
            'POST', server, data='{"a":' * 5000 + '1' + '}' * 5000))
        self.assertIn('nested too deeply', message)

    def test_lone_surrogate_and_nul_in_strings_are_400(self):
        sid = self.server['id']
        for bad in ('"\\ud800"', '"a\\u0000b"'):
            cases = [
                ('POST', '/servers/%s/action' % sid,
                 '{"resize": {"flavorRef": %s}}' % bad),
                ('POST', '/servers', '{"server": {"name": %s, "flavorRef": '
                 '"%s", "imageRef": "fake", "networks": "none"}}'
                 % (bad, self.small['id'])),
                ('POST', '/servers', '{"server": {"name": "x", "flavorRef": '
                 '"%s", "imageRef": "fake", "networks": "none", '
                 '"availability_zone": %s}}' % (self.small['id'], bad)),
                ('POST', '/flavors', '{"flavor": {"name": %s, "ram": 1, '
                 '"vcpus": 1, "disk": 1}}' % bad),
                ('PUT', '/os-services/%s' % self.service_id,
                 '{"status": "disabled", "disabled_reason": %s}' % bad),
            ]
            for method, path, data in cases:
                self.assertFault(self.admin_raw(method, path, data=data))

    def test_nul_in_path_and_query_is_400(self):
        self.assertFault(self.raw('GET', '/servers/abc%00def'))
        self.assertFault(self.raw('GET', '/servers', params={
            'marker': 'a\x00b'}))
        self.assertFault(self.raw('GET', '/servers/detail', params={
            'name': '\x00'}))
        self.assertFault(self.admin_raw('GET', '/os-migrations', params={
            'instance_uuid': 'x\x00'}))

    def test_ids_out_of_range_or_unicode_digits_are_404(self):
        sid = self.server['id']
        for path in ('/os-hypervisors/' + HUGE, '/os-hypervisors/%C2%B2',
                     '/os-hypervisors/99999999999',
                     '/servers/%s/migrations/%%C2%%B2' % sid,
                     '/servers/%s/migrations/%s' % (sid, HUGE)):
            self.assertFault(self.admin_raw('GET', path), 404, 404)
        self.assertFault(self.admin_raw('DELETE', '/os-services/' + HUGE),
                         404, 404)
        self.assertFault(self.admin_raw('DELETE', '/os-services/%D9%A3'),
                         404, 404)
        # One parser for every numeric path id: ASCII digits within the
        # Integer column, else no such row (PostgreSQL answered 500).
        for ident in (HUGE, '2147483648', '%C2%B2', '%D9%A3', '-1', '0x10'):
            for method, path in (
                    ('GET', '/os-host-drains/' + ident),
                    ('DELETE', '/os-host-drains/' + ident),
                    ('GET', '/os-hypervisors/' + ident),
                    ('DELETE', '/os-services/' + ident),
                    ('GET', '/servers/%s/migrations/%s' % (sid, ident))):
                self.assertFault(self.admin_raw(method, path), 404, 404)

    def test_request_values_echoed_only_as_a_short_prefix(self):
        sid = self.server['id']
        big = 'f' * 100000
        for method, path, body in (
                ('POST', '/servers/%s/action' % sid,
                 {'resize': {'flavorRef': big}}),
                ('POST', '/servers', {'server': {
                    'name': 'x', 'flavorRef': big, 'imageRef': 'fake',
                    'networks': 'none'}}),
                ('GET', '/servers/' + 'f' * 3000, None),
                ('GET', '/flavors/' + 'f' * 3000, None),
                ('GET', '/os-host-drains/' + 'f' * 3000, None),
                ('GET', '/servers?marker=' + 'f' * 3000, None)):
            response = self.admin_raw(method, path, data=json.dumps(body)
                                      if body else None)
            message = self.assertFault(response)
            self.assertNotIn('f' * 65, message)
            self.assertLess(len(response.content), 400)

    def test_control_characters_never_reach_the_log_raw(self):
        marker = 'FORGED-%s' % type(self).__name__
        paths = ['/servers/x%%0A%s%%20INFO%%20forged' % marker,
                 '/servers/x%%0D%%0A%s-crlf' % marker,
                 '/servers/x%%1B%%5B31m%s-esc' % marker,
                 '/servers/x%%00%s-nul' % marker,
                 '/servers/x%%C2%%85%s-nel' % marker]
        for path in paths:
            self.assertFault(self.raw('GET', path))
        self.assertEqual(200, self.raw('GET', '/servers', params={
            'name': 'a\n%s-query' % marker}).status_code)
        self.assertFault(self.raw('GET', '/servers',
                                  token='u\x85:%s-token' % marker), 401, 401)
        api_log = self.stack.log('api')
        lines = [line for line in api_log.splitlines() if marker in line]
        self.assertGreaterEqual(len(lines), len(paths) + 1, api_log[-3000:])
        for line in lines:
            # Every such line is a whole, prefixed log line...
            self.assertFalse(line.startswith(marker), line)
            self.assertRegex(line, r'^\d{4}-\d\d-\d\d ', line)
            # ...holding no raw control character.
            self.assertNotRegex(line, '[\x00-\x1f\x7f-\x9f]', repr(line))
        self.assertIn('\\x0a' + marker, api_log)

    def test_long_user_or_project_is_401(self):
        self.assertFault(self.raw('GET', '/servers',
                                  token='u' * 8000 + ':p'), 401, 401)
        self.assertFault(self.raw('GET', '/servers',
                                  token='u:' + 'p' * 256), 401, 401)

    def test_flavor_numbers(self):
        for field, value in (('swap', '"abc"'), ('ram', str(10 ** 29)),
                             ('rxtx_factor', 'NaN'),
                             ('rxtx_factor', '"inf"'),
                             ('rxtx_factor', 'Infinity'),
                             ('ram', '"%s"' % HUGE), ('vcpus', '-1'),
                             ('disk', '1e400')):
            body = {'name': 'f-%s' % field, 'ram': 1, 'vcpus': 1, 'disk': 1}
            data = json.dumps({'flavor': body})[:-2] + ', "%s": %s}}' % (
                field, value)
            message = self.assertFault(self.admin_raw('POST', '/flavors',
                                                      data=data))
            if value in ('NaN', 'Infinity', '1e400'):
                self.assertIn('JSON number', message)
            else:
                self.assertIn(field, message)
        response = self.admin_raw('GET', '/flavors/detail')
        self.assertEqual(200, response.status_code)
        self.assertNotIn('Infinity', response.text)
        self.assertNotIn('NaN', response.text)

    def test_malformed_chunked_body_is_400(self):
        url = urllib.parse.urlparse(self.stack.endpoint)
        request = ('POST /v2.1/servers/%s/action HTTP/1.1\r\n'
                   'Host: %s\r\nX-Auth-Token: admin:admin\r\n'
                   'Content-Type: application/json\r\n'
                   'Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n'
                   'zz\r\n{"migrate": null}\r\n0\r\n\r\n'
                   % (self.server['id'], url.netloc))
        with socket.create_connection((url.hostname, url.port),
                                      timeout=30) as sock:
            sock.sendall(request.encode())
            reply = b''
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                reply += chunk
        status = int(reply.split(b' ', 2)[1])
        self.assertTrue(400 <= status < 500, reply[:300])

    def test_big_body_is_413_and_never_echoed(self):
        blob = 'A' * (200 * 1024)
        response = self.admin_raw('POST', '/flavors', data=json.dumps(
            {'flavor': {'name': blob}}))
        self.assertFault(response, 413, 413, echo='AAAA')
        # Under the limit: a 400 that names the field, without the value.
        blob = 'B' * (100 * 1024)
        response = self.admin_raw('POST', '/flavors', data=json.dumps(
            {'flavor': {'name': blob, 'ram': 1, 'vcpus': 1, 'disk': 1}}))
        message = self.assertFault(response, echo='B' * 100)
        self.assertIn('name', message)

    # -- property-based -------------------------------------------------
    def test_lifecycle_action_bodies_are_400(self):
        # Its own server: the fuzz may have deleted the class's.
        sid = self.stack.client().boot('hostile-life', self.small['id'])['id']
        bad = [{'pause': {'x': 1}}, {'pause': []}, {'unpause': 'x'},
               {'suspend': 7}, {'resume': {'': None}}, {'reboot': None},
               {'reboot': {}}, {'reboot': {'type': 'WARM'}},
               {'reboot': {'type': ['HARD']}},
               {'reboot': {'type': 'HARD', 'force': True}},
               {'rebuild': None}, {'rebuild': {}},
               {'rebuild': {'imageRef': None}},
               {'rebuild': {'imageRef': 'x' * 300}},
               {'rebuild': {'imageRef': 'i', 'name': ' x'}},
               {'rebuild': {'imageRef': 'i', 'name': '\ud800'}},
               {'rebuild': {'imageRef': 'i', 'metadata': {'k': 1}}},
               {'rebuild': {'imageRef': 'i', 'hostname': '-'}},
               {'lock': {'locked_reason': ''}},
               {'lock': {'locked_reason': 'r' * 256}}, {'lock': 'x'},
               {'unlock': {'x': 1}}, {'os-resetState': None},
               {'os-resetState': {'state': 'paused'}},
               {'os-resetState': {'state': 'active', 'x': 1}},
               {'shelve': 1}, {'shelveOffload': {'x': None}},
               {'unshelve': {}}, {'unshelve': {'host': ''}},
               {'unshelve': {'host': 'nowhere'}},
               {'unshelve': {'availability_zone': 5}},
               {'unshelve': {'host': 'h', 'x': 1}}]
        for body in bad:
            data = json.dumps(body).encode('utf-8', 'surrogatepass')
            self.assertFault(self.admin_raw(
                'POST', '/servers/%s/action' % sid, data=data), 400, 400)
        self.assertIsNone(self.stack.client().server(sid, version='2.47')[
            'OS-EXT-STS:task_state'])

    def test_server_group_bodies_are_400(self):
        """Bad os-server-groups bodies, at the microversion each field
        belongs to: a 400, and no group is made."""
        before = self.admin_raw('GET', '/os-server-groups', params={
            'all_projects': 'True'}).json()['server_groups']
        aa = 'anti-affinity'
        cases = [
            ('2.1', None), ('2.1', {}), ('2.1', {'server_group': None}),
            ('2.1', {'server_group': {'name': 'g'}}),
            ('2.1', {'server_group': {'name': 'g', 'policies': []}}),
            ('2.1', {'server_group': {'name': 'g',
                                      'policies': ['soft-affinity']}}),
            ('2.15', {'server_group': {'name': 'g',
                                       'policies': ['affinity', aa]}}),
            ('2.15', {'server_group': {'name': 'g', 'policies': ['x']}}),
            ('2.15', {'server_group': {'name': 'g', 'policies': aa}}),
            ('2.15', {'server_group': {'name': '', 'policies': [aa]}}),
            ('2.15', {'server_group': {'name': 'g' * 256,
                                       'policies': [aa]}}),
            ('2.15', {'server_group': {'name': 'g', 'policies': [aa],
                                       'x': 1}}),
            ('2.64', {'server_group': {'name': 'g', 'policies': [aa]}}),
            ('2.64', {'server_group': {'name': 'g', 'policy': [aa]}}),
            ('2.64', {'server_group': {'name': 'g', 'policy': 'affinity',
                                       'rules': {'max_server_per_host': 2}}}),
            ('2.64', {'server_group': {'name': 'g', 'policy': aa,
                                       'rules': {'max_server_per_host': 0}}}),
            ('2.64', {'server_group': {'name': 'g', 'policy': aa,
                                       'rules': {'max_server_per_host': 'x'}}}),
            ('2.64', {'server_group': {'name': 'g', 'policy': aa,
                                       'rules': {'other': 1}}}),
            ('2.64', {'server_group': {'name': '\ud800', 'policy': aa}}),
        ]
        for version, body in cases:
            data = json.dumps(body).encode('utf-8', 'surrogatepass')
            self.assertFault(self.raw('POST', '/os-server-groups', data=data,
                                      version=version), 400, 400)
        # A boot naming no group, or another project's, is refused too.
        for group in ('not-a-uuid', '8f3c6a2e-0000-4000-8000-000000000000'):
            self.assertFault(self.raw('POST', '/servers', data=json.dumps({
                'server': {'name': 'g', 'flavorRef': self.small['id'],
                           'imageRef': 'fake', 'networks': 'none'},
                'os:scheduler_hints': {'group': group}}), version='2.37'))
        after = self.admin_raw('GET', '/os-server-groups', params={
            'all_projects': 'True'}).json()['server_groups']
        self.assertEqual(before, after)

    def test_fuzz_held_states_no_5xx(self):
        """The actions a move meets, fuzzed against servers held PAUSED,
        locked and SHELVED_OFFLOADED (the fuzz above mostly meets an
        ACTIVE server): no 5xx, and no claim left behind."""
        client = self.stack.client()
        paused, locked, shelved = (
            client.boot('hostile-%s' % n, self.small['id'])['id']
            for n in ('paused', 'locked', 'shelved'))
        client.action(paused, {'pause': None}, expect=202)
        client.action(locked, {'lock': {'locked_reason': 'fuzz'}},
                      version='2.73', expect=202)
        client.action(shelved, {'shelve': None}, expect=202)
        client.wait_for_status(paused, 'PAUSED', timeout=30)
        client.wait_for_status(shelved, 'SHELVED_OFFLOADED', timeout=30)
        group = client.post('/os-server-groups', {'server_group': {
            'name': 'hostile-aa', 'policy': 'anti-affinity'}},
            version='2.64', expect=200).json()['server_group']['id']
        names = st.sampled_from([
            'pause', 'unpause', 'lock', 'unlock', 'unshelve', 'shelve',
            'shelveOffload', 'os-resetState', 'migrate', 'os-migrateLive',
            'injectNetworkInfo', 'addSecurityGroup', 'removeSecurityGroup'])
        values = st.recursive(
            st.one_of(st.none(), st.booleans(), st.integers(),
                      st.text(max_size=20), st.sampled_from([
                          'nova', 'default', 'fuzz', '', HUGE, group,
                          'compute1', 'nowhere', 'active', 'error'])),
            lambda inner: st.one_of(
                st.lists(inner, max_size=3),
                st.dictionaries(st.sampled_from([
                    'locked_reason', 'host', 'availability_zone', 'check',
                    'state', 'name', 'block_migration', 'force', 'x']),
                    inner, max_size=3)), max_leaves=6)
        servers = st.sampled_from([paused, locked, shelved])
        tokens = st.sampled_from(['admin:admin', 'alice:proj-a'])
        versions = st.sampled_from(['2.1', '2.64', '2.73', '2.77', '2.91',
                                    'latest'])
        bad = []

        @hypothesis.settings(max_examples=max(FUZZ_EXAMPLES // 5, 20),
                             deadline=None, derandomize=True, database=None,
                             suppress_health_check=list(
                                 hypothesis.HealthCheck))
        @hypothesis.given(servers, names, values, tokens, versions)
        def one(server, name, value, token, version):
            data = json.dumps({name: value}).encode('utf-8',
                                                    'surrogatepass')
            response = self.raw('POST', '/servers/%s/action' % server,
                                data=data, token=token, version=version)
            if response.status_code >= 500:
                bad.append('%s %r -> %s %s' % (server, data[:200],
                                               response.status_code,
                                               response.text[:200]))

        one()
        self.assertEqual([], bad)
        for sid in (paused, locked, shelved):
            client.wait_for(lambda: client.server(sid, version='2.47')[
                'OS-EXT-STS:task_state'] is None, timeout=60,
                what='%s settled' % sid)

    def test_fuzz_no_5xx(self):
        sid = self.server['id']
        ids = st.one_of(st.sampled_from([sid, self.small['id'],
                                         str(self.service_id), '1', '0',
                                         HUGE, '-1', '²', '٣', 'detail']),
                        st.text(max_size=40))
        scalars = st.one_of(
            st.none(), st.booleans(), st.integers(),
            st.integers(min_value=-2 ** 80, max_value=2 ** 80),
            st.floats(allow_nan=False, allow_infinity=False),
            st.text(max_size=30),
            st.sampled_from(['\ud800', '\x00', 'a' * 300, '', ' ', 'nova',
                             'nova:%s' % self.server.get(
                                 'OS-EXT-SRV-ATTR:host', 'h'), 'auto',
                             'none', self.small['id'], 'fake', 'HARD',
                             'soft', 'active', 'error', 'paused']))
        keys = st.one_of(st.sampled_from([
            'server', 'flavor', 'name', 'flavorRef', 'imageRef', 'networks',
            'availability_zone', 'host', 'block_migration', 'force',
            'resize', 'migrate', 'os-migrateLive', 'evacuate',
            'confirmResize', 'revertResize', 'status', 'disabled_reason',
            'forced_down', 'ram', 'vcpus', 'disk', 'swap', 'rxtx_factor',
            'id', 'description', 'quota_set', 'instances', 'cores',
            'adminPass', 'onSharedStorage', 'server_group', 'policy',
            'policies', 'rules', 'max_server_per_host', 'os:scheduler_hints',
            'group',
            # The lifecycle actions and their fields.
            'pause', 'unpause', 'suspend', 'resume', 'reboot', 'type',
            'rebuild', 'lock', 'unlock', 'locked_reason', 'os-resetState',
            'state', 'preserve_ephemeral', 'metadata', 'personality',
            'user_data', 'hostname', 'shelve', 'shelveOffload',
            'unshelve',
            # Server metadata and update, quota classes.
            'meta', 'accessIPv4', 'accessIPv6', 'OS-DCF:diskConfig',
            'quota_class_set', 'metadata_items',
            # Networking actions.
            'injectNetworkInfo', 'addSecurityGroup',
            'removeSecurityGroup']), st.text(max_size=10))
        bodies = st.recursive(
            scalars, lambda inner: st.one_of(
                st.lists(inner, max_size=4),
                st.dictionaries(keys, inner, max_size=4)), max_leaves=12)
        query = st.dictionaries(
            st.sampled_from(['limit', 'marker', 'name', 'status', 'host',
                             'changes-since', 'changes-before', 'sort_key',
                             'all_tenants', 'instance_uuid', 'user_id',
                             'project_id', 'hypervisor_hostname_pattern',
                             'binary', 'migration_type', 'all_projects',
                             'offset', 'sort_dir', 'minRam', 'minDisk',
                             'is_public', 'flavor', 'with_servers']),
            st.one_of(st.text(max_size=20),
                      st.sampled_from(['0', '-1', HUGE, '1.5', '²', 'nan',
                                       sid, '2026-13-01', 'x' * 300])),
            max_size=3)
        routes = st.sampled_from([
            ('GET', '/servers'), ('GET', '/servers/detail'),
            ('POST', '/servers'), ('GET', '/servers/{id}'),
            ('DELETE', '/servers/{id}'), ('POST', '/servers/%s/action' % sid),
            ('POST', '/servers/{id}/action'),
            ('GET', '/servers/{id}/os-instance-actions'),
            ('GET', '/servers/%s/os-instance-actions/{id}' % sid),
            ('GET', '/servers/%s/migrations' % sid),
            ('GET', '/servers/%s/migrations/{id}' % sid),
            ('POST', '/servers/%s/migrations/{id}/action' % sid),
            ('DELETE', '/servers/%s/migrations/{id}' % sid),
            ('GET', '/flavors'), ('GET', '/flavors/detail'),
            ('POST', '/flavors'), ('GET', '/flavors/{id}'),
            ('GET', '/flavors/{id}/os-extra_specs'),
            ('GET', '/os-services'), ('PUT', '/os-services/{id}'),
            ('PUT', '/os-services/disable'), ('DELETE', '/os-services/{id}'),
            ('GET', '/os-hypervisors'), ('GET', '/os-hypervisors/detail'),
            ('GET', '/os-hypervisors/{id}'),
            ('GET', '/os-hypervisors/{id}/uptime'),
            ('GET', '/os-migrations'), ('GET', '/limits'),
            ('GET', '/os-quota-sets/{id}'), ('PUT', '/os-quota-sets/{id}'),
            ('GET', '/os-availability-zone/detail'), ('GET', '/images'),
            ('GET', '/images/{id}'),
            ('GET', '/os-server-groups'), ('POST', '/os-server-groups'),
            ('GET', '/os-server-groups/{id}'),
            ('DELETE', '/os-server-groups/{id}'),
            ('PUT', '/servers/{id}'), ('GET', '/servers/%s/metadata' % sid),
            ('POST', '/servers/%s/metadata' % sid),
            ('PUT', '/servers/%s/metadata' % sid),
            ('GET', '/servers/%s/metadata/{id}' % sid),
            ('PUT', '/servers/%s/metadata/{id}' % sid),
            ('DELETE', '/servers/%s/metadata/{id}' % sid),
            ('GET', '/os-quota-class-sets/{id}'),
            ('PUT', '/os-quota-class-sets/{id}'),
            ('GET', '/os-hypervisors/{id}/search'),
            ('GET', '/os-hypervisors/{id}/servers'),
            ('GET', '/os-aggregates'), ('POST', '/os-aggregates'),
            ('GET', '/os-aggregates/{id}'), ('PUT', '/os-aggregates/{id}'),
            ('DELETE', '/os-aggregates/{id}'),
            ('POST', '/os-aggregates/{id}/action')])
        tokens = st.sampled_from(['admin:admin', 'alice:proj-a',
                                  'bob:proj-b'])
        versions = st.sampled_from(['2.1', '2.25', '2.53', '2.59', '2.80',
                                    '2.95', 'latest'])
        seen = {'requests': 0, '5xx': []}

        @hypothesis.settings(max_examples=FUZZ_EXAMPLES, deadline=None,
                             derandomize=True, database=None,
                             suppress_health_check=list(
                                 hypothesis.HealthCheck))
        @hypothesis.given(routes, ids, query, bodies, tokens, versions)
        def one(route, ident, params, body, token, version):
            method, path = route
            path = path.replace('{id}', urllib.parse.quote(ident, safe='')
                                or 'x')
            data = None
            if method in ('POST', 'PUT'):
                data = json.dumps(body).encode('utf-8', 'surrogatepass')
            response = self.raw(method, path, data=data, params=params or
                                None, token=token, version=version)
            seen['requests'] += 1
            if response.status_code >= 500:
                seen['5xx'].append('%s %s %r -> %s %s' % (
                    method, path, data[:200] if data else params,
                    response.status_code, response.text[:200]))

        one()
        self.addDetail('fuzz', content.text_content(
            '%d fuzzed requests, %d 5xx' % (seen['requests'],
                                            len(seen['5xx']))))
        print('fuzz %s: %d requests, %d 5xx' % (
            type(self).__name__, seen['requests'], len(seen['5xx'])))
        self.assertGreaterEqual(seen['requests'], min(FUZZ_EXAMPLES, 50))
        self.assertEqual([], seen['5xx'])


class SQLiteHostileInputTest(_HostileInput):
    pass


class PostgreSQLHostileInputTest(_HostileInput,
                                 test_databases.FreshDatabase):
    ADMIN_URL = test_databases.PG_ADMIN_URL
    URL_FORMAT = test_databases.PG_URL_FORMAT


class MySQLHostileInputTest(_HostileInput, test_databases.FreshDatabase):
    ADMIN_URL = test_databases.MYSQL_ADMIN_URL
    URL_FORMAT = test_databases.MYSQL_URL_FORMAT


def load_tests(loader, tests, pattern):
    suite = loader.suiteClass()
    for cls in (SQLiteHostileInputTest, PostgreSQLHostileInputTest,
                MySQLHostileInputTest):
        suite.addTests(loader.loadTestsFromTestCase(cls))
    return suite
