"""A bounded property-based fuzz (hypothesis) of the real API on SQLite,
PostgreSQL and MySQL: no route answers 5xx. The issue's listed cases,
one by one, are in test_hostile_input.

NOVA_MOVES_FUZZ_EXAMPLES (default 300) sets the fuzzed requests per
database; the count and the 5xx are attached to the test's details.
"""
import json
import os
import re
import urllib.parse

import hypothesis
from hypothesis import strategies as st
import testtools.content as content

from tests.functional import hostile_base

HUGE = hostile_base.HUGE
FUZZ_EXAMPLES = int(os.environ.get('NOVA_MOVES_FUZZ_EXAMPLES', '300'))


class _Fuzz:
    """Mixed into a database's HostileInputTestCase below."""

    def test_fuzz_held_states_no_5xx(self):
        """The actions a move meets, fuzzed against servers held PAUSED,
        locked and SHELVED_OFFLOADED (test_fuzz_no_5xx mostly meets an
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
            'injectNetworkInfo', 'addSecurityGroup', 'removeSecurityGroup',
            'rescue', 'unrescue'])
        values = st.recursive(
            st.one_of(st.none(), st.booleans(), st.integers(),
                      st.text(max_size=20), st.sampled_from([
                          'nova', 'default', 'fuzz', '', HUGE, group,
                          'compute1', 'nowhere', 'active', 'error'])),
            lambda inner: st.one_of(
                st.lists(inner, max_size=3),
                st.dictionaries(st.sampled_from([
                    'locked_reason', 'host', 'availability_zone', 'check',
                    'state', 'name', 'block_migration', 'force',
                    'rescue_image_ref', 'adminPass', 'x']),
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
            'removeSecurityGroup',
            # os-hosts updates, external events.
            'maintenance_mode', 'events', 'server_uuid', 'tag']),
            st.text(max_size=10))
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
                             'is_public', 'flavor', 'with_servers',
                             'start', 'end', 'detailed', 'zone']),
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
            ('POST', '/os-aggregates/{id}/action'),
            ('GET', '/os-keypairs'), ('POST', '/os-keypairs'),
            ('GET', '/os-keypairs/{id}'), ('DELETE', '/os-keypairs/{id}'),
            # Nova's own compute APIs of issue 40.
            ('GET', '/servers/{id}/ips'),
            ('GET', '/servers/%s/ips/{id}' % sid),
            ('GET', '/servers/{id}/os-server-password'),
            ('GET', '/os-hosts'), ('GET', '/os-hosts/{id}'),
            ('PUT', '/os-hosts/{id}'), ('GET', '/os-hosts/{id}/reboot'),
            ('GET', '/os-simple-tenant-usage'),
            ('GET', '/os-simple-tenant-usage/{id}'),
            ('GET', '/os-instance_usage_audit_log/{id}'),
            ('POST', '/os-server-external-events')])
        tokens = st.sampled_from(['admin:admin', 'alice:proj-a',
                                  'bob:proj-b'])
        versions = st.sampled_from(['2.1', '2.25', '2.53', '2.59', '2.80',
                                    '2.95', '2.100', 'latest'])
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


    def test_integer_query_parameters_no_5xx(self):
        """Every route's integer query parameters (api/query.py) at and
        past their range, and fuzzed: out of range is a 400 naming the
        parameter, nothing is a 5xx on this database."""
        from nova_moves.api import openapi
        from nova_moves.api import query
        routes = []
        for path, item in openapi.build()['paths'].items():
            names = [p['name'] for p in item.get('get', {}).get(
                'parameters', ()) if p.get('in') == 'query']
            if not path.startswith('/v2.1/'):
                continue
            path = re.sub(r'{[^{}]+}', self.server['id'], path[5:])
            routes += [(path, name) for name in names
                       if name in query.INTEGERS or name.startswith(
                           'changes-')]
        self.assertTrue(any(name == 'offset' for _p, name in routes))
        bad, sent = [], [0]

        def send(path, name, value, token='admin:admin'):
            response = self.raw('GET', path, params={name: value},
                                token=token)
            sent[0] += 1
            if response.status_code >= 500:
                bad.append('%s?%s=%s -> %s %s' % (
                    path, name, value[:40], response.status_code,
                    response.text[:200]))
            return response

        for path, name in routes:
            if name.startswith('changes-'):
                for value in ('0001-01-01T00:00:00', '9999-12-31T23:59:59',
                              '1000-01-01', '2026-02-30T00:00:00',
                              '9999-12-31T23:59:59-14:00'):
                    send(path, name, value)
                continue
            low, high = query.INTEGERS[name]
            for value in (low, high):
                for token in ('admin:admin', 'alice:proj-a'):
                    response = send(path, name, str(value), token)
                    self.assertNotEqual(400, response.status_code,
                                        response.text)
            for value in (str(high + 1), str(low - 1), '9' * 23,
                          '-' + '9' * 23, str(2 ** 63), 'x', '1.0'):
                for token in ('admin:admin', 'alice:proj-a'):
                    response = send(path, name, value, token)
                    if response.status_code in (403, 404):
                        continue  # not this caller's
                    self.assertIn('query parameters %s.' % name,
                                  self.assertFault(response, 400, 400))

        integer_routes = [r for r in routes if r[1] in query.INTEGERS]

        @hypothesis.settings(max_examples=max(FUZZ_EXAMPLES // 3, 30),
                             deadline=None, derandomize=True, database=None,
                             suppress_health_check=list(
                                 hypothesis.HealthCheck))
        @hypothesis.given(st.sampled_from(integer_routes),
                          st.integers(-2 ** 80, 2 ** 80))
        def one(route, number):
            send(route[0], route[1], str(number))

        one()
        print('integer fuzz %s: %d requests, %d 5xx' % (
            type(self).__name__, sent[0], len(bad)))
        self.assertEqual([], bad)

class SQLiteHostileFuzzTest(_Fuzz, hostile_base.HostileInputTestCase):
    pass


class PostgreSQLHostileFuzzTest(_Fuzz, hostile_base.HostileInputTestCase,
                                hostile_base.OnPostgreSQL):
    pass


class MySQLHostileFuzzTest(_Fuzz, hostile_base.HostileInputTestCase,
                           hostile_base.OnMySQL):
    pass
