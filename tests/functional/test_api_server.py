"""nova-moves-api as an operator runs it: gunicorn with several worker
processes, SIGHUP that reloads without killing, SIGTERM that drains an
in-flight request, an IPv6 listen address, Keystone out of reach, and
nova_moves.wsgi.api under gunicorn's own command line. What the
middleware pipeline does to each request is in test_api_http."""
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

import requests

from nova_moves import apiclient
from tests.functional import api_server_base


def children(pid):
    """The pids whose parent is ``pid`` (gunicorn's workers)."""
    found = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % entry) as f:
                stat = f.read()
        except OSError:
            continue
        # The command in parentheses may hold spaces: split after it.
        fields = stat.rsplit(')', 1)[1].split()
        if int(fields[1]) == pid:
            found.append(int(entry))
    return sorted(found)


def set_option(path, section, key, value):
    """Rewrite one option of an INI file in place (for SIGHUP tests)."""
    with open(path) as f:
        text = f.read()
    head, sep, rest = text.partition('[%s]\n' % section)
    assert sep, section
    body, nxt, tail = rest.partition('\n[')
    body = re.sub(r'(?m)^%s = .*$' % key, '%s = %s' % (key, value), body)
    if not re.search(r'(?m)^%s = ' % key, body):
        body = '%s = %s\n' % (key, value) + body
    with open(path, 'w') as f:
        f.write(head + sep + body + nxt + tail)


class APIServerTest(api_server_base.APIServerTestCase):

    def api_pid(self):
        return self.stack.processes['api'].popen.pid

    def wait_for_workers(self, count, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            workers = children(self.api_pid())
            if len(workers) == count:
                return workers
            time.sleep(0.2)
        self.fail('api has workers %s, not %d' % (
            children(self.api_pid()), count))

    def test_two_workers_serve_moves(self):
        workers = self.wait_for_workers(2)
        self.assertNotIn(self.api_pid(), workers)
        server = self.boot(host='compute1')
        self.admin.action(server['id'], {'migrate': None}, expect=202)
        self.admin.wait_for_status(server['id'], 'VERIFY_RESIZE')
        self.admin.action(server['id'], {'confirmResize': None}, expect=204)
        server = self.admin.wait_for_status(server['id'], 'ACTIVE')
        self.assertEqual('compute2', server['OS-EXT-SRV-ATTR:host'])
        # Many connections at once spread over both workers, which answer
        # them all.
        results = []

        def get():
            client = self.stack.client()
            results.append(client.get('/servers/%s' % server['id'])
                           .status_code)
        threads = [threading.Thread(target=get) for _ in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        self.assertEqual([200] * 16, results)
        self.assertEqual(workers, children(self.api_pid()))

    def test_sighup_reloads_log_level_and_kills_nothing(self):
        workers = self.wait_for_workers(2)
        config = self.stack.config_path
        marker = {name: len(self.stack.log(name))
                  for name in ('api', 'conductor1')}
        set_option(config, 'DEFAULT', 'debug', 'true')
        self.addCleanup(self._debug_off)
        for name in ('api', 'conductor1'):
            self.stack.processes[name].signal(signal.SIGHUP)
        # Every worker and the conductor say they reloaded.
        self.admin.wait_for(
            lambda: self.stack.log('api')[marker['api']:].count(
                'SIGHUP: reloading mutable options') >= 3 and
            'SIGHUP: reloading mutable options' in
            self.stack.log('conductor1')[marker['conductor1']:],
            timeout=30, what='reload logged')
        server = self.boot()
        self.admin.action(server['id'], {'migrate': None}, expect=202)
        self.admin.wait_for_status(server['id'], 'VERIFY_RESIZE')
        self.admin.action(server['id'], {'confirmResize': None}, expect=204)
        self.admin.wait_for_status(server['id'], 'ACTIVE')
        api_log = self.stack.log('api')[marker['api']:]
        # The master and both workers took the new value...
        self.assertEqual(3, api_log.count(
            'Option DEFAULT.debug changed from [false] to [true]'), api_log)
        # ...and logs at the new level (the option values, at DEBUG).
        for name in ('api', 'conductor1'):
            self.assertIn(' DEBUG ', self.stack.log(name)[marker[name]:],
                          name)
            self.assertTrue(self.stack.processes[name].alive(), name)
        self.assertEqual(workers, children(self.api_pid()))

    def _debug_off(self):
        set_option(self.stack.config_path, 'DEFAULT', 'debug', 'false')
        for name in ('api', 'conductor1'):
            self.stack.processes[name].signal(signal.SIGHUP)

    def test_ipv6_listen(self):
        # '::' is not loopback: noauth needs the lab-only override.
        port = self._second_api({'listen': '::',
                                 'insecure_noauth_on_network': 'true'})
        client = apiclient.Client('http://[::1]:%d/v2.1' % port)
        client.wait_for(lambda: _answers(client), timeout=30,
                        what='API on [::1]')
        server = self.boot(client=client)
        client.action(server['id'], {'migrate': None}, expect=202)
        client.wait_for_status(server['id'], 'VERIFY_RESIZE')
        client.action(server['id'], {'confirmResize': None}, expect=204)
        client.wait_for_status(server['id'], 'ACTIVE')
        # '::' is dual-stack: IPv4 clients are served too.
        self.assertEqual(200, requests.get('http://127.0.0.1:%d/' % port,
                                           timeout=30).status_code)

    def test_keystone_unreachable_is_503_not_401(self):
        # A second API with auth_strategy = keystone whose Keystone does
        # not answer (a closed port).
        from nova_moves.harness import stack as nm_stack
        port, dead = nm_stack.free_port(), nm_stack.free_port()
        keystone = 'http://127.0.0.1:%d/v3' % dead
        name = 'api-ks-%d' % port
        overlay = self.stack._overlay(name, {
            'DEFAULT': {'host': name},
            'api': {'port': port, 'workers': 1,
                    'auth_strategy': 'keystone'},
            'keystone_authtoken': {
                'www_authenticate_uri': keystone, 'auth_url': keystone,
                'auth_type': 'password', 'username': 'nova-moves',
                'password': 'x', 'project_name': 'service',
                'user_domain_name': 'Default',
                'project_domain_name': 'Default'}})
        self.stack.add_process(name, 'nova-moves-api', overlay)
        self.addCleanup(self.stack.kill, name, signal.SIGTERM, 30)
        root = 'http://127.0.0.1:%d' % port
        deadline = time.monotonic() + 60
        while True:  # the version document needs no token
            try:
                if requests.get(root + '/', timeout=5).status_code == 200:
                    break
            except requests.RequestException:
                pass
            self.assertLess(time.monotonic(), deadline, 'API not up')
            time.sleep(0.2)
        response = requests.get(root + '/v2.1/servers', timeout=60,
                                headers={'X-Auth-Token': 'some-token'})
        self.assertEqual(503, response.status_code, response.text)
        self.assertGreater(int(response.headers['Retry-After']), 0)
        self.assertEqual(503, response.json()['serviceUnavailable']['code'])
        # No token at all is still the client's problem...
        self.assertEqual(401, requests.get(root + '/v2.1/servers',
                                           timeout=60).status_code)
        # ...and the noauth identity shim is not served under Keystone.
        self.assertEqual(404, requests.get(root + '/v3', timeout=60)
                         .status_code)
        self.assertIn('Keystone is unreachable', self.stack.log(name))

    def _second_api(self, api_options):
        from nova_moves.harness import stack as nm_stack
        port = nm_stack.free_port()
        options = dict(api_options, port=port, workers=1)
        name = 'api-%d' % port
        overlay = self.stack._overlay(name, {'DEFAULT': {'host': name},
                                             'api': options})
        self.stack.add_process(name, 'nova-moves-api', overlay)
        self.addCleanup(self.stack.kill, name, signal.SIGTERM, 30)
        return port

    def test_sigterm_answers_the_in_flight_live_migration(self):
        server = self.boot(host='compute1')
        # A stopped destination holds the API's call to the conductor
        # (below 2.34 live migration is a call through the checks).
        dest = self.stack.processes['compute2']
        dest.signal(signal.SIGSTOP)
        self.addCleanup(dest.signal, signal.SIGCONT)
        answer = {}

        def live_migrate():
            try:
                answer['status'] = self.admin.action(server['id'], {
                    'os-migrateLive': {'host': 'compute2',
                                       'block_migration': 'auto'}},
                    version='2.30').status_code
            except Exception as exc:
                answer['error'] = exc
        thread = threading.Thread(target=live_migrate)
        thread.start()
        self.admin.wait_for(lambda: self._migration_started(server['id']),
                            timeout=30, what='live migration accepted')
        api = self.stack.processes['api']
        api.stopped_on_purpose = True
        api.signal(signal.SIGTERM)
        # Draining: the listening socket is closed at once.
        self.admin.wait_for(lambda: not _answers(self.admin), timeout=15,
                            what='listener closed')
        self.assertTrue(thread.is_alive(), answer)
        dest.signal(signal.SIGCONT)
        thread.join(60)
        self.assertEqual({'status': 202}, answer)
        self.assertEqual(0, api.wait(40))
        self.stack.restart('api')
        self.stack.wait_until_ready(60)
        server = self.admin.wait_for_status(server['id'], 'ACTIVE')
        self.admin.wait_for(
            lambda: self.admin.server(server['id'])[
                'OS-EXT-SRV-ATTR:host'] == 'compute2',
            timeout=60, what='server on compute2')

    def _migration_started(self, server_id):
        return self.admin.server(server_id)['OS-EXT-STS:task_state'] == \
            'migrating'

    def _gunicorn(self, config, port, host='127.0.0.1'):
        """gunicorn's own command line on nova_moves.wsgi.api, as a
        deployment outside nova-moves-api would run it."""
        log = open(os.path.join(self.stack.workdir, 'logs',
                                'wsgi-%d.log' % port), 'w+')
        self.addCleanup(log.close)
        proc = subprocess.Popen(
            [os.path.join(os.path.dirname(sys.executable), 'gunicorn'),
             '--workers', '1', '--worker-class', 'gthread', '--threads', '8',
             '--bind', '%s:%d' % (host, port), '--no-control-socket',
             'nova_moves.wsgi.api:application'],
            env=dict(os.environ, NOVA_MOVES_CONFIG=config),
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.addCleanup(lambda: proc.poll() is None and (
            proc.terminate(), proc.wait(30)))
        return proc, log

    def _wait_bound(self, host, port):
        deadline = time.monotonic() + 30
        while True:  # the master binds before the worker loads the app
            try:
                socket.create_connection((host, port), 1).close()
                return
            except OSError:
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.05)

    def test_wsgi_entry_point_concurrent_first_requests(self):
        from nova_moves.harness import stack as nm_stack
        port = nm_stack.free_port()
        proc, log = self._gunicorn(self.stack.config_path, port)
        self._wait_bound('127.0.0.1', port)
        client = apiclient.Client('http://127.0.0.1:%d/v2.1' % port)
        barrier = threading.Barrier(8)
        results = []

        def first_request():
            barrier.wait()
            results.append(client.as_user('admin:admin').get(
                '/flavors').status_code)
        threads = [threading.Thread(target=first_request) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        log.seek(0)
        self.assertEqual([200] * 8, results, log.read()[-3000:])

    def test_wsgi_entry_point_noauth_on_the_network_refused(self):
        # The stack's config: noauth, [api] listen = 127.0.0.1. gunicorn
        # binds where its own command line says; the request is refused
        # for the address it came to, not for [api] listen.
        from nova_moves.harness import stack as nm_stack
        address = _non_loopback_address()
        if address is None:
            self.skipTest('no non-loopback local address')
        port = nm_stack.free_port()
        proc, log = self._gunicorn(self.stack.config_path, port, address)
        self._wait_bound(address, port)
        for path in ('/v2.1/os-services', '/v2.1/os-hypervisors', '/'):
            response = requests.get('http://%s:%d%s' % (address, port, path),
                                    headers={'X-Auth-Token': 'admin:x'},
                                    timeout=60)
            log.seek(0)
            self.assertEqual(403, response.status_code, log.read()[-3000:])
            self.assertIn('loopback', response.text)
        log.seek(0)
        self.assertIn('auth_strategy = noauth is served on loopback only',
                      log.read())

    def test_wsgi_entry_point_without_config_does_not_start(self):
        from nova_moves.harness import stack as nm_stack
        missing = os.path.join(self.stack.workdir, 'absent.conf')
        proc, log = self._gunicorn(missing, nm_stack.free_port())
        self.assertNotEqual(0, proc.wait(60))
        log.seek(0)
        self.assertIn('configuration file %s not found' % missing,
                      log.read())


def _non_loopback_address():
    """One of this machine's own non-loopback IPv4 addresses, or None."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(('192.0.2.1', 9))  # no packet is sent
            address = probe.getsockname()[0]
    except OSError:
        return None
    return None if address.startswith('127.') else address


def _answers(client):
    try:
        client.get('/', expect=200)
        return True
    except (requests.ConnectionError, apiclient.APIError):
        return False
