"""The console scripts on their own, without a stack: each one's
--version, and the systemd notify protocol of nova-moves-api and
nova-moves-compute run as systemd would (READY=1 once serving, WATCHDOG
pings, STOPPING=1 and exit 0 on SIGTERM; no READY=1 without a
conductor). They start real processes, some seconds each, so they run
with the functional tests; the units' static checks stay in
tests/unit/test_systemd_units.py, the other conventions in
tests/unit/test_project_conventions.py."""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid

import testtools

from nova_moves import version
from tests.unit import test_project_conventions as conventions
from tests.unit import test_systemd_units as units

ROOT = units.ROOT
BINDIR = conventions.BINDIR
read_unit = units.read_unit
_seconds = units._seconds


class VersionTest(testtools.TestCase):

    def test_every_console_script_prints_the_pbr_version(self):
        expected = version.version_info.release_string()
        for script in conventions._console_scripts():
            path = os.path.join(BINDIR, script)
            if not os.path.exists(path):
                self.skipTest('%s not installed in this venv' % script)
            proc = subprocess.run([path, '--version'], capture_output=True,
                                  text=True, timeout=60)
            self.assertEqual(0, proc.returncode, script + proc.stderr)
            # argparse prints to stdout (3.10+), oslo.config to stdout too.
            self.assertEqual(expected, (proc.stdout + proc.stderr).strip(),
                             script)


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
                    '[api]\nlisten = 127.0.0.1\nport = %d\n'
                    'auth_strategy = noauth\n' % (tmp, port))
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
        # A vhost of the real broker where no conductor listens: every
        # call to it times out.
        vhost = 'nm-lonely-%s' % uuid.uuid4().hex[:8]
        subprocess.run(['rabbitmqctl', '-q', 'add_vhost', vhost], check=True)
        self.addCleanup(subprocess.run, ['rabbitmqctl', '-q', 'delete_vhost',
                                         vhost])
        subprocess.run(['rabbitmqctl', '-q', 'set_permissions', '-p', vhost,
                        'guest', '.*', '.*', '.*'], check=True)
        with open(conf, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\n'
                    'transport_url = rabbit://guest:guest@127.0.0.1:5672/%s\n'
                    'rpc_response_timeout = 1\nhost = lonely\n'
                    '[coordination]\nbackend_url = file://%s/coord\n'
                    % (tmp, vhost, tmp))
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
