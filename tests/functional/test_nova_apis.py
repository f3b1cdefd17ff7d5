"""Nova's own compute APIs of issue 40 on real processes (nova-moves-api
under gunicorn, a conductor running the usage audit, two computes):
what a client sees of a real server through /ips, os-hosts, the usage
report, the audit log the conductor writes, the server password and
external events."""
import json
import os
import time
import urllib.parse
import uuid

import jsonschema

from nova_moves.api import openapi
from tests.functional import api_server_base

DOCUMENT = os.path.join(os.path.dirname(__file__), '..', '..', 'doc',
                        'api-ref', 'openapi.json')


class NovaComputeAPIsTest(api_server_base.APIServerTestCase):

    EXTRA_CONF = dict(api_server_base.APIServerTestCase.EXTRA_CONF)
    EXTRA_CONF['DEFAULT'] = dict(EXTRA_CONF['DEFAULT'],
                                 instance_usage_audit='true',
                                 instance_usage_audit_period='hour')

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.server = cls.admin.boot('usage-vm', cls._flavor_id())

    @classmethod
    def _flavor_id(cls):
        return cls.admin.create_flavor('nova-apis', vcpus=2, ram=1024,
                                       disk=3)['id']

    def test_server_addresses_and_password(self):
        sid = self.server['id']
        self.assertEqual({'addresses': {}}, self.admin.get(
            '/servers/%s/ips' % sid, expect=200).json())
        missing = self.admin.get('/servers/%s/ips/private' % sid)
        self.assertEqual(404, missing.status_code)
        self.assertEqual(404, self.admin.get('/servers/%s/ips' % uuid.uuid4())
                         .status_code)
        path = '/servers/%s/os-server-password' % sid
        self.assertEqual({'password': ''},
                         self.admin.get(path, expect=200).json())
        self.admin.delete(path, expect=204)

    def test_hosts_show_the_servers_host(self):
        hosts = self.admin.get('/os-hosts', expect=200).json()['hosts']
        services = {(h['host_name'], h['service']) for h in hosts}
        for host in self.stack.compute_hosts():
            self.assertIn((host, 'compute'), services)
        self.assertIn('conductor', {h['service'] for h in hosts})
        host = self.server['OS-EXT-SRV-ATTR:host']
        resources = {r['resource']['project']: r['resource'] for r in
                     self.admin.get('/os-hosts/' + host, expect=200)
                     .json()['host']}
        self.assertEqual(2, resources['(used_now)']['cpu'])
        self.assertEqual(2, resources['(used_max)']['cpu'])
        self.assertEqual(1024, resources['admin']['memory_mb'])
        self.assertEqual(404, self.admin.get('/os-hosts/' + host,
                                             version='2.43').status_code)
        self.assertEqual(501, self.admin.get(
            '/os-hosts/%s/reboot' % host).status_code)

    def test_usage_of_the_running_server(self):
        body = self.admin.get(
            '/os-simple-tenant-usage?detailed=1&start=2020-01-01T00:00:00',
            version='2.40', expect=200).json()
        usage = {u['tenant_id']: u for u in body['tenant_usages']}['admin']
        mine = [s for s in usage['server_usages']
                if s['instance_id'] == self.server['id']][0]
        self.assertEqual(('nova-apis', 2, 1024, 3, 'active'),
                         (mine['flavor'], mine['vcpus'], mine['memory_mb'],
                          mine['local_gb'], mine['state']))
        self.assertGreater(mine['hours'], 0)
        self.assertGreater(usage['total_vcpus_usage'], 0)
        own = self.admin.as_user('olga:proj-o').get(
            '/os-simple-tenant-usage/proj-o', expect=200).json()
        self.assertEqual({'tenant_usage': {}}, own)

    def test_the_conductor_audits_every_compute(self):
        deadline = time.monotonic() + 60
        while True:
            report = self.admin.get('/os-instance_usage_audit_log',
                                    expect=200).json()[
                'instance_usage_audit_logs']
            if report['overall_status'].startswith('ALL') or \
                    time.monotonic() > deadline:
                break
            time.sleep(1)
        self.assertEqual('ALL hosts done. 0 errors.',
                         report['overall_status'])
        self.assertEqual(sorted(self.stack.compute_hosts()),
                         sorted(report['log']))
        before = urllib.parse.quote(report['period_ending'])
        older = self.admin.get('/os-instance_usage_audit_log/' + before,
                               expect=200).json()['instance_usage_audit_log']
        self.assertEqual(report['period_beginning'],
                         older['period_ending'])
        self.assertEqual(400, self.admin.get(
            '/os-instance_usage_audit_log/invalid_time').status_code)

    def test_external_events(self):
        events = [{'name': 'network-changed',
                   'server_uuid': self.server['id']},
                  {'name': 'network-changed',
                   'server_uuid': str(uuid.uuid4())}]
        response = self.admin.post('/os-server-external-events',
                                   {'events': events})
        self.assertEqual(207, response.status_code, response.text)
        self.assertEqual([200, 404], [e['code'] for e in
                                      response.json()['events']])
        self.assertEqual(403, self.admin.as_user('olga:proj-o').post(
            '/os-server-external-events', {'events': events[:1]})
            .status_code)

    def test_extensions_and_console_of_a_missing_server(self):
        names = [e['name'] for e in self.admin.get(
            '/extensions', expect=200).json()['extensions']]
        self.assertIn('Hosts', names)
        self.assertEqual('os-consoles', self.admin.get(
            '/extensions/os-consoles', expect=200).json()['extension'][
            'alias'])
        response = self.admin.post('/servers/%s/action' % uuid.uuid4(),
                                   {'os-getConsoleOutput': {'length': 10}})
        self.assertEqual(404, response.status_code)

    def test_responses_match_the_document(self):
        with open(DOCUMENT) as f:
            document = json.load(f)
        sid, host = self.server['id'], self.server['OS-EXT-SRV-ATTR:host']
        gets = [('/servers/%s/ips' % sid, '/servers/{server_id}/ips'),
                ('/servers/%s/os-server-password' % sid,
                 '/servers/{server_id}/os-server-password'),
                ('/os-hosts', None), ('/os-hosts/' + host,
                                      '/os-hosts/{host_name}'),
                ('/os-simple-tenant-usage?detailed=1&limit=1'
                 '&start=2020-01-01T00:00:00', '/os-simple-tenant-usage'),
                ('/os-simple-tenant-usage/admin?start=2020-01-01T00:00:00',
                 '/os-simple-tenant-usage/{tenant_id}'),
                ('/os-simple-tenant-usage/nobody',
                 '/os-simple-tenant-usage/{tenant_id}'),
                ('/os-instance_usage_audit_log', None),
                ('/os-instance_usage_audit_log/2026-01-01%2000:00:00',
                 '/os-instance_usage_audit_log/{before_timestamp}'),
                ('/extensions', None)]
        failures = []
        for version in ('2.1', '2.40', '2.42'):
            for path, template in gets:
                response = self.admin.get(path, version=version)
                self.assertEqual(200, response.status_code, path)
                schema = openapi.response_schema(
                    document, '/v2.1' + (template or path), 'get', 200,
                    version)
                failures += ['%s %s: %s' % (version, path, e.message)
                             for e in jsonschema.Draft202012Validator(
                                 schema).iter_errors(response.json())]
        self.assertEqual([], failures)
