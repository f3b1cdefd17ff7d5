"""etc/systemd/*.service: what the lab-node units promise, checked
against the units themselves, systemd-analyze verify (when available) and
a real nova-moves-api speaking the sd_notify protocol."""
import configparser
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import testtools

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
                stop = _seconds(svc['TimeoutStopSec'])
                if process == 'api':
                    # The API answers no RPC: it only closes its sockets.
                    self.assertGreater(stop, 0)
                else:
                    # Long enough for the in-flight handlers to drain.
                    self.assertGreater(stop, graceful)

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

    def test_api_notifies_ready_and_stops_on_sigterm(self):
        tmp = tempfile.mkdtemp(prefix='nm-notify-')
        self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        notify_path = os.path.join(tmp, 'notify')
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.addCleanup(sock.close)
        sock.bind(notify_path)
        with socket.socket() as probe:
            probe.bind(('127.0.0.1', 0))
            port = probe.getsockname()[1]
        conf = os.path.join(tmp, 'nova_moves.conf')
        with open(conf, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\n'
                    '[api]\nlisten = 127.0.0.1\nport = %d\n' % (tmp, port))
        env = dict(os.environ, NOTIFY_SOCKET=notify_path, PYTHONPATH=ROOT)
        proc = subprocess.Popen(
            [sys.executable, '-c',
             'import sys; sys.argv[0] = "nova-moves-api"; '
             'from nova_moves.cmd.api import main; main()',
             '--config-file', conf],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())

        sock.settimeout(60)
        message = sock.recv(4096).decode()
        self.assertIn('READY=1', message.split('\n'))
        # Ready means serving.
        with socket.create_connection(('127.0.0.1', port), timeout=10) as c:
            c.sendall(b'GET / HTTP/1.0\r\n\r\n')
            self.assertTrue(c.recv(64).startswith(b'HTTP/1.'))

        stop = _seconds(read_unit('nova-moves-api.service')['Service'][
            'TimeoutStopSec'])
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=stop)
        self.assertEqual(0, proc.returncode, proc.stderr.read())
        self.assertLess(time.monotonic() - started, stop)
