"""etc/systemd/*.service: what the lab-node units promise, checked
against the units themselves and systemd-analyze verify (when
available). Real processes speaking the sd_notify protocol:
tests/functional/test_standalone_processes.py."""
import configparser
import os
import re
import shutil
import subprocess
import tempfile

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
                         sorted(n for n in os.listdir(UNIT_DIR)
                                if n.endswith('.service')))

    def test_qemu_drop_in(self):
        # Guests outlive a restart of their agent (the QEMU driver).
        path = os.path.join(UNIT_DIR, 'nova-moves-compute.service.d',
                            'qemu.conf')
        with open(path) as f:
            text = f.read()
        self.assertIn('KillMode=process', text)
        self.assertIn('DeviceAllow=/dev/kvm rw', text)

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
