"""tools/test-guest/init, the test guest's PID 1 (doc/test-guest.md): its
counter, command line and dirtying functions, sourced with TESTGUEST_LIB=1
into /bin/sh (and busybox sh when installed, the shell the guest runs)
with files standing in for the disk. Booting it: the QEMU driver's
functional tests."""
import os
import shutil
import subprocess
import tempfile

import testtools

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
INIT = os.path.join(ROOT, 'tools', 'test-guest', 'init')
SHELLS = [['/bin/sh']]
if shutil.which('busybox'):
    SHELLS.append([shutil.which('busybox'), 'sh'])


class InitFunctionsTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)
        self.disk = os.path.join(self.tmp, 'disk')

    def sh(self, script, shell=None):
        """Run script after sourcing init; its stdout, stripped."""
        env = dict(os.environ, TESTGUEST_LIB='1')
        proc = subprocess.run(
            (shell or SHELLS[0]) + ['-c', '. "$0"; ' + script, INIT],
            capture_output=True, text=True, env=env, timeout=60,
            cwd=self.tmp)
        self.assertEqual(0, proc.returncode, proc.stderr)
        return proc.stdout.strip()

    def test_init_parses(self):
        for shell in SHELLS:
            proc = subprocess.run(shell + ['-n', INIT], capture_output=True,
                                  text=True)
            self.assertEqual(0, proc.returncode, (shell, proc.stderr))

    def test_blank_missing_or_foreign_disk_reads_zero(self):
        with open(self.disk, 'wb') as f:
            f.write(b'\0' * 1024 * 1024)
        self.assertEqual('0', self.sh('read_counter disk'))
        self.assertEqual('0', self.sh('read_counter nodisk'))
        for content in (b'beat 12abc\n', b'beat \n', b'hello 3\n',
                        os.urandom(512)):
            with open(self.disk, 'r+b') as f:
                f.write(content.ljust(512, b'\0'))
            self.assertEqual('0', self.sh('read_counter disk'), content)

    def test_counter_round_trip_keeps_the_rest_of_the_disk(self):
        for shell in SHELLS:
            with open(self.disk, 'wb') as f:
                f.write(b'\xff' * 4096)
            self.sh('write_counter disk 41; write_counter disk 1234567',
                    shell)
            self.assertEqual('1234567', self.sh('read_counter disk', shell))
            with open(self.disk, 'rb') as f:
                data = f.read()
            self.assertEqual(4096, len(data))
            self.assertEqual(b'beat 1234567\n'.ljust(512, b'\0'),
                             data[:512])
            self.assertEqual(b'\xff' * 3584, data[512:])

    def test_cmdline_dirty(self):
        for cmdline, mb in (('console=ttyS0 panic=-1', '0'),
                            ('console=ttyS0 panic=-1 dirty=10', '10'),
                            ('dirty=50 quiet', '50'),
                            ('dirty=', '0'), ('dirty=1x', '0'),
                            ('nodirty=5', '0')):
            self.assertEqual(mb, self.sh('cmdline_dirty "%s"' % cmdline),
                             cmdline)

    def test_uptime_centiseconds(self):
        for shell in SHELLS:
            for text, cs in (('23.41 40.02', '2341'), ('0.05 0.01', '5'),
                             ('1.09 1.00', '109'), ('10.00 9.99', '1000'),
                             ('12345.90 1.00', '1234590')):
                self.assertEqual(cs, self.sh('uptime_cs "%s"' % text,
                                             shell), (shell, text))

    def test_dirty_memory_non_zero_and_changing(self):
        dirty = os.path.join(self.tmp, 'dirty')
        self.sh('dirty_memory dirty 3 7')
        with open(dirty, 'rb') as f:
            first = f.read()
        self.assertEqual(3 * 1024 * 1024, len(first))
        self.assertNotIn(b'\0', first)
        self.sh('dirty_memory dirty 3 8')
        with open(dirty, 'rb') as f:
            second = f.read()
        self.assertEqual(len(first), len(second))
        # Every 4 KiB page changed.
        for off in range(0, len(first), 4096):
            self.assertNotEqual(first[off:off + 4096],
                                second[off:off + 4096], off)
        self.sh('dirty_memory dirty 0 9')
        with open(dirty, 'rb') as f:
            self.assertEqual(second, f.read())
