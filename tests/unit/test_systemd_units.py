"""etc/systemd/*.service: what the lab-node units promise, checked
against the units themselves, systemd-analyze verify (when available) and
a real nova-moves-api speaking the sd_notify protocol."""
import configparser
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import fixtures
import testtools

from nova_moves.conf import api as api_conf
from nova_moves.conf import default as default_conf

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
UNIT_DIR = os.path.join(ROOT, 'etc', 'systemd')
BIN_DIR = '/opt/nova_moves/venv/bin/'
CONF = '/etc/nova_moves/nova_moves.conf'
PROCESSES = ('api', 'conductor', 'scheduler', 'compute')


def read_unit(name):
    parser = configparser.RawConfigParser(strict=True,
                                          interpolation=None)
    parser.optionxform = str
    parser.read(os.path.join(UNIT_DIR, name))
    return parser


def _seconds(value):
    return float('inf') if value == 'infinity' else float(value)


class UnitFilesTest(testtools.TestCase):

    def test_one_unit_per_process(self):
        self.assertEqual(sorted('nova-moves-%s.service' % p
                                for p in PROCESSES),
                         sorted(os.listdir(UNIT_DIR)))

    def test_units(self):
        graceful = {o.name: o.default for o in default_conf.default_opts}[
            'graceful_shutdown_timeout']
        api_graceful = {o.name: o.default for o in api_conf.api_opts}[
            'graceful_shutdown_timeout']
        for process in PROCESSES:
            unit = read_unit('nova-moves-%s.service' % process)
            svc = unit['Service']
            with self.subTest(process):
                self.assertEqual('notify', svc['Type'])
                self.assertEqual('on-failure', svc['Restart'])
                self.assertEqual('nova-moves', svc['User'])
                self.assertEqual('SIGTERM', svc['KillSignal'])
                self.assertEqual(
                    '%snova-moves-%s --config-file %s' % (BIN_DIR, process,
                                                          CONF),
                    svc['ExecStart'])
                self.assertEqual('nova_moves', svc['StateDirectory'])
                self.assertEqual('multi-user.target',
                                 unit['Install']['WantedBy'])
                self.assertEqual('/bin/kill -HUP $MAINPID',
                                 svc['ExecReload'])
                self.assertGreater(_seconds(svc['WatchdogSec']), 1)
                stop = _seconds(svc['TimeoutStopSec'])
                # Long enough for the in-flight handlers (requests) to
                # drain.
                self.assertGreater(stop, api_graceful if process == 'api'
                                   else graceful)

    # The sandbox every unit runs in (systemd.exec(5)).
    HARDENING = {
        'ProtectSystem': 'strict', 'ProtectHome': 'true',
        'PrivateTmp': 'true', 'PrivateDevices': 'true',
        'NoNewPrivileges': 'true', 'CapabilityBoundingSet': '',
        'AmbientCapabilities': '', 'UMask': '0027',
        'StateDirectoryMode': '0750', 'LogsDirectory': 'nova_moves',
        'LogsDirectoryMode': '0750',
        'ReadWritePaths': '-/var/lib/nova_moves -/var/log/nova_moves',
        'SystemCallArchitectures': 'native', 'RestrictSUIDSGID': 'true',
        'RestrictNamespaces': 'true', 'ProtectKernelTunables': 'true',
        'ProtectKernelModules': 'true', 'ProtectControlGroups': 'true',
        'LockPersonality': 'true',
        'SystemCallFilter': '@system-service'}

    def test_hardening(self):
        for process in PROCESSES:
            svc = read_unit('nova-moves-%s.service' % process)['Service']
            with self.subTest(process):
                for key, value in self.HARDENING.items():
                    self.assertEqual(value, svc.get(key), (process, key))

    def test_systemd_analyze_security(self):
        # Offline: the unit files alone, ExecStart pointed at /bin/true.
        analyze = shutil.which('systemd-analyze')
        if analyze is None:
            self.skipTest('systemd-analyze not installed')
        tmp = self.useFixture(fixtures.TempDir()).path
        for process in PROCESSES:
            name = 'nova-moves-%s.service' % process
            path = os.path.join(tmp, name)
            shutil.copy(os.path.join(UNIT_DIR, name), path)
            subprocess.run(['sed', '-i', 's#%s#/bin/true #' % BIN_DIR, path],
                           check=True)
            proc = subprocess.run(
                [analyze, 'security', '--offline=true', '--no-pager', path],
                capture_output=True, text=True, timeout=120)
            if 'offline' in proc.stderr and proc.returncode:
                self.skipTest('systemd-analyze has no --offline')
            match = re.search(r'Overall exposure level for \S+: ([0-9.]+)',
                              proc.stdout)
            self.assertIsNotNone(match, proc.stdout + proc.stderr)
            # 10 is no sandbox at all; these units scored 8.5 before.
            self.assertLessEqual(float(match.group(1)), 2.0, proc.stdout)

    def test_console_scripts_exist(self):
        with open(os.path.join(ROOT, 'setup.cfg')) as f:
            setup_cfg = f.read()
        for process in PROCESSES:
            self.assertIn('nova-moves-%s = nova_moves.cmd.%s:main'
                          % (process, process), setup_cfg)

    def test_systemd_analyze_verify(self):
        analyze = shutil.which('systemd-analyze')
        if analyze is None:
            self.skipTest('systemd-analyze not installed')
        tmp = tempfile.mkdtemp(prefix='nm-units-')
        self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        # verify wants ExecStart to exist: point it at stand-in scripts.
        bin_dir = os.path.join(tmp, 'bin') + '/'
        os.mkdir(bin_dir)
        units = []
        for process in PROCESSES:
            script = os.path.join(bin_dir, 'nova-moves-' + process)
            with open(script, 'w') as f:
                f.write('#!/bin/sh\n')
            os.chmod(script, 0o755)
            name = 'nova-moves-%s.service' % process
            with open(os.path.join(UNIT_DIR, name)) as f:
                text = f.read().replace(BIN_DIR, bin_dir)
            units.append(os.path.join(tmp, name))
            with open(units[-1], 'w') as f:
                f.write(text)
        proc = subprocess.run([analyze, 'verify'] + units,
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(0, proc.returncode, proc.stdout + proc.stderr)
        self.assertNotIn('nova-moves', proc.stderr)


class NotifyProtocolTest(testtools.TestCase):
    """Type=notify only works if the process sends READY=1 once it serves
    and exits cleanly on KillSignal: run nova-moves-api as systemd would."""

    def _notify_socket(self):
        """A work dir with the datagram socket systemd would listen on."""
        tmp = tempfile.mkdtemp(prefix='nm-notify-')
        self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        notify_path = os.path.join(tmp, 'notify')
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.addCleanup(sock.close)
        sock.bind(notify_path)
        return tmp, notify_path, sock

    def _start(self, binary, conf, **env):
        env = dict(os.environ, PYTHONPATH=ROOT, **env)
        env.pop('WATCHDOG_PID', None)
        proc = subprocess.Popen(
            [sys.executable, '-c',
             'import sys; sys.argv[0] = "nova-moves-%s"; '
             'from nova_moves.cmd.%s import main; main()' % (binary, binary),
             '--config-file', conf],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())
        return proc

    def test_api_notifies_ready_and_stops_on_sigterm(self):
        tmp, notify_path, sock = self._notify_socket()
        with socket.socket() as probe:
            probe.bind(('127.0.0.1', 0))
            port = probe.getsockname()[1]
        conf = os.path.join(tmp, 'nova_moves.conf')
        with open(conf, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\n'
                    '[api]\nlisten = 127.0.0.1\nport = %d\n' % (tmp, port))
        # WatchdogSec=1: WATCHDOG=1 at least every half second or so.
        proc = self._start('api', conf, NOTIFY_SOCKET=notify_path,
                           WATCHDOG_USEC='1000000')
        sock.settimeout(60)
        states = set()
        while not {'READY=1', 'WATCHDOG=1'} <= states:
            states.update(sock.recv(4096).decode().split('\n'))
        # Ready means serving.
        with socket.create_connection(('127.0.0.1', port), timeout=10) as c:
            c.sendall(b'GET / HTTP/1.0\r\n\r\n')
            self.assertTrue(c.recv(64).startswith(b'HTTP/1.'))

        stop = _seconds(read_unit('nova-moves-api.service')['Service'][
            'TimeoutStopSec'])
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=stop)
        self.assertEqual(0, proc.returncode, proc.stdout.read())
        self.assertLess(time.monotonic() - started, stop)
        sock.settimeout(0)
        while 'STOPPING=1' not in states:
            states.update(sock.recv(4096).decode().split('\n'))

    def test_compute_without_conductor_never_claims_ready(self):
        tmp, notify_path, sock = self._notify_socket()
        conf = os.path.join(tmp, 'nova_moves.conf')
        # fake:// with no conductor: every call to it times out.
        with open(conf, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\ntransport_url = fake://\n'
                    'rpc_response_timeout = 1\nhost = lonely\n'
                    '[coordination]\nbackend_url = file://%s/coord\n'
                    % (tmp, tmp))
        proc = self._start('compute', conf, NOTIFY_SOCKET=notify_path)
        # A few one-second call timeouts and retries; on a loaded machine
        # the interpreter alone may take longer than that to start.
        os.set_blocking(proc.stdout.fileno(), False)
        output = b''
        deadline = time.monotonic() + 60
        while (b'conductor not answering yet' not in output
               and time.monotonic() < deadline and proc.poll() is None):
            output += proc.stdout.read() or b''
            time.sleep(0.2)
        time.sleep(2)
        self.assertIsNone(proc.poll())
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        output = (output + (proc.stdout.read() or b'')).decode()
        self.assertEqual(0, proc.returncode, output)
        self.assertIn('conductor not answering yet', output)
        sock.settimeout(0)
        states = []
        try:
            while True:
                states.extend(sock.recv(4096).decode().split('\n'))
        except BlockingIOError:
            pass
        self.assertNotIn('READY=1', states)
