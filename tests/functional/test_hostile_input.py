"""Hostile input against the real API on SQLite, PostgreSQL and MySQL:
every case the issue lists is a 4xx with Nova's fault body. The bounded
property-based fuzz over every route is in test_hostile_fuzz.
"""
import json
import socket
import urllib.parse

from tests.functional import hostile_base

HUGE = hostile_base.HUGE
DEEP = '[' * 100000 + ']' * 100000


class _IssueCases:
    """Mixed into a database's HostileInputTestCase below."""

    # -- the issue's list, one by one ---------------------------------
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

    def test_text_columns_hold_the_same_on_every_database(self):
        """A description of 4-byte characters past 65535 bytes was a 500
        on MySQL, a server of a flavor with a long description a 400 on
        MySQL only, the audit log before year 1's first period a 500."""
        data = json.dumps({'flavor': {
            'name': 'emoji', 'vcpus': 1, 'ram': 64, 'disk': 1,
            'description': '\U0001F600' * 16384}},
            ensure_ascii=False).encode('utf-8')
        self.assertIn('65535 bytes', self.assertFault(
            self.admin_raw('POST', '/flavors', data=data)))
        client = self.stack.client()
        flavor = client.post('/flavors', {'flavor': {
            'name': 'long-description', 'vcpus': 1, 'ram': 64, 'disk': 1,
            'description': 'x' * 65535}}, version='2.55',
            expect=200).json()['flavor']
        server = client.boot('long-description', flavor['id'])
        self.assertEqual('ACTIVE', server['status'])
        client.delete('/servers/%s' % server['id'], expect=204)
        self.assertIn('no audit period', self.assertFault(self.admin_raw(
            'GET', '/os-instance_usage_audit_log/0001-01-31%2000:00:00')))

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

    # -- bodies refused field by field ---------------------------------
    def test_lifecycle_action_bodies_are_400(self):
        # Its own server: the class's one is shared by the other tests.
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
                                       'rules': {
                                           'max_server_per_host': 'x'}}}),
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


class SQLiteHostileInputTest(_IssueCases, hostile_base.HostileInputTestCase):
    pass


class PostgreSQLHostileInputTest(_IssueCases,
                                 hostile_base.HostileInputTestCase,
                                 hostile_base.OnPostgreSQL):
    pass


class MySQLHostileInputTest(_IssueCases, hostile_base.HostileInputTestCase,
                            hostile_base.OnMySQL):
    pass
