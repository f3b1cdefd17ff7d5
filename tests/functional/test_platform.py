"""The platform on real processes: boot, read back, delete, services."""
import os
import stat
import subprocess

from nova_moves.api import microversion
from tests.functional import base


class PlatformTest(base.StackTestCase):

    def test_boot_places_on_a_host_and_records_events(self):
        server = self.boot('vm1')
        self.assertIn(server['OS-EXT-SRV-ATTR:host'],
                      self.stack.compute_hosts())
        actions = self.admin.actions(server['id'])
        self.assertEqual(['create'], [a['action'] for a in actions])
        detail = self.admin.action_detail(server['id'],
                                          actions[0]['request_id'])
        events = {e['event']: e['result'] for e in detail['events']}
        self.assertEqual({'conductor_schedule_and_build_instances': 'Success',
                          'compute_build_and_run_instance': 'Success'},
                         events)

    def test_boot_on_named_host_and_spread(self):
        first = self.boot('a', host='compute2')
        self.assertEqual('compute2', first['OS-EXT-SRV-ATTR:host'])

    def test_failed_spawn_reschedules_to_alternate(self):
        self.admin.set_faults('compute1', ['spawn'])
        self.addCleanup(self.admin.set_faults, 'compute1', [])
        flavor = self.flavor('big', ram=30000)
        # compute1 has the most free RAM only if empty; force it first by
        # naming no host and failing spawn wherever it lands.
        server = self.boot('resched', flavor=flavor)
        self.assertEqual('compute2', server['OS-EXT-SRV-ATTR:host'])
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_spawn_failure_everywhere_is_error_without_allocation(self):
        for host in self.stack.compute_hosts():
            self.admin.set_faults(host, ['spawn'])
            self.addCleanup(self.admin.set_faults, host, [])
        body = self.admin.boot('doomed', self.flavor('small')['id'],
                               wait=False)
        server = self.admin.wait_for_status(body['id'], 'ERROR')
        self.assertIn('fault', server)
        self.assertNotIn(server['id'], self.admin.placement()['allocations'])
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_owner_sees_faults_without_traceback_paths_or_hosts(self):
        owner = self.admin.as_user('olga:proj-o', version='2.84')
        hosts = self.stack.compute_hosts()
        for host in hosts:
            self.admin.set_faults(host, ['spawn'])
            self.addCleanup(self.admin.set_faults, host, [])
        spawn = owner.boot('spawn-fails', self.flavor('small')['id'],
                           wait=False)
        unfit = owner.boot('fits-nowhere', self.flavor('huge', ram=10 ** 6)
                           ['id'], wait=False)
        for body, expected in ((spawn, 'spawn failed on ***'),
                               (unfit, 'No valid host was found')):
            owner.wait_for_status(body['id'], 'ERROR')
            fault = owner.server(body['id'])['fault']
            # As Nova stores them: 500, the message, no details for the
            # owner; nothing of ours in the message.
            self.assertEqual(500, fault['code'], fault)
            self.assertIn(expected, fault['message'])
            self.assertNotIn('details', fault)
            for secret in ['Traceback', '\n', '.py', '/'] + hosts:
                self.assertNotIn(secret, fault['message'])
            admin_fault = self.admin.server(body['id'])['fault']
            self.assertIn('Traceback', admin_fault['details'])
            # Every Error event says why (2.84 details), for the owner
            # too, without host names.
            [action] = owner.actions(body['id'])
            events = owner.action_detail(body['id'],
                                         action['request_id'])['events']
            errors = [e for e in events if e['result'] == 'Error']
            self.assertTrue(errors, events)
            for event in errors:
                self.assertTrue(event['details'], event)
                for secret in ['Traceback', '/'] + hosts:
                    self.assertNotIn(secret, event['details'])
            self.admin.delete('/servers/%s' % body['id'], expect=204)

    def test_state_files_are_not_world_readable(self):
        # A booted server: its fake guest file, the SQLite database, the
        # file:// coordination backend, all written by the services.
        self.boot('perm')
        state = os.path.join(self.stack.workdir, 'state')
        seen = 0
        for root, dirs, files in os.walk(state):
            for name in dirs + files:
                path = os.path.join(root, name)
                mode = stat.S_IMODE(os.lstat(path).st_mode)
                allowed = 0o750 if os.path.isdir(path) else 0o640
                self.assertEqual(0, mode & ~allowed, '%s is %o' % (path,
                                                                   mode))
                seen += 1
        self.assertGreater(seen, 2)
        self.assertEqual(0, stat.S_IMODE(os.stat(
            self.stack.config_path).st_mode) & 0o027)

    def test_delete_frees_allocation(self):
        server = self.boot('gone')
        self.assertIn(server['id'], self.admin.placement()['allocations'])
        self.admin.delete('/servers/%s' % server['id'], expect=204)
        self.admin.get('/servers/%s' % server['id'], expect=404)
        self.assertNotIn(server['id'], self.admin.placement()['allocations'])

    def test_non_admin_sees_own_servers_without_host(self):
        user = self.admin.as_user('alice:proj-a')
        server = self.boot('mine', client=user)
        shown = user.server(server['id'])
        self.assertNotIn('OS-EXT-SRV-ATTR:host', shown)
        other = self.admin.as_user('bob:proj-b')
        other.get('/servers/%s' % server['id'], expect=404)
        user.get('/os-services', expect=403)

    def test_services_and_hypervisors(self):
        services = self.admin.services()
        binaries = sorted({s['binary'] for s in services})
        # os-services shows Nova's names (the processes keep theirs).
        self.assertEqual(['nova-compute', 'nova-conductor',
                          'nova-scheduler'], binaries)
        self.assertTrue(all(s['state'] == 'up' for s in services))
        hypervisors = self.admin.get('/os-hypervisors/detail',
                                     version='2.53',
                                     expect=200).json()['hypervisors']
        self.assertEqual(sorted(self.stack.compute_hosts()),
                         sorted(h['hypervisor_hostname']
                                for h in hypervisors))

    def test_disabled_host_gets_no_servers(self):
        svc = [s for s in self.admin.services('nova-moves-compute')
               if s['host'] == 'compute1'][0]
        self.admin.put('/os-services/%s' % svc['id'],
                       {'status': 'disabled', 'disabled_reason': 'test'},
                       version='2.53', expect=200)
        self.addCleanup(self.admin.put, '/os-services/%s' % svc['id'],
                        {'status': 'enabled'}, version='2.53')
        for i in range(3):
            server = self.boot('d%d' % i)
            self.assertEqual('compute2', server['OS-EXT-SRV-ATTR:host'])

    def test_sigterm_exits_zero(self):
        proc = self.stack.processes['scheduler1']
        code = self.stack.kill('scheduler1', signum=15, wait=30)
        self.assertEqual(0, code, self.stack.log('scheduler1')[-3000:])
        self.stack.restart('scheduler1')
        self.boot('after-restart')
        self.assertTrue(proc.alive())


class MicroversionAndErrorsTest(base.StackTestCase):
    COMPUTES = 1

    def test_version_documents(self):
        root = self.admin.session.get(self.stack.endpoint.rsplit('/', 1)[0]
                                      + '/').json()
        # v2.0 first, as Nova lists it (tempest checks the order).
        self.assertEqual(['v2.0', 'v2.1'], [v['id'] for v in
                                            root['versions']])
        self.assertEqual(microversion.MAX_VERSION,
                         root['versions'][1]['version'])
        doc = self.admin.session.get(self.stack.endpoint).json()
        self.assertEqual('2.1', doc['version']['min_version'])
        # Exactly Nova's keys: strict clients refuse any other.
        self.assertEqual({'id', 'status', 'version', 'min_version',
                          'updated', 'links'},
                         set(root['versions'][1]))
        self.assertEqual({'id', 'status', 'version', 'min_version',
                          'updated', 'links', 'media-types'},
                         set(doc['version']))

    def test_extensions_listed_where_nova_lists_extensions(self):
        listed = self.admin.get('/extensions').json()['extensions']
        names = {e['alias']: e for e in listed}
        self.assertIn('From microversion 2.56:',
                      names['nova_moves-migrate-force']['description'])
        self.assertIn('nova_moves-move-check', names)
        one = self.admin.get('/extensions/nova_moves-move-check').json()
        self.assertEqual(names['nova_moves-move-check'], one['extension'])
        missing = self.admin.get('/extensions/os-nosuch')
        self.assertEqual(404, missing.status_code)
        self.assertIn('os-nosuch', missing.json()['itemNotFound']['message'])

    def test_version_negotiation(self):
        resp = self.admin.get('/flavors', version='2.60')
        self.assertEqual('compute 2.60', resp.headers['OpenStack-API-Version'])
        self.assertIn('OpenStack-API-Version', resp.headers['Vary'])
        resp = self.admin.get('/flavors', version='latest')
        self.assertEqual('compute ' + microversion.MAX_VERSION,
                         resp.headers['OpenStack-API-Version'])
        resp = self.admin.get('/flavors', version='3.0')
        self.assertEqual(406, resp.status_code)
        resp = self.admin.get('/flavors', version='2.x')
        self.assertEqual(400, resp.status_code)

    def test_flavor_swap_is_an_integer_from_275(self):
        flavor = self.admin.create_flavor('noswap', 1, 128, 1)
        self.addCleanup(self.admin.delete, '/flavors/%s' % flavor['id'])
        for version, swap in (('2.74', ''), ('2.75', 0)):
            shown = self.admin.get('/flavors/%s' % flavor['id'],
                                   version=version, expect=200).json()
            self.assertEqual(swap, shown['flavor']['swap'], version)

    def test_instance_actions_page_links_from_258(self):
        server = self.boot('pages')
        self.admin.action(server['id'], {'os-stop': None}, expect=202)
        self.admin.wait_for_status(server['id'], 'SHUTOFF')
        self.admin.action(server['id'], {'os-start': None}, expect=202)
        self.admin.wait_for_status(server['id'], 'ACTIVE')
        path = '/servers/%s/os-instance-actions' % server['id']
        page = self.admin.get(path, version='2.58', params={'limit': 2},
                              expect=200).json()
        self.assertEqual(['start', 'stop'],
                         [a['action'] for a in page['instanceActions']])
        self.assertEqual('next', page['links'][0]['rel'])
        href = page['links'][0]['href']
        self.assertIn('marker=%s' % page['instanceActions'][1]['request_id'],
                      href)
        rest = self.admin.session.get(href, headers={
            'X-Auth-Token': 'admin:admin',
            'OpenStack-API-Version': 'compute 2.58'}).json()
        self.assertEqual(['create'],
                         [a['action'] for a in rest['instanceActions']])
        self.assertNotIn('links', rest)
        self.assertNotIn('links', self.admin.get(
            path, version='2.57', params={'limit': 2}, expect=200).json())
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_no_token_is_401(self):
        resp = self.admin.session.get(self.stack.endpoint + '/flavors')
        self.assertEqual(401, resp.status_code)

    def test_bad_bodies_name_the_field(self):
        resp = self.admin.post('/servers', {'server': {'name': 'x'}})
        self.assertEqual(400, resp.status_code)
        self.assertIn('flavorRef', resp.json()['badRequest']['message'])
        resp = self.admin.post('/servers', {'server': {
            'name': 'x', 'flavorRef': '1', 'bogus': 1}})
        self.assertEqual(400, resp.status_code)
        self.assertIn('bogus', resp.json()['badRequest']['message'])
        resp = self.admin.post('/servers', {'server': {
            'name': 'x', 'flavorRef': 'nope'}})
        self.assertEqual(400, resp.status_code)
        self.assertIn('nope', resp.json()['badRequest']['message'])

    def test_unknown_server_is_404(self):
        resp = self.admin.get('/servers/does-not-exist')
        self.assertEqual(404, resp.status_code)
        self.assertIn('itemNotFound', resp.json())


class ManageTest(base.StackTestCase):
    COMPUTES = 1
    CHECK_INVARIANTS = False

    def test_db_version_and_service_list(self):
        argv = [base.nm_stack._script('nova-moves-manage'), '--config-file',
                self.stack.config_path]
        out = subprocess.run(argv + ['db', 'version'], check=True,
                             capture_output=True, text=True).stdout
        # Synced to the newest migration shipped (as a 4-digit name).
        from nova_moves.db import migration
        self.assertEqual(migration.head_version(), out.strip())
        self.assertRegex(out.strip(), r'^\d{4}$')
        out = subprocess.run(argv + ['service', 'list'], check=True,
                             capture_output=True, text=True).stdout
        self.assertIn('nova-moves-compute', out)
        self.assertIn('compute1', out)
