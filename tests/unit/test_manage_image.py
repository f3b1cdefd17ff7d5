"""nova-moves-manage image import/list/delete: run as the console script
runs it (a fresh interpreter, oslo.config's sub-command parsing, a
config file naming the store): the id printed, and bad input refused
with exit code 1, one line naming the problem, nothing in the store."""
import os
import subprocess
import sys

import testtools

from tests.unit import test_image_store

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
MAIN = ('import sys; from nova_moves.cmd import manage; '
        'sys.argv[0] = "nova-moves-manage"; manage.main()')


@test_image_store.NEEDS_QEMU_IMG
class ManageImageTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.f = self.useFixture(test_image_store.StoreFixture())
        self.config = os.path.join(self.f.tmp, 'nova_moves.conf')
        with open(self.config, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\n[image]\nstore_path = %s\n'
                    % (self.f.tmp, self.f.path))

    def manage(self, *args):
        env = dict(os.environ, PYTHONPATH=ROOT)
        return subprocess.run(
            [sys.executable, '-c', MAIN, '--config-file', self.config,
             'image'] + list(args), cwd=ROOT, env=env, capture_output=True,
            text=True, timeout=120)

    def assertRefused(self, proc, needle):
        self.assertEqual(1, proc.returncode, proc.stdout + proc.stderr)
        lines = proc.stderr.strip().splitlines()
        self.assertEqual(1, len(lines), proc.stderr)
        self.assertTrue(lines[0].startswith('nova-moves-manage image '),
                        lines[0])
        self.assertIn(needle, lines[0])

    def test_import_list_delete(self):
        proc = self.manage('import', 'cirros', '--kernel', self.f.kernel,
                           '--initrd', self.f.initrd, '--disk', self.f.raw,
                           '--cmdline', 'dirty=10', '--private', '--owner',
                           'p1')
        self.assertEqual(0, proc.returncode, proc.stderr)
        image_id = proc.stdout.strip()
        image = self.f.store.get(image_id)
        self.assertEqual(('cirros', 'dirty=10', 'private', 'p1'),
                         (image['name'], image['cmdline'],
                          image['visibility'], image['owner']))
        listed = self.manage('list')
        self.assertEqual(0, listed.returncode, listed.stderr)
        self.assertIn(image_id, listed.stdout)
        self.assertIn('cirros', listed.stdout)
        proc = self.manage('delete', image_id)
        self.assertEqual(0, proc.returncode, proc.stderr)
        self.assertEqual([], self.f.store.list())
        self.assertRefused(self.manage('delete', image_id),
                           'Image %s could not be found' % image_id)

    def test_bad_input(self):
        missing = os.path.join(self.f.tmp, 'missing')
        empty = os.path.join(self.f.tmp, 'empty')
        open(empty, 'w').close()
        base = ['import', 'bad', '--kernel', self.f.kernel,
                '--initrd', self.f.initrd]
        cases = [
            (['import', 'bad', '--kernel', missing, '--initrd',
              self.f.initrd], 'kernel file %s does not exist' % missing),
            (['import', 'bad', '--kernel', self.f.kernel, '--initrd',
              empty], 'initrd file %s is empty' % empty),
            (base + ['--disk', missing], 'disk file %s does not exist'
             % missing),
            (base + ['--disk', self.f.kernel, '--disk-format', 'qcow2'],
             'disk file %s' % self.f.kernel),
            (base + ['--id', 'nope'], "image id 'nope' is not a UUID"),
            (base + ['--private'], '--private image needs --owner'),
            (base + ['--property', 'novalue'], '--property takes KEY=VALUE'),
            (base + ['--property', 'hw_rescue_bus=nvme'],
             'hw_rescue_bus=nvme: Nova takes one of'),
            (base + ['--property', 'hw_rescue_device=tape'],
             'hw_rescue_device=tape'),
            (base + ['--property', 'name=x'], 'name is an image field'),
        ]
        for args, needle in cases:
            self.assertRefused(self.manage(*args), needle)
        self.assertEqual([], self.f.entries())

    def test_properties(self):
        proc = self.manage('import', 'rescue', '--kernel', self.f.kernel,
                           '--initrd', self.f.initrd, '--property',
                           'hw_rescue_bus=virtio', '--property',
                           'hw_rescue_device=disk', '--property',
                           'os_distro=debian')
        self.assertEqual(0, proc.returncode, proc.stderr)
        self.assertEqual({'hw_rescue_bus': 'virtio', 'hw_rescue_device':
                          'disk', 'os_distro': 'debian'},
                         self.f.store.get(proc.stdout.strip())['properties'])

    def test_same_id_twice(self):
        image_id = '5b0c7c1e-1d7e-4a59-9a43-1f6e3c1a9d10'
        base = ['import', 'a', '--kernel', self.f.kernel, '--initrd',
                self.f.initrd, '--id', image_id]
        self.assertEqual(0, self.manage(*base).returncode)
        self.assertRefused(self.manage(*base), 'already exists')
        self.assertEqual([image_id], self.f.entries())


class ManageImageHelpTest(testtools.TestCase):

    def test_listed_in_help(self):
        proc = subprocess.run(
            [sys.executable, '-c', MAIN, 'image', 'import', '--help'],
            cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT),
            capture_output=True, text=True, timeout=120)
        self.assertEqual(0, proc.returncode, proc.stderr)
        for option in ('--kernel', '--initrd', '--disk', '--cmdline',
                       '--id', '--private', '--owner', '--property',
                       'hw_rescue_bus'):
            self.assertIn(option, proc.stdout)
