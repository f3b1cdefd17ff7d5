"""os-getConsoleOutput and GET /servers/{id}/diagnostics end to end in
one process (tests/fixtures/inprocess.py): the API's call reaches the
server's compute over fake:// (compute RPC 1.9, compute/console.py),
which reads the fake hypervisor's guest, and the answer or the remote
error comes back as a user sees it."""
from nova_moves.db import api as db_api
from tests.fixtures import inprocess

OWNER_TOKEN = 'alice:p1'


class ConsoleOutputTest(inprocess.TestCase):

    def setUp(self):
        super().setUp()
        self.server = self.boot(self.flavor(vcpus=2, ram=1024),
                                host='compute1')

    def output(self, length=None, client=None, expect=200, **body):
        body = dict({'length': length} if length != 'absent' else {},
                    **body)
        response = (client or self.admin).action(
            self.server['id'], {'os-getConsoleOutput': body}, expect=expect)
        return response.json()

    def test_whole_console_then_tails(self):
        lines = self.output()['output'].splitlines()
        # More than three lines: tempest's unlimited-length test wants it.
        self.assertEqual(3, len(lines), lines)
        self.assertIn('%s booted on compute1' % self.server['id'], lines[0])
        self.assertEqual(lines, self.output(-1)['output'].splitlines())
        self.assertEqual(lines,
                         self.output('absent')['output'].splitlines())
        # Nova counts pieces between newlines: the final newline is one,
        # so length 2 is the last line and its newline (length 1: '').
        self.assertEqual(lines[-1] + '\n', self.output(2)['output'])
        self.assertEqual('', self.output(1)['output'])
        # Nova takes the length as a string of digits too.
        self.assertEqual(lines[-2:],
                         self.output('3')['output'].splitlines())
        self.assertEqual(3, len(self.output(3)['output'].split('\n')))
        self.assertEqual('', self.output(0)['output'])
        self.assertEqual(lines, self.output(100)['output'].splitlines())

    def test_power_changes_are_printed(self):
        self.admin.action(self.server['id'], {'os-stop': None}, expect=202)
        self.admin.wait_for_status(self.server['id'], 'SHUTOFF')
        last = self.output(2)['output']
        self.assertIn('power running -> shutdown', last)
        # A stopped server still has its console (as Nova's libvirt).

    def test_hostile_lengths_are_400_naming_the_field(self):
        for bad in (-2, '-2', 'abc', 1.5, {}, [], True, '', '1 ', 10 ** 3 *
                    'x'):
            body = self.output(bad, expect=400)
            self.assertIn("length", body['badRequest']['message'], bad)
        body = self.output(expect=400, other=1)
        self.assertIn('other', body['badRequest']['message'])
        response = self.admin.action(self.server['id'],
                                     {'os-getConsoleOutput': 'x'})
        self.assertEqual(400, response.status_code)

    def test_unknown_and_other_projects_server_is_404(self):
        response = self.admin.action('no-such-server', {
            'os-getConsoleOutput': {'length': 5}})
        self.assertEqual(404, response.status_code, response.text)
        other = self.admin.as_user('bob:p2')
        self.output(5, client=other, expect=404)

    def test_owner_member_may_reader_may_not(self):
        owner = self.admin.as_user(OWNER_TOKEN)
        mine = owner.post('/servers', {'server': {
            'name': 'mine', 'flavorRef': self.flavor('tiny')['id'],
            'imageRef': 'fake', 'networks': 'none'}}, version='2.37',
            expect=202).json()['server']
        owner.wait_for_status(mine['id'], 'ACTIVE')
        self.assertIn('booted', owner.action(mine['id'], {
            'os-getConsoleOutput': {}}, expect=200).json()['output'])
        # A lock does not stop it (Nova's is not lock-checked).
        owner.action(mine['id'], {'lock': None}, expect=202)
        owner.action(mine['id'], {'os-getConsoleOutput': {}}, expect=200)
        self.assertEqual([], [a for a in owner.actions(mine['id'])
                              if a['action'] not in ('create', 'lock')])

    def test_guest_not_on_its_host_is_409(self):
        self.stack.compute('compute1').driver.destroy(self.server['id'])
        body = self.output(expect=409)
        self.assertIn('not running on compute1',
                      body['conflictingRequest']['message'])
        # Put it back for the invariants.
        self.stack.compute('compute1').driver.spawn(
            self.server['id'], {'name': 'small'})


class DiagnosticsTest(inprocess.TestCase):

    def setUp(self):
        super().setUp()
        self.server = self.boot(self.flavor(vcpus=2, ram=1024),
                                host='compute1')
        self.path = '/servers/%s/diagnostics' % self.server['id']

    def test_standard_format_from_2_48(self):
        body = self.admin.get(self.path, version='2.48', expect=200).json()
        # driver: one of Nova's closed list (tempest's schema checks it).
        self.assertEqual(('running', 'libvirt', 'fake', 2, 1024),
                         (body['state'], body['driver'], body['hypervisor'],
                          body['num_cpus'],
                          body['memory_details']['maximum']))
        self.assertEqual([0, 1], [c['id'] for c in body['cpu_details']])
        self.assertEqual({'state', 'driver', 'hypervisor', 'hypervisor_os',
                          'uptime', 'config_drive', 'num_cpus', 'num_nics',
                          'num_disks', 'cpu_details', 'nic_details',
                          'disk_details', 'memory_details'}, set(body))

    def test_flat_keys_below_2_48(self):
        body = self.admin.get(self.path, version='2.47', expect=200).json()
        self.assertEqual(1024, body['memory'])
        self.assertIn('cpu1_time', body)
        self.assertIn('vda_read', body)
        self.assertNotIn('state', body)

    def test_admin_only(self):
        for token in ('alice:p1', 'bob:p2'):
            response = self.admin.as_user(token).get(self.path)
            self.assertIn(response.status_code, (403, 404), token)
        response = self.admin.get('/servers/no-such/diagnostics')
        self.assertEqual(404, response.status_code)

    def test_stopped_server_is_409(self):
        self.admin.action(self.server['id'], {'os-stop': None}, expect=202)
        self.admin.wait_for_status(self.server['id'], 'SHUTOFF')
        body = self.admin.get(self.path, version='2.48', expect=409).json()
        self.assertIn('power state shutdown',
                      body['conflictingRequest']['message'])

    def test_not_implemented_is_501(self):
        driver = self.stack.compute('compute1').driver

        def diagnostics(instance_uuid):
            raise NotImplementedError()
        driver.diagnostics = diagnostics
        body = self.admin.get(self.path, version='2.48', expect=501).json()
        self.assertIn('not supported', body['notImplemented']['message'])


class NoHostTest(inprocess.TestCase):

    def test_a_server_on_no_host_is_409_for_both(self):
        """Never scheduled (an ERROR from the build): no host to ask."""
        server = db_api.instance_create({
            'display_name': 'vm', 'user_id': 'admin', 'project_id': 'admin',
            'vm_state': 'error', 'task_state': None, 'host': None,
            'node': None, 'power_state': 0,
            'flavor': db_api.flavor_get(self.flavor()['id'])})
        self.addCleanup(db_api.instance_destroy, server['uuid'])
        for response in (
                self.admin.action(server['uuid'],
                                  {'os-getConsoleOutput': {}}),
                self.admin.get('/servers/%s/diagnostics' % server['uuid'],
                               version='2.48')):
            self.assertEqual(409, response.status_code, response.text)
            self.assertIn('on no host', response.text)
