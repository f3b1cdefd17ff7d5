"""A stack whose computes run real guests ([compute] driver = qemu): the
bundled test guest (tools/build-test-guest.sh, built by
tools/test-setup.sh into .test-guest/) imported through
``nova-moves-manage image import`` as an operator would."""
import os
import shutil
import subprocess
import tempfile
import time

from nova_moves.harness import guests as qemu_guests
from nova_moves.harness import invariants
from nova_moves.harness import stack as nm_stack
from tests.functional import base

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
GUEST_DIR = os.environ.get('NOVA_MOVES_TEST_GUEST',
                           os.path.join(REPO, '.test-guest'))


def guest_files():
    """The test guest's kernel and initrd, or why they are missing."""
    kernel = os.path.join(GUEST_DIR, 'vmlinuz')
    initrd = os.path.join(GUEST_DIR, 'initrd.img')
    if not shutil.which('qemu-system-x86_64') or not shutil.which('qemu-img'):
        return None, 'QEMU is not installed (tools/test-setup.sh installs it)'
    if not (os.path.exists(kernel) and os.path.exists(initrd)):
        return None, 'no test guest in %s (tools/build-test-guest.sh)' % (
            GUEST_DIR)
    return (kernel, initrd), None


def import_image(stack, name, kernel, initrd, cmdline='', properties=None):
    """An image imported into ``stack``'s store; its id."""
    argv = [nm_stack._script('nova-moves-manage'), '--config-file',
            stack.config_path, 'image', 'import', name,
            '--kernel', kernel, '--initrd', initrd]
    if cmdline:
        argv += ['--cmdline', cmdline]
    for key, value in sorted((properties or {}).items()):
        argv += ['--property', '%s=%s' % (key, value)]
    out = subprocess.run(argv, check=True, capture_output=True,
                         text=True, timeout=120).stdout
    return out.strip().split()[-1]


class QemuStackTestCase(base.StackTestCase):
    HOSTS = ('qemu1', 'qemu2')
    SHUTDOWN_TIMEOUT = 10
    QEMU_CONF = {}

    @classmethod
    def setUpClass(cls):
        files, missing = guest_files()
        if missing:
            if os.environ.get('CI'):
                raise RuntimeError(missing)  # CI must run real guests
            raise cls.skipException(missing)
        # Short: the QMP socket's path must fit a unix socket's 108 bytes.
        cls.instances_root = tempfile.mkdtemp(prefix='nmq-', dir='/tmp')
        cls.instances_path = os.path.join(cls.instances_root, '{host}')
        qemu = dict({'instances_path': cls.instances_path,
                     'accel': 'tcg',
                     'shutdown_timeout': str(cls.SHUTDOWN_TIMEOUT)},
                    **cls.QEMU_CONF)
        cls.COMPUTES = [{'name': host, 'compute': {'driver': 'qemu'},
                         'conf': {'qemu': qemu}} for host in cls.HOSTS]
        try:
            super().setUpClass()
            cls.image_id = cls.import_image('test-guest', *files)
        except BaseException:
            # No tearDownClass after a failed setUpClass: the stack too.
            if 'stack' in cls.__dict__:
                cls.stack.stop()
            cls._cleanup_guests()
            raise

    @classmethod
    def import_image(cls, name, kernel, initrd, cmdline='',
                     properties=None):
        return import_image(cls.stack, name, kernel, initrd, cmdline,
                            properties)

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            cls._cleanup_guests()

    @classmethod
    def _cleanup_guests(cls):
        if getattr(cls, 'instances_root', None):
            qemu_guests.stop_all(cls.instances_path, cls.HOSTS)
            shutil.rmtree(cls.instances_root, ignore_errors=True)

    # -- the guests ---------------------------------------------------------
    def boot_guest(self, host=None, name='vm', flavor=None, image=None):
        flavor = flavor or self.flavor('guest', ram=256, disk=1)
        server = self.admin.boot(name, flavor['id'], host=host,
                                 image_ref=image or self.image_id,
                                 timeout=120)
        self.assertEqual('ACTIVE', server['status'], server)
        return server

    def console(self, server_id, host=None):
        host = host or self.admin.server(server_id)[
            'OS-EXT-SRV-ATTR:host']
        return qemu_guests.console(self.instances_path, host, server_id)

    def wait_for_beat(self, server_id, host, above=0, timeout=90):
        """The guest's newest beat N once N > ``above``."""
        deadline = time.monotonic() + timeout
        while True:
            beats = qemu_guests.beats(self.console(server_id, host))
            if beats and beats[-1][0] > above:
                return beats[-1]
            if time.monotonic() > deadline:
                self.fail('no beat above %d from %s on %s in %ss; console '
                          'ends: %r' % (above, server_id, host, timeout,
                                        self.console(server_id,
                                                     host)[-500:]))
            time.sleep(0.5)

    def assert_one_process(self, server_id):
        self.assertEqual(1, qemu_guests.qemu_processes().get(server_id, 0),
                         'QEMU processes running %s' % server_id)

    def assert_invariants(self, grace=10):
        deadline = time.monotonic() + grace
        while True:
            problems = invariants.check(
                self.admin, guests=qemu_guests.read_guests(
                    self.instances_path, self.HOSTS))
            if not problems or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        self.assertEqual([], problems)
