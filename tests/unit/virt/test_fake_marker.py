"""The fault-injection marker (<host>.operating) of slowed operations:
two that overlap on one host both run to their end (the second used to
fail with FileNotFoundError when the first removed the marker), and the
marker goes with the last of them."""
import os
import threading

import testtools

from nova_moves.virt import fake
from tests.unit import fixtures as nm_fixtures


class OperatingMarkerTest(testtools.TestCase):

    def test_overlapping_slowed_operations(self):
        self.useFixture(nm_fixtures.FakeHosts())
        driver = fake.FakeDriver('h1')
        driver.set_fault_injection([], {'spawn': 0.3, 'destroy': 0.1})
        errors, seen = [], []

        def run(op, delay):
            threading.Event().wait(delay)
            try:
                driver.operate(op)
            except Exception as exc:  # the old marker's FileNotFoundError
                errors.append(exc)

        threads = [threading.Thread(target=run, args=('spawn', 0)),
                   threading.Thread(target=run, args=('destroy', 0.1))]
        for thread in threads:
            thread.start()
        threading.Event().wait(0.15)
        seen.append(os.path.exists(driver._marker))
        for thread in threads:
            thread.join()
        self.assertEqual([], errors)
        self.assertEqual([True], seen)
        self.assertFalse(os.path.exists(driver._marker))
