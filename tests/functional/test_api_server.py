"""nova-moves-api as an operator runs it: gunicorn with several worker
processes, SIGHUP that reloads without killing, SIGTERM that drains an
in-flight request, an IPv6 listen address, and oslo.middleware's
pipeline (request id, /healthcheck, CORS, proxy headers, size limit)
with an access log."""
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
from tests.functional import base


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


class APIServerTest(base.StackTestCase):
    EXTRA_CONF = {'DEFAULT': {'debug': 'false'},
                  'api': {'workers': 2, 'threads': 4,
                          'graceful_shutdown_timeout': 30,
                          'keep_alive_timeout': 3, 'body_timeout': 6},
                  'cors': {'allowed_origin': 'https://dashboard.example'},
                  'oslo_middleware': {'enable_proxy_headers_parsing': 'true',
                                      'max_request_body_size': 4096}}

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

    def test_idle_connections_hold_no_thread(self):
        # Connections that never send a request (half-open, slowloris)
        # wait in the workers' pollers, not in their 2 x 4 threads.
        port = self.stack.api_port
        idle = [socket.create_connection(('127.0.0.1', port), 10)
                for _ in range(100)]
        self.addCleanup(lambda: [sock.close() for sock in idle])
        time.sleep(1)  # accepted by now
        started = time.monotonic()
        response = requests.get(
            'http://127.0.0.1:%d/v2.1/flavors' % port, timeout=60,
            headers={'X-Auth-Token': 'admin:admin'})
        self.assertEqual(200, response.status_code)
        self.assertLess(time.monotonic() - started, 3)
        # ...and each is closed after [api] keep_alive_timeout (3 s).
        for sock in idle:
            sock.settimeout(30)
            try:
                self.assertEqual(b'', sock.recv(1))
            except ConnectionResetError:
                pass

    def test_slow_clients_hold_no_thread(self):
        # 60 clients sending their headers a line a second and 60 sending
        # a body a byte a second, against 2 workers x 4 threads: a server
        # that gives a thread to a request before it is read whole stops
        # answering anyone else.
        port = self.stack.api_port
        slow = SlowClients(port, 60)
        self.addCleanup(slow.close)
        slow.start()
        time.sleep(2)  # every slow one has sent more than its first line
        session = requests.Session()
        session.headers['X-Auth-Token'] = 'admin:admin'
        times = []
        for _ in range(20):
            started = time.monotonic()
            response = session.get(
                'http://127.0.0.1:%d/v2.1/flavors' % port, timeout=30)
            self.assertEqual(200, response.status_code, response.text)
            times.append(time.monotonic() - started)
            time.sleep(0.2)
        # Generous: the machine is shared; the old server took > 30 s.
        self.assertLess(max(times), 5, times)
        # The server, not the clients, ends them: headers within [api]
        # keep_alive_timeout (3 s, below header_timeout), bodies within
        # body_timeout (6 s).
        closed = slow.wait_closed(20)
        self.assertEqual({'header': 60, 'body': 60}, closed)

    def test_healthcheck_needs_no_token(self):
        url = 'http://127.0.0.1:%d/healthcheck' % self.stack.api_port
        response = requests.get(url, timeout=30)
        self.assertEqual(200, response.status_code, response.text)
        response = requests.get(url, headers={'Accept': 'application/json'},
                                timeout=30)
        self.assertEqual(200, response.status_code, response.text)
        self.assertEqual([], response.json()['reasons'])
        # Everything else still wants one.
        self.assertEqual(401, requests.get(
            'http://127.0.0.1:%d/v2.1/servers' % self.stack.api_port,
            timeout=30).status_code)

    def test_request_id_returned_and_logged(self):
        marker = len(self.stack.log('api'))
        response = self.admin.get('/flavors', expect=200)
        request_id = response.headers['x-openstack-request-id']
        self.assertRegex(request_id, r'^req-[0-9a-f-]{36}$')
        self.assertEqual(request_id, response.headers['x-compute-request-id'])
        # The access line: the request id, status, bytes and duration.
        line = self.admin.wait_for(
            lambda: _line_with(self.stack.log('api')[marker:], request_id),
            timeout=10, what='access log line')
        self.assertRegex(line, r'"GET /v2.1/flavors" status: 200 len: %d '
                               r'microversion: 2.1 time: \d+\.\d+' % len(
                                   response.content))
        # A caller's valid global request id is kept; a bogus one is not.
        global_id = 'req-12345678-1234-1234-1234-123456789012'
        self.admin.session.headers['X-OpenStack-Request-ID'] = global_id
        self.addCleanup(self.admin.session.headers.pop,
                        'X-OpenStack-Request-ID')
        response = self.admin.get('/flavors', expect=200)
        self.assertNotEqual(global_id,
                            response.headers['x-openstack-request-id'])
        line = self.admin.wait_for(
            lambda: _line_with(self.stack.log('api')[marker:],
                               response.headers['x-openstack-request-id']),
            timeout=10, what='access log line')
        self.assertIn(global_id, line)
        # No framework or version in Server: (werkzeug's said both).
        self.assertNotIn('werkzeug', response.headers.get('Server', '')
                         .lower())
        self.assertNotIn('python', response.headers.get('Server', '')
                         .lower())
        self.assertEqual('nova-moves', response.headers.get('Server'))

    def test_body_over_the_limit_is_413(self):
        flavor = {'flavor': {'name': 'x' * 5000, 'vcpus': 1, 'ram': 1,
                             'disk': 1}}
        response = self.admin.post('/flavors', flavor)
        self.assertEqual(413, response.status_code, response.text)
        self.assertIn('at most 4096 bytes',
                      response.json()['overLimit']['message'])
        # Unannounced length (chunked) is held to the same limit.
        response = requests.post(
            self.stack.endpoint + '/flavors',
            data=iter([b'{"flavor": {"name": "', b'x' * 5000, b'"}}']),
            headers={'X-Auth-Token': 'admin:admin',
                     'Content-Type': 'application/json'}, timeout=30)
        self.assertEqual(413, response.status_code, response.text)

    def test_cors_preflight_for_the_allowed_origin(self):
        url = self.stack.endpoint + '/servers'
        response = requests.options(url, headers={
            'Origin': 'https://dashboard.example',
            'Access-Control-Request-Method': 'GET'}, timeout=30)
        self.assertEqual('https://dashboard.example', response.headers.get(
            'Access-Control-Allow-Origin'))
        response = requests.options(url, headers={
            'Origin': 'https://evil.example',
            'Access-Control-Request-Method': 'GET'}, timeout=30)
        self.assertNotIn('Access-Control-Allow-Origin', response.headers)

    def test_links_follow_the_tls_proxy(self):
        response = requests.get(
            'http://127.0.0.1:%d/v2.1/' % self.stack.api_port,
            headers={'X-Forwarded-Proto': 'https',
                     'X-Forwarded-Host': 'compute.example'}, timeout=30)
        self.assertEqual(200, response.status_code, response.text)
        hrefs = [link['href'] for link in response.json()['version']['links']
                 if link.get('rel') == 'self']
        self.assertEqual(1, len(hrefs), response.text)
        self.assertTrue(hrefs[0].startswith('https://compute.example/'),
                        hrefs)

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

    def _migration_started(self, server_id):
        return self.admin.server(server_id)['OS-EXT-STS:task_state'] == \
            'migrating'


class SlowClients:
    """``count`` slow-header and ``count`` slow-body connections, fed a
    header line or a body byte a second by one thread."""

    def __init__(self, port, count):
        self.socks = []
        self.closed = {'header': 0, 'body': 0}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._feed, daemon=True)
        for _ in range(count):
            for kind, first in (
                    ('header', b'GET /v2.1/flavors HTTP/1.1\r\n'
                               b'Host: localhost\r\n'),
                    ('body', b'POST /v2.1/flavors HTTP/1.1\r\n'
                             b'Host: localhost\r\n'
                             b'X-Auth-Token: admin:admin\r\n'
                             b'Content-Type: application/json\r\n'
                             b'Content-Length: 4000\r\n\r\n{')):
                sock = socket.create_connection(('127.0.0.1', port), 10)
                sock.sendall(first)
                sock.setblocking(False)
                self.socks.append((kind, sock))

    def start(self):
        self.thread.start()

    def _feed(self):
        line = 0
        while not self.stop.wait(1):
            line += 1
            for kind, sock in list(self.socks):
                try:
                    sock.send(b'X-Slow-%d: x\r\n' % line
                              if kind == 'header' else b' ')
                except (BlockingIOError, OSError):
                    pass

    def wait_closed(self, timeout):
        """{kind: connections the server closed} within ``timeout``."""
        deadline = time.monotonic() + timeout
        pending = list(self.socks)
        while pending and time.monotonic() < deadline:
            for kind, sock in list(pending):
                try:
                    data = sock.recv(4096)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b''
                if not data:
                    self.closed[kind] += 1
                    pending.remove((kind, sock))
            time.sleep(0.2)
        return self.closed

    def close(self):
        self.stop.set()
        self.thread.join(5)
        for _kind, sock in self.socks:
            sock.close()


def _non_loopback_address():
    """One of this machine's own non-loopback IPv4 addresses, or None."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(('192.0.2.1', 9))  # no packet is sent
            address = probe.getsockname()[0]
    except OSError:
        return None
    return None if address.startswith('127.') else address


def _line_with(log, needle):
    for line in log.splitlines():
        if needle in line and 'nova_moves.api.accesslog' in line:
            return line
    return None


def _answers(client):
    try:
        client.get('/', expect=200)
        return True
    except (requests.ConnectionError, apiclient.APIError):
        return False
