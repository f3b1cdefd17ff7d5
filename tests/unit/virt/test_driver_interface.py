"""Every driver implements the whole interface (virt/driver.py), and the
compute's handlers call nothing a driver lacks."""
import ast
import inspect
import os

import testtools

from nova_moves.virt import driver
from nova_moves.virt import fake
from nova_moves.virt.qemu import driver as qemu_driver

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def _abstract():
    names = set()
    for name, member in inspect.getmembers(driver.ComputeDriver,
                                           inspect.isfunction):
        source = inspect.getsource(member)
        if 'raise NotImplementedError' in source:
            names.add(name)
    return names


class DriverInterfaceTest(testtools.TestCase):

    def test_every_driver_implements_the_interface(self):
        abstract = _abstract()
        self.assertIn('spawn', abstract)
        for cls in (fake.FakeDriver, qemu_driver.QemuDriver):
            for name in abstract:
                self.assertIsNot(
                    getattr(cls, name), getattr(driver.ComputeDriver, name),
                    '%s does not implement %s' % (cls.__name__, name))

    def test_handlers_call_only_the_interface(self):
        offered = {n for n, _ in inspect.getmembers(driver.ComputeDriver)}
        compute = os.path.join(ROOT, 'nova_moves', 'compute')
        called = set()
        for name in os.listdir(compute):
            if not name.endswith('.py'):
                continue
            with open(os.path.join(compute, name)) as f:
                tree = ast.parse(f.read())
            for node in ast.walk(tree):
                # self.driver.X / driver.X
                if isinstance(node, ast.Attribute) and isinstance(
                        node.value, ast.Attribute) and \
                        node.value.attr == 'driver':
                    called.add(node.attr)
        self.assertTrue(called)
        self.assertEqual(set(), called - offered)

    def test_loaded_by_config(self):
        self.assertEqual({'fake', 'qemu'}, set(driver.DRIVERS))

    def test_progress_columns(self):
        values = driver.progress((100, 10), 0.5)
        self.assertEqual({'memory_total': 100, 'memory_processed': 50,
                          'memory_remaining': 50, 'disk_total': 10,
                          'disk_processed': 5, 'disk_remaining': 5},
                         values)


class DowntimeStepsTest(testtools.TestCase):

    def test_nova_libvirt_steps(self):
        from nova_moves import conf
        from nova_moves.virt.qemu import migration
        conf.CONF.set_override('live_migration_downtime', 400, group='qemu')
        self.addCleanup(conf.CONF.clear_override, 'live_migration_downtime',
                        group='qemu')
        steps = migration.downtime_steps(2.0)
        # Nova's default steps (10) and delay (75 s per GiB).
        self.assertEqual((0, 40), steps[0])
        self.assertEqual((150, 76), steps[1])
        self.assertEqual((1500, 400), steps[-1])
        self.assertEqual(11, len(steps))
