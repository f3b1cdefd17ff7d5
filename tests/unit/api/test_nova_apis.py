"""Nova's own compute APIs of issue 40 through the WSGI app on a real
(SQLite) database: server addresses, os-hosts, os-simple-tenant-usage,
os-instance_usage_audit_log (with the conductors' audit that writes
it), os-server-password, os-server-external-events, Nova's frozen
/extensions and os-getConsoleOutput of a missing server."""
import datetime
import urllib.parse
import uuid

from oslo_utils import timeutils
import testtools

from nova_moves import audit_period
from nova_moves.api import extension_list
from nova_moves.api import server_password
from nova_moves.api import tenant_usage
from nova_moves.conductor import usage_audit
from nova_moves import conf
from nova_moves.db import api as db_api
from tests.unit import fixtures as nm_fixtures

ADMIN = {'X-Auth-Token': 'admin:admin'}
OWNER = {'X-Auth-Token': 'alice:p1'}
OTHER = {'X-Auth-Token': 'bob:p2'}
NOW = datetime.datetime(2026, 3, 10, 12, 0, 0)


def _at(version):
    return {'OpenStack-API-Version': 'compute %s' % version}


class _Base(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.client = nm_fixtures.app_client(self, 'h1', 'h2')
        self.flavor = nm_fixtures.flavor(vcpus=2, memory_mb=1024,
                                         root_gb=10)

    def server(self, host='h1', project='p1', **values):
        return db_api.instance_create(dict({
            'display_name': 'vm', 'user_id': 'alice', 'project_id': project,
            'vm_state': 'active', 'host': host, 'node': host,
            'power_state': 1, 'flavor': self.flavor, 'image_ref': 'img'},
            **values))

    def get(self, path, headers=ADMIN, version='2.1'):
        return self.client.get('/v2.1' + path,
                               headers=dict(headers, **_at(version)))


class AddressesTest(_Base):

    def test_ips_are_the_servers_addresses(self):
        server = self.server()
        response = self.get('/servers/%s/ips' % server['uuid'], OWNER)
        self.assertEqual(200, response.status_code)
        shown = self.get('/servers/%s' % server['uuid'], OWNER).get_json()
        self.assertEqual({'addresses': shown['server']['addresses']},
                         response.get_json())

    def test_unknown_network_and_server_are_404(self):
        server = self.server()
        response = self.get('/servers/%s/ips/private' % server['uuid'],
                            OWNER)
        self.assertEqual(404, response.status_code)
        self.assertIn('not a member of specified network',
                      response.get_data(as_text=True))
        self.assertEqual(404, self.get('/servers/999/ips').status_code)
        # Another project's server is not there for them.
        self.assertEqual(404, self.get('/servers/%s/ips' % server['uuid'],
                                       OTHER).status_code)


class HostsTest(_Base):

    def test_index_lists_enabled_services_with_zone_filter(self):
        db_api.service_report('c1', 'nova-moves-conductor', 'conductor')
        hosts = self.get('/os-hosts').get_json()['hosts']
        self.assertIn({'host_name': 'h1', 'service': 'compute',
                       'zone': 'nova'}, hosts)
        self.assertIn({'host_name': 'c1', 'service': 'conductor',
                       'zone': 'internal'}, hosts)
        only = self.get('/os-hosts?zone=internal').get_json()['hosts']
        self.assertEqual(['c1'], [h['host_name'] for h in only])
        self.assertEqual([], self.get('/os-hosts?zone=xxx').get_json()[
            'hosts'])
        self.assertEqual(len(hosts), len(self.get('/os-hosts?zone=')
                                         .get_json()['hosts']))
        service = db_api.service_get_all(host='h2')[0]
        db_api.service_update(service['id'], {'disabled': True})
        self.assertNotIn('h2', [h['host_name'] for h in self.get(
            '/os-hosts').get_json()['hosts']])

    def test_show_resources_by_project(self):
        self.server(project='p1')
        self.server(project='p1')
        self.server(project='p2')
        self.server(host='h2', project='p3')
        body = self.get('/os-hosts/h1').get_json()['host']
        by_project = {r['resource']['project']: r['resource'] for r in body}
        self.assertEqual(['(total)', '(used_now)', '(used_max)'],
                         [r['resource']['project'] for r in body[:3]])
        self.assertEqual({'host': 'h1', 'project': '(used_max)', 'cpu': 6,
                          'memory_mb': 3072, 'disk_gb': 30},
                         by_project['(used_max)'])
        self.assertEqual((4, 2048, 20), (by_project['p1']['cpu'],
                                         by_project['p1']['memory_mb'],
                                         by_project['p1']['disk_gb']))
        self.assertNotIn('p3', by_project)
        node = db_api.compute_node_get_by_host('h1')
        self.assertEqual(node['vcpus'], by_project['(total)']['cpu'])

    def test_unknown_host_404_bad_body_400_actions_501(self):
        self.assertEqual(404, self.get('/os-hosts/nohost').status_code)
        for action in ('startup', 'shutdown', 'reboot'):
            self.assertEqual(404, self.get('/os-hosts/nohost/' + action)
                             .status_code)
            self.assertEqual(501, self.get('/os-hosts/h1/' + action)
                             .status_code)
        put = self.client.put
        for body, status in (({'status': 'enable'}, 501),
                             ({'maintenance_mode': 'DISABLE'}, 501),
                             ({}, 400), ({'status': 'invalid'}, 400),
                             ({'status': 'enable', 'bogus': 1}, 400)):
            response = put('/v2.1/os-hosts/h1', json=body, headers=ADMIN)
            self.assertEqual(status, response.status_code, body)
        self.assertEqual(404, put('/v2.1/os-hosts/nohost', headers=ADMIN,
                                  json={'status': 'enable'}).status_code)

    def test_admin_only_and_gone_at_2_43(self):
        self.assertEqual(403, self.get('/os-hosts', OWNER).status_code)
        self.assertEqual(403, self.get('/os-hosts/h1/reboot', OWNER)
                         .status_code)
        self.assertEqual(200, self.get('/os-hosts', version='2.42')
                         .status_code)
        self.assertEqual(404, self.get('/os-hosts', version='2.43')
                         .status_code)
        self.assertEqual(404, self.get('/os-hosts/h1', version='2.43')
                         .status_code)


class TenantUsageTest(_Base):

    def setUp(self):
        super().setUp()
        timeutils.set_time_override(NOW)
        self.addCleanup(timeutils.clear_time_override)
        day = datetime.timedelta(days=1)
        self.a = self.server(display_name='a', launched_at=NOW - 3 * day)
        self.b = self.server(display_name='b', project='p2',
                             launched_at=NOW - 2 * day)
        # Deleted a day ago after 4 days up: deleted rows count too.
        self.gone = self.server(
            display_name='gone', launched_at=NOW - 5 * day,
            terminated_at=NOW - day, deleted=1, deleted_at=NOW - day,
            vm_state='deleted')
        self.server(display_name='never')  # never launched: not counted

    def query(self, start, end, **extra):
        return urllib.parse.urlencode(dict(
            start=start.strftime('%Y-%m-%dT%H:%M:%S'),
            end=end.strftime('%Y-%m-%dT%H:%M:%S.%f'), **extra))

    def test_hours_and_totals_per_project(self):
        start = NOW - datetime.timedelta(days=4)
        body = self.get('/os-simple-tenant-usage?' + self.query(
            start, NOW, detailed=1)).get_json()['tenant_usages']
        by_project = {u['tenant_id']: u for u in body}
        p1 = by_project['p1']
        names = sorted(s['name'] for s in p1['server_usages'])
        self.assertEqual(['a', 'gone'], names)
        # a: 72 h; gone: 72 h of the period (it ended a day ago).
        self.assertAlmostEqual(144.0, p1['total_hours'], places=3)
        self.assertAlmostEqual(144.0 * 2, p1['total_vcpus_usage'], 3)
        self.assertAlmostEqual(144.0 * 1024, p1['total_memory_mb_usage'], 1)
        self.assertAlmostEqual(144.0 * 10, p1['total_local_gb_usage'], 2)
        gone = [s for s in p1['server_usages'] if s['name'] == 'gone'][0]
        self.assertEqual('terminated', gone['state'])
        self.assertEqual(4 * 86400, gone['uptime'])
        self.assertEqual(self.flavor['name'], gone['flavor'])
        self.assertEqual(start.strftime('%Y-%m-%dT%H:%M:%S.%f'),
                         p1['start'])
        self.assertEqual(48.0, by_project['p2']['total_hours'])
        plain = self.get('/os-simple-tenant-usage?' + self.query(
            start, NOW)).get_json()['tenant_usages']
        self.assertNotIn('server_usages', plain[0])

    def test_show_is_the_projects_own(self):
        start = NOW - datetime.timedelta(days=2)
        response = self.get('/os-simple-tenant-usage/p1?' + self.query(
            start, NOW), OWNER)
        self.assertEqual(200, response.status_code, response.get_json())
        usage = response.get_json()['tenant_usage']
        self.assertEqual(['a', 'gone'], sorted(
            s['name'] for s in usage['server_usages']))
        self.assertEqual({}, self.get('/os-simple-tenant-usage/nobody?' +
                                      self.query(start, NOW)).get_json()[
            'tenant_usage'])
        self.assertEqual(403, self.get('/os-simple-tenant-usage/p1', OTHER)
                         .status_code)
        self.assertEqual(403, self.get('/os-simple-tenant-usage', OWNER)
                         .status_code)
        # An empty tenant id is no route (tempest's negative test).
        self.assertEqual(404, self.get('/os-simple-tenant-usage/?' +
                                       self.query(start, NOW)).status_code)

    def test_bad_period_and_paging(self):
        start = NOW - datetime.timedelta(days=4)
        response = self.get('/os-simple-tenant-usage?' + self.query(
            NOW, start))
        self.assertEqual(400, response.status_code)
        self.assertIn('start time cannot occur after', response.get_data(
            as_text=True))
        self.assertEqual(400, self.get(
            '/os-simple-tenant-usage?start=yesterday').status_code)
        first = self.get('/os-simple-tenant-usage?' + self.query(
            start, NOW, limit=2, detailed=1), version='2.40').get_json()
        link = first['tenant_usages_links'][0]['href']
        self.assertIn('marker=', link)
        self.assertIn('detailed=1', link)
        rest = self.get(link.split('/v2.1', 1)[1], version='2.40')
        seen = [s['name'] for u in first['tenant_usages'] + rest.get_json()[
            'tenant_usages'] for s in u['server_usages']]
        self.assertEqual(['a', 'b', 'gone'], seen)  # oldest first
        self.assertEqual(400, self.get(
            '/os-simple-tenant-usage?marker=nope', version='2.40')
            .status_code)
        # 2.75 refuses a query parameter it does not know.
        bogus = '/os-simple-tenant-usage?start=2026-01-01T00:00:00&bogus=1'
        self.assertEqual(400, self.get(bogus, version='2.75').status_code)
        self.assertEqual(200, self.get(bogus, version='2.74').status_code)

    def test_hours_for(self):
        day = datetime.timedelta(days=1)
        server = {'launched_at': NOW - day, 'terminated_at': None}
        # Launched after the period; up through all of the next one.
        self.assertEqual(0, tenant_usage.hours_for(server, NOW - 3 * day,
                                                   NOW - 2 * day))
        self.assertEqual(24.0, tenant_usage.hours_for(server, NOW,
                                                      NOW + day))
        self.assertEqual(12.0, tenant_usage.hours_for(
            server, NOW - day / 2, NOW))
        server['terminated_at'] = NOW - day / 2
        self.assertEqual(0, tenant_usage.hours_for(server, NOW - day / 4,
                                                   NOW))


class UsageAuditLogTest(_Base):

    def test_audit_period(self):
        self.assertEqual(
            (datetime.datetime(2026, 2, 1), datetime.datetime(2026, 3, 1)),
            audit_period.last_completed('month', NOW))
        self.assertEqual(
            (datetime.datetime(2025, 12, 1), datetime.datetime(2026, 1, 1)),
            audit_period.last_completed('month', datetime.datetime(
                2026, 1, 1, 0, 0, 1)))
        # A period ending exactly at ``before`` is not completed yet.
        self.assertEqual(
            (datetime.datetime(2025, 11, 1), datetime.datetime(2025, 12, 1)),
            audit_period.last_completed('month', datetime.datetime(
                2026, 1, 1)))
        self.assertEqual(
            (datetime.datetime(2026, 3, 8, 18),
             datetime.datetime(2026, 3, 9, 18)),
            audit_period.last_completed('day@18', NOW))
        self.assertEqual(
            (datetime.datetime(2026, 3, 10, 10),
             datetime.datetime(2026, 3, 10, 11)),
            audit_period.last_completed('hour', NOW))
        self.assertEqual(
            (datetime.datetime(2025, 1, 1), datetime.datetime(2026, 1, 1)),
            audit_period.last_completed('year', NOW))

    def test_the_audit_writes_what_the_log_reports(self):
        self.server(launched_at=datetime.datetime(2026, 1, 5))
        self.server(launched_at=datetime.datetime(2026, 2, 5))
        report = self.get('/os-instance_usage_audit_log/%s' % urllib.parse
                          .quote('2026-03-10 12:00:00')).get_json()[
            'instance_usage_audit_log']
        self.assertEqual(('2026-02-01 00:00:00', '2026-03-01 00:00:00', 2,
                          0, ['h1', 'h2'], '0 of 2 hosts done. 0 errors.'),
                         (report['period_beginning'],
                          report['period_ending'], report['num_hosts'],
                          report['num_hosts_done'], report['hosts_not_run'],
                          report['overall_status']))
        audit = usage_audit.UsageAudit()
        self.assertEqual(['h1', 'h2'], sorted(audit.run(NOW)))
        self.assertEqual([], audit.run(NOW))  # once per host and period
        report = self.get('/os-instance_usage_audit_log/%s' % urllib.parse
                          .quote('2026-03-10 12:00:00.5')).get_json()[
            'instance_usage_audit_log']
        self.assertEqual('ALL hosts done. 0 errors.',
                         report['overall_status'])
        self.assertEqual(2, report['total_instances'])
        self.assertEqual(('DONE', 2, 0), (report['log']['h1']['state'],
                                          report['log']['h1']['instances'],
                                          report['log']['h1']['errors']))
        self.assertIn('Instance usage audit ran for host h1, 2 instances',
                      report['log']['h1']['message'])

    def test_audit_only_when_configured_and_bad_timestamp(self):
        audit = usage_audit.UsageAudit()
        audit.tick()
        self.assertEqual([], db_api.task_log_get_all(
            'instance_usage_audit', *audit_period.last_completed(
                conf.CONF.instance_usage_audit_period,
                datetime.datetime.utcnow())))
        listing = self.get('/os-instance_usage_audit_log').get_json()
        self.assertEqual(2, listing['instance_usage_audit_logs'][
            'num_hosts_not_run'])
        response = self.get('/os-instance_usage_audit_log/invalid_time')
        self.assertEqual(400, response.status_code)
        self.assertIn('Invalid timestamp for date invalid_time',
                      response.get_data(as_text=True))
        self.assertEqual(403, self.get('/os-instance_usage_audit_log',
                                       OWNER).status_code)


class ServerPasswordTest(_Base):

    def test_show_and_clear(self):
        server = self.server()
        path = '/servers/%s/os-server-password' % server['uuid']
        self.assertEqual({'password': ''}, self.get(path, OWNER).get_json())
        secret = 'x' * 300 + 'y' * 100
        db_api.system_metadata_update(server['uuid'],
                                      server_password.chunks(secret))
        self.assertEqual({'password': secret},
                         self.get(path, OWNER).get_json())
        response = self.client.delete('/v2.1' + path, headers=OWNER)
        self.assertEqual(204, response.status_code)
        self.assertEqual({'password': ''}, self.get(path, OWNER).get_json())
        self.assertEqual(404, self.get(path, OTHER).status_code)
        self.assertEqual(404, self.get('/servers/999/os-server-password')
                         .status_code)


class ExternalEventsTest(_Base):

    def post(self, events, headers=ADMIN, version='2.1'):
        return self.client.post('/v2.1/os-server-external-events',
                                json={'events': events},
                                headers=dict(headers, **_at(version)))

    def test_accepted_and_failed_events(self):
        server = self.server()
        hostless = self.server(host=None)
        response = self.post([{'name': 'network-changed',
                               'server_uuid': server['uuid']}])
        self.assertEqual(200, response.status_code)
        self.assertEqual([{'name': 'network-changed', 'status': 'completed',
                           'code': 200, 'server_uuid': server['uuid']}],
                         response.get_json()['events'])
        unknown = str(uuid.uuid4())
        response = self.post([
            {'name': 'network-vif-plugged', 'server_uuid': server['uuid'],
             'tag': 'port'},
            {'name': 'network-changed', 'server_uuid': unknown},
            {'name': 'network-changed', 'server_uuid': hostless['uuid']}])
        self.assertEqual(207, response.status_code)
        self.assertEqual([200, 404, 422], [e['code'] for e in
                                           response.get_json()['events']])
        # None accepted: still 207 (Nova's fix of its bug 1855752).
        self.assertEqual(207, self.post([{'name': 'network-changed',
                                          'server_uuid': unknown}])
                         .status_code)

    def test_names_by_microversion_and_tags(self):
        server = self.server()
        event = {'name': 'power-update', 'server_uuid': server['uuid'],
                 'tag': 'POWER_OFF'}
        self.assertEqual(400, self.post([event], version='2.75')
                         .status_code)
        self.assertEqual(200, self.post([event], version='2.76')
                         .status_code)
        del event['tag']
        response = self.post([event], version='2.76')
        self.assertEqual(207, response.status_code)
        self.assertEqual(400, response.get_json()['events'][0]['code'])
        self.assertEqual(400, self.post([], version='2.76').status_code)
        self.assertEqual(400, self.post([{'name': 'network-changed',
                                          'server_uuid': 'not-a-uuid'}])
                         .status_code)

    def test_service_or_admin(self):
        self.assertEqual(403, self.post([{
            'name': 'network-changed', 'server_uuid': str(uuid.uuid4())}],
            OWNER).status_code)


class ExtensionsAndConsoleTest(_Base):

    def test_novas_frozen_list_then_ours(self):
        listed = self.get('/extensions', OWNER).get_json()['extensions']
        self.assertEqual(len(extension_list.NOVA) + 4, len(listed))
        self.assertIn('Hosts', [e['name'] for e in listed])
        consoles = self.get('/extensions/os-consoles', OWNER).get_json()
        self.assertEqual({'alias': 'os-consoles', 'name': 'Consoles',
                          'description': 'Interactive Console support.',
                          'links': [], 'updated': '2014-12-03T00:00:00Z',
                          'namespace': extension_list.NAMESPACE},
                         consoles['extension'])
        self.assertEqual(404, self.get('/extensions/os-nosuch').status_code)

    def test_console_output_of_a_missing_server_is_404(self):
        response = self.client.post(
            '/v2.1/servers/%s/action' % uuid.uuid4(), headers=OWNER,
            json={'os-getConsoleOutput': {'length': 10}})
        self.assertEqual(404, response.status_code)
