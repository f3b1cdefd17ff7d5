"""tests/functional/private_backend.py without processes: the order in
which backends and the stack start and stop, and what is stopped when a
class's set-up fails part way."""
import unittest

import testtools

from tests.functional import private_backend


class _Stack(testtools.TestCase):
    """Stands in for StackTestCase: records, and fails when told to."""

    fail_stack = False
    events = None

    @classmethod
    def setUpClass(cls):
        if cls.fail_stack:
            raise RuntimeError('stack did not start')
        cls.events.append('stack up')

    @classmethod
    def tearDownClass(cls):
        cls.events.append('stack down')


def _mixin(name, fail=False, skip=False):
    class Mixin(private_backend.PrivateBackend):
        @classmethod
        def setUpClass(cls):
            def start():
                if fail:
                    raise RuntimeError('%s did not start' % name)
                cls.events.append('%s up' % name)
                return name

            cls.start_backend(
                name, start,
                lambda backend, failed: cls.events.append(
                    '%s down%s' % (backend, ' (failed)' if failed else '')),
                unavailable=skip and '%s unavailable' % name)
            super().setUpClass()
    return Mixin


class PrivateBackendTest(testtools.TestCase):

    def make(self, *mixins, fail_stack=False, ready=None):
        events = []

        class Case(*mixins, _Stack):
            pass
        Case.events = events
        Case.fail_stack = fail_stack
        if ready:
            Case.stack_ready = classmethod(lambda cls: ready())
        return Case, events

    def test_backends_around_the_stack(self):
        case, events = self.make(_mixin('broker'), _mixin('db'))
        case.setUpClass()
        self.assertEqual(('broker', 'db'), (case.broker, case.db))
        case.tearDownClass()
        self.assertEqual(['broker up', 'db up', 'stack up', 'stack down',
                          'db down', 'broker down'], events)

    def test_stack_failure_stops_the_backends(self):
        case, events = self.make(_mixin('broker'), _mixin('db'),
                                 fail_stack=True)
        self.assertRaises(RuntimeError, case.setUpClass)
        self.assertEqual(['broker up', 'db up', 'db down (failed)',
                          'broker down (failed)'], events)

    def test_second_backend_failing_stops_the_first(self):
        case, events = self.make(_mixin('broker'), _mixin('db', fail=True))
        self.assertRaises(RuntimeError, case.setUpClass)
        self.assertEqual(['broker up', 'broker down (failed)'], events)

    def test_unavailable_backend_skips_and_stops_the_others(self):
        case, events = self.make(_mixin('broker'), _mixin('db', skip=True))
        self.assertRaises(unittest.SkipTest, case.setUpClass)
        self.assertEqual(['broker up', 'broker down (failed)'], events)

    def test_stack_ready_failure_stops_stack_and_backends(self):
        def ready():
            raise RuntimeError('catalog refused')
        case, events = self.make(_mixin('keystone'), ready=ready)
        self.assertRaises(RuntimeError, case.setUpClass)
        self.assertEqual(['keystone up', 'stack up', 'stack down',
                          'keystone down (failed)'], events)

    def test_each_class_stops_only_its_own(self):
        first, events = self.make(_mixin('broker'))
        second, second_events = self.make(_mixin('broker'))
        first.setUpClass()
        second.setUpClass()
        first.tearDownClass()
        self.assertEqual(['broker up', 'stack up', 'stack down',
                          'broker down'], events)
        self.assertEqual(['broker up', 'stack up'], second_events)
        second.tearDownClass()
