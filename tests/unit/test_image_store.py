"""The local image store (nova_moves/image_store.py) on a temporary
directory with the real qemu-img: what an import writes, what a failed
one leaves (nothing), snapshots, delete, verify, and that no half-built
image is ever listed."""
import json
import os
import shutil
import subprocess
import uuid

import fixtures
import testtools

from nova_moves import exception
from nova_moves import image_store
from tests.unit import fixtures as nm_fixtures

HAVE_QEMU_IMG = shutil.which(image_store.QEMU_IMG) is not None
NEEDS_QEMU_IMG = testtools.skipUnless(
    HAVE_QEMU_IMG, 'qemu-img is not installed (bindep: qemu-utils); the '
    'store converts and checks disks with it')


def write(path, data):
    with open(path, 'wb') as f:
        f.write(data)
    return path


def qemu_img(*args):
    return subprocess.run(['qemu-img'] + list(args), check=True,
                          capture_output=True, text=True).stdout


class StoreFixture(fixtures.Fixture):
    """A store in a temporary directory ([image] store_path too) and a
    kernel, an initrd and a 10 MiB raw disk to import."""

    def _setUp(self):
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.path = os.path.join(self.tmp, 'store')
        self.useFixture(nm_fixtures.Override('store_path', self.path,
                                             'image'))
        self.store = image_store.ImageStore()
        self.kernel = write(os.path.join(self.tmp, 'vmlinuz'),
                            b'MZ' + os.urandom(4000))
        self.initrd = write(os.path.join(self.tmp, 'initrd.img'),
                            os.urandom(3000))
        self.raw = os.path.join(self.tmp, 'root.raw')
        if HAVE_QEMU_IMG:
            qemu_img('create', '-f', 'raw', self.raw, '10M')

    def entries(self):
        return sorted(os.listdir(self.path)) if os.path.exists(
            self.path) else []


@NEEDS_QEMU_IMG
class ImageStoreTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.f = self.useFixture(StoreFixture())
        self.store = self.f.store

    def test_import_without_disk(self):
        image = self.store.import_image('cirros', self.f.kernel,
                                        self.f.initrd, cmdline='dirty=10')
        self.assertEqual(str(uuid.UUID(image['id'])), image['id'])
        self.assertEqual(self.f.path, os.path.dirname(os.path.dirname(
            self.store.paths(image['id'])['disk'])))
        paths = self.store.paths(image['id'])
        with open(paths['kernel'], 'rb') as f, \
                open(self.f.kernel, 'rb') as g:
            self.assertEqual(g.read(), f.read())
        info = json.loads(qemu_img('info', '--output=json', paths['disk']))
        self.assertEqual('qcow2', info['format'])
        self.assertEqual(image_store.EMPTY_DISK_BYTES, info['virtual-size'])
        self.assertEqual(
            ('cirros', 'active', 'dirty=10', 'qcow2', 'bare', 'public',
             None, 0, 0, {}, image_store.EMPTY_DISK_BYTES,
             'kernel', 'initrd', 'disk'),
            tuple(image[k] for k in (
                'name', 'status', 'cmdline', 'disk_format',
                'container_format', 'visibility', 'owner', 'min_disk',
                'min_ram', 'properties', 'virtual_size', 'kernel',
                'initrd', 'disk')))
        self.assertEqual(sum(os.path.getsize(p) for p in paths.values()),
                         image['size'])
        self.assertRegex(image['created_at'],
                         r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$')
        # image.json is the record get() and list() return.
        with open(os.path.join(self.f.path, image['id'],
                               'image.json')) as f:
            self.assertEqual(image, json.load(f))
        self.assertEqual(image, self.store.get(image['id']))
        self.assertEqual([image], self.store.list())
        self.assertEqual([image['id']], self.f.entries())

    def test_import_converts_the_disk(self):
        image = self.store.import_image(
            'root', self.f.kernel, self.f.initrd, disk=self.f.raw,
            image_id='0D8A3C1E-0000-4000-8000-000000000001',
            visibility='private', owner='p1')
        self.assertEqual('0d8a3c1e-0000-4000-8000-000000000001',
                         image['id'])
        self.assertEqual(('private', 'p1', 10 * 1024 * 1024),
                         (image['visibility'], image['owner'],
                          image['virtual_size']))
        info = json.loads(qemu_img('info', '--output=json',
                                   self.store.paths(image['id'])['disk']))
        self.assertEqual('qcow2', info['format'])
        self.assertEqual(image, self.store.verify(image['id']))

    def test_bad_input_names_the_file_and_leaves_nothing(self):
        empty = write(os.path.join(self.f.tmp, 'empty'), b'')
        qcow = os.path.join(self.f.tmp, 'x.qcow2')
        qemu_img('create', '-f', 'qcow2', qcow, '1M')
        missing = os.path.join(self.f.tmp, 'missing')
        cases = [
            ((missing, self.f.initrd), {}, 'kernel file %s does not exist'
             % missing),
            ((self.f.kernel, empty), {}, 'initrd file %s is empty' % empty),
            ((self.f.kernel, self.f.tmp), {},
             'initrd file %s is not a regular file' % self.f.tmp),
            ((qcow, self.f.initrd), {},
             'kernel file %s is a qcow2 disk image' % qcow),
            ((self.f.kernel, self.f.initrd), {'disk': missing},
             'disk file %s does not exist' % missing),
            ((self.f.kernel, self.f.initrd),
             {'disk': self.f.kernel, 'disk_format': 'qcow2'},
             'disk file %s: ' % self.f.kernel),
            ((self.f.kernel, self.f.initrd), {'image_id': 'not-a-uuid'},
             "image id 'not-a-uuid' is not a UUID"),
            ((self.f.kernel, self.f.initrd), {'visibility': 'shared'},
             'visibility'),
            ((self.f.kernel, self.f.initrd), {'cmdline': 'a\nb'},
             'command line'),
        ]
        for args, kwargs, needle in cases:
            exc = self.assertRaises(ValueError, self.store.import_image,
                                    'bad', *args, **kwargs)
            self.assertIsInstance(exc, exception.ImageInvalid)
            self.assertIn(needle, str(exc))
            self.assertEqual(400, exc.code)
        self.assertEqual([], self.store.list())
        self.assertEqual([], [e for e in self.f.entries()])

    def test_unreadable_file(self):
        if os.geteuid() == 0:
            self.skipTest('root reads a mode 000 file')
        os.chmod(self.f.kernel, 0)
        exc = self.assertRaises(exception.ImageInvalid,
                                self.store.import_image, 'bad',
                                self.f.kernel, self.f.initrd)
        self.assertIn('kernel file %s cannot be read' % self.f.kernel,
                      str(exc))

    def test_failed_convert_leaves_nothing(self):
        self.useFixture(fixtures.MockPatch(
            'nova_moves.image_store._convert',
            side_effect=exception.ImageStoreError(reason='disk full')))
        self.assertRaises(exception.ImageStoreError,
                          self.store.import_image, 'root', self.f.kernel,
                          self.f.initrd, disk=self.f.raw)
        self.assertEqual([], self.f.entries())

    def test_same_id_twice(self):
        image = self.store.import_image('a', self.f.kernel, self.f.initrd)
        exc = self.assertRaises(exception.ImageExists,
                                self.store.import_image, 'b', self.f.kernel,
                                self.f.initrd, image_id=image['id'])
        self.assertEqual(409, exc.code)
        self.assertEqual(['a'], [i['name'] for i in self.store.list()])

    def test_half_built_and_foreign_directories_are_not_listed(self):
        image = self.store.import_image('a', self.f.kernel, self.f.initrd)
        # What an import that died in the middle leaves, and a directory
        # whose record is damaged.
        os.mkdir(os.path.join(self.f.path, '.building-x-y'))
        write(os.path.join(self.f.path, '.building-x-y', 'image.json'),
              b'{}')
        os.mkdir(os.path.join(self.f.path, str(uuid.uuid4())))
        broken = os.path.join(self.f.path, str(uuid.uuid4()))
        os.mkdir(broken)
        write(os.path.join(broken, 'image.json'), b'{"id": ')
        self.assertEqual([image['id']],
                         [i['id'] for i in self.store.list()])
        self.assertRaises(exception.ImageCorrupt, self.store.get,
                          os.path.basename(broken))

    def test_list_order_and_missing_store(self):
        self.assertEqual([], image_store.ImageStore(
            os.path.join(self.f.tmp, 'nowhere')).list())
        b = self.store.import_image('b', self.f.kernel, self.f.initrd)
        a = self.store.import_image('a', self.f.kernel, self.f.initrd)
        expected = sorted([a, b], key=lambda i: (i['created_at'],
                                                 i['name']))
        self.assertEqual(expected, self.store.list())

    def test_unknown_ids(self):
        for bad in ('../..', 'x', str(uuid.uuid4())):
            for call in (self.store.get, self.store.paths,
                         self.store.verify, self.store.delete):
                exc = self.assertRaises(exception.ImageNotFound, call, bad)
                self.assertEqual(404, exc.code)
                self.assertIn(bad, str(exc))

    def test_snapshot(self):
        base = self.store.import_image('base', self.f.kernel, self.f.initrd,
                                       cmdline='console=ttyS0')
        # A server's disk: a qcow2 overlay on the base's disk.
        overlay = os.path.join(self.f.tmp, 'server.qcow2')
        qemu_img('create', '-f', 'qcow2', '-F', 'qcow2', '-b',
                 self.store.paths(base['id'])['disk'], overlay)
        snap = self.store.snapshot('vm-shelved', overlay, base['id'],
                                   owner='p1',
                                   properties={'instance_uuid': 'u1'})
        self.assertEqual(
            ('private', 'p1', 'console=ttyS0', image_store.EMPTY_DISK_BYTES,
             {'image_type': 'snapshot', 'base_image_ref': base['id'],
              'instance_uuid': 'u1'}),
            (snap['visibility'], snap['owner'], snap['cmdline'],
             snap['virtual_size'], snap['properties']))
        info = json.loads(qemu_img('info', '--output=json',
                                   self.store.paths(snap['id'])['disk']))
        self.assertNotIn('backing-filename', info)  # flattened
        self.store.verify(snap['id'])
        # It outlives its base.
        self.store.delete(base['id'])
        self.assertEqual([snap['id']], [i['id'] for i in self.store.list()])
        self.store.verify(snap['id'])
        self.assertRaises(exception.ImageNotFound, self.store.snapshot,
                          'x', overlay, base['id'])

    def test_delete(self):
        image = self.store.import_image('a', self.f.kernel, self.f.initrd)
        self.store.delete(image['id'])
        self.assertEqual([], self.f.entries())
        self.assertRaises(exception.ImageNotFound, self.store.delete,
                          image['id'])

    def test_verify_finds_damage(self):
        image = self.store.import_image('a', self.f.kernel, self.f.initrd,
                                        disk=self.f.raw)
        paths = self.store.paths(image['id'])
        os.unlink(paths['initrd'])
        exc = self.assertRaises(exception.ImageCorrupt, self.store.verify,
                                image['id'])
        self.assertIn('initrd %s' % paths['initrd'], str(exc))
        write(paths['initrd'], b'x')
        with open(paths['disk'], 'r+b') as f:
            f.write(b'\0' * 512)  # the qcow2 header
        exc = self.assertRaises(exception.ImageCorrupt, self.store.verify,
                                image['id'])
        self.assertIn(paths['disk'], str(exc))

    def test_verify_refuses_a_backing_file(self):
        image = self.store.import_image('a', self.f.kernel, self.f.initrd)
        disk = self.store.paths(image['id'])['disk']
        other = os.path.join(self.f.tmp, 'other.qcow2')
        qemu_img('create', '-f', 'qcow2', other, '64M')
        qemu_img('rebase', '-u', '-f', 'qcow2', '-F', 'qcow2', '-b', other,
                 disk)
        exc = self.assertRaises(exception.ImageCorrupt, self.store.verify,
                                image['id'])
        self.assertIn('backing file', str(exc))


class WithoutQemuImgTest(testtools.TestCase):

    def test_missing_qemu_img_is_a_clear_error(self):
        f = self.useFixture(StoreFixture())
        self.useFixture(fixtures.MockPatchObject(
            image_store, 'QEMU_IMG', 'qemu-img-not-installed'))
        exc = self.assertRaises(exception.ImageStoreError,
                                f.store.import_image, 'a', f.kernel,
                                f.initrd)
        self.assertIn('qemu-img-not-installed is not installed', str(exc))
        self.assertEqual([], f.entries())
