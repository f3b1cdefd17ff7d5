"""Cross-cell resize and cold migrate of real QEMU guests (doc/cells.md
"Cross-cell resize", virt/qemu/move_snapshot.py): two cells of one QEMU
host each (harness/cell_stack.py), so a move of a server out of cell1's
only host has to leave the cell. The source's disk goes through the
image store (one [image] store_path for both cells: the stack's shared
state_path), and the guest's own counter (``beat N``, N kept on its
disk; tests/functional/qemu_base.py) shows that the destination booted
that disk."""
import json
import os
import shutil
import tempfile

import sqlalchemy as sa
import testtools

from nova_moves.harness import cell_stack
from nova_moves.harness import guests as qemu_guests
from nova_moves import image_store
from tests.functional import cells_base
from tests.functional import qemu_base

RULE = 'compute:servers:resize:cross_cell'
SOURCE, DEST = 'cell1-qemu1', 'cell2-qemu1'
HOSTS = (SOURCE, DEST)


class CrossCellQemuTest(cells_base.CellReads, testtools.TestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        files, missing = qemu_base.guest_files()
        if missing:
            if os.environ.get('CI'):
                raise RuntimeError(missing)  # CI must run real guests
            raise cls.skipException(missing)
        cls.policy_dir = tempfile.mkdtemp(prefix='nm-qcc-policy-')
        policy_file = os.path.join(cls.policy_dir, 'policy.json')
        with open(policy_file, 'w') as f:
            json.dump({RULE: 'rule:context_is_admin'}, f)
        # Short: the QMP socket's path must fit a unix socket's 108 bytes.
        cls.instances_root = tempfile.mkdtemp(prefix='nmq-', dir='/tmp')
        cls.instances_path = os.path.join(cls.instances_root, '{host}')
        cls.stack = cell_stack.CellsStack(
            cells=2, computes=[[{'name': host,
                                 'compute': {'driver': 'qemu'}}]
                               for host in HOSTS],
            keep_workdir=bool(os.environ.get('NOVA_MOVES_KEEP_LOGS')),
            extra_conf={'quota': {'instances': -1, 'cores': -1, 'ram': -1},
                        'oslo_policy': {'policy_file': policy_file},
                        'qemu': {'instances_path': cls.instances_path,
                                 'accel': 'tcg', 'shutdown_timeout': 10}})
        try:
            cells_base.start(cls.stack)
            cls.image_id = qemu_base.import_image(cls.stack, 'test-guest',
                                                  *files)
        except BaseException:
            cls.stop_cells()
            raise
        cls.admin = cls.stack.client()
        cls.small = cls.admin.create_flavor('small', 1, 256, 1)
        cls.bigger = cls.admin.create_flavor('bigger', 1, 384, 2)
        cls.engines = {cell: sa.create_engine(url) for cell, url in
                       cls.stack.cell_database_urls.items()}
        # Both cells' computes read this one store.
        cls.store = image_store.ImageStore(
            os.path.join(cls.stack.workdir, 'state', 'images'))

    @classmethod
    def stop_cells(cls):
        try:
            super().stop_cells()
        finally:
            qemu_guests.stop_all(cls.instances_path, HOSTS)
            shutil.rmtree(cls.instances_root, ignore_errors=True)
            shutil.rmtree(cls.policy_dir, ignore_errors=True)

    # -- helpers ----------------------------------------------------------
    BOOT_HOST = SOURCE

    def boot(self, name):
        return super().boot(name, image_ref=self.image_id, timeout=120)

    def console(self, uuid, host):
        return qemu_guests.console(self.instances_path, host, uuid)

    def wait_for_beat(self, uuid, host, above=0, timeout=90):
        return self.admin.wait_for(
            lambda: (lambda b: b[-1] if b and b[-1][0] > above else None)(
                qemu_guests.beats(self.console(uuid, host))),
            timeout=timeout, interval=0.5,
            what='a beat above %d from %s on %s' % (above, uuid, host))

    def has_copy(self, uuid, host):
        return os.path.exists(os.path.join(qemu_guests.host_dir(
            self.instances_path, host), uuid))

    def memory_mb(self, uuid, host):
        """-m of the QEMU process running the server on ``host``."""
        pidfile = os.path.join(qemu_guests.host_dir(
            self.instances_path, host), uuid, 'qemu.pid')
        with open(pidfile) as f:
            with open('/proc/%s/cmdline' % f.read().strip(), 'rb') as c:
                argv = c.read().decode().split('\0')
        return int(argv[argv.index('-m') + 1])

    def assert_one_process(self, uuid):
        self.assertEqual(1, qemu_guests.qemu_processes().get(uuid, 0))

    def moved(self, uuid, body, version=None):
        """The move done (VERIFY_RESIZE in cell2); its snapshot's id."""
        self.admin.action(uuid, body, version=version, expect=202)
        server = self.admin.wait_for_status(uuid, ('VERIFY_RESIZE',
                                                   'ERROR'), timeout=150)
        self.assertEqual(('VERIFY_RESIZE', DEST),
                         (server['status'], server['OS-EXT-SRV-ATTR:host']))
        [migration] = self.migrations('cell2', uuid)
        self.assertTrue(migration['cross_cell_move'])
        image_id = image_store.move_snapshot_id(migration['uuid'])
        self.assertEqual('cross-cell-%s' % migration['uuid'],
                         self.store.get(image_id)['name'])
        return image_id

    def assert_snapshot_gone(self, image_id):
        self.assertNotIn(image_id, [i['id'] for i in self.store.list()])

    # -- tests ------------------------------------------------------------
    def test_resize_to_another_cell_and_confirm(self):
        uuid = self.boot('qcc-confirm')
        before = self.wait_for_beat(uuid, SOURCE, above=2)
        image_id = self.moved(uuid, {'resize': {
            'flavorRef': self.bigger['id']}})
        # A new boot in cell2 from the snapshot of the disk: N goes on;
        # the source's copy is kept, powered off, for a revert.
        first = self.wait_for_beat(uuid, DEST)
        self.assertGreater(first[0], before[0])
        self.assert_one_process(uuid)
        self.assertEqual(self.bigger['ram'], self.memory_mb(uuid, DEST))
        self.assertTrue(self.has_copy(uuid, SOURCE))
        self.admin.action(uuid, {'confirmResize': None}, expect=204)
        server = self.admin.wait_for_status(uuid, ('ACTIVE', 'ERROR'),
                                            timeout=60)
        self.assertEqual(('ACTIVE', DEST),
                         (server['status'], server['OS-EXT-SRV-ATTR:host']))
        self.admin.wait_for(lambda: not self.has_copy(uuid, SOURCE),
                            timeout=30, what='the source copy removed')
        self.assert_snapshot_gone(image_id)
        self.assert_one_process(uuid)
        self.wait_for_beat(uuid, DEST, above=first[0])

    def test_migrate_to_another_cell_and_revert(self):
        uuid = self.boot('qcc-revert')
        before = self.wait_for_beat(uuid, SOURCE, above=2)
        image_id = self.moved(uuid, {'migrate': {'host': DEST}},
                              version='2.56')
        self.assertGreater(self.wait_for_beat(uuid, DEST)[0], before[0])
        self.admin.action(uuid, {'revertResize': None}, expect=202)
        server = self.admin.wait_for_status(uuid, ('ACTIVE', 'ERROR'),
                                            timeout=90)
        self.assertEqual(('ACTIVE', SOURCE),
                         (server['status'], server['OS-EXT-SRV-ATTR:host']))
        # cell1's guest boots again from the disk it kept; cell2's went.
        self.wait_for_beat(uuid, SOURCE, above=before[0])
        self.assertEqual(self.small['ram'], self.memory_mb(uuid, SOURCE))
        self.assertFalse(self.has_copy(uuid, DEST))
        self.assert_snapshot_gone(image_id)
        self.assert_one_process(uuid)
