"""A guest that stopped on its own goes SHUTOFF with a fault; one being
acted on, or not on this host, is left to whoever acts on it."""
from unittest import mock

import testtools

from nova_moves.compute import base
from nova_moves.compute import guest_watch
from nova_moves import states


class _Driver:
    moves_disks = True

    def __init__(self, crashed):
        self._crashed = crashed

    def crashed(self):
        out, self._crashed = self._crashed, []
        return out


class GuestWatchTest(testtools.TestCase):

    def watch(self, instance, crashed=(('u1', 'its QEMU process exited'),)):
        conductor = mock.Mock()
        conductor.instance_get.return_value = instance
        watch = guest_watch.GuestWatch(base.Deps('h1', _Driver(
            list(crashed)), conductor))
        watch.check(mock.Mock())
        return conductor

    def test_active_server_goes_shutoff_with_a_fault(self):
        conductor = self.watch({'uuid': 'u1', 'host': 'h1',
                                'task_state': None,
                                'vm_state': states.ACTIVE})
        conductor.instance_fault_create.assert_called_once()
        self.assertIn('QEMU process exited',
                      conductor.instance_fault_create.call_args[0][3])
        args, kwargs = conductor.instance_update.call_args
        self.assertEqual({'vm_state': states.STOPPED,
                          'power_state': states.POWER_SHUTDOWN}, args[2])
        self.assertEqual([None], kwargs['expected_task_state'])

    def test_a_server_being_acted_on_is_left_alone(self):
        for instance in ({'host': 'h1', 'task_state': states.MIGRATING,
                          'vm_state': states.ACTIVE},
                         {'host': 'h2', 'task_state': None,
                          'vm_state': states.ACTIVE},
                         {'host': 'h1', 'task_state': None,
                          'vm_state': states.STOPPED}):
            conductor = self.watch(dict(instance, uuid='u1'))
            conductor.instance_fault_create.assert_not_called()
            conductor.instance_update.assert_not_called()

    def test_the_fake_is_not_watched(self):
        driver = _Driver([])
        driver.moves_disks = False
        watch = guest_watch.GuestWatch(base.Deps('h1', driver, mock.Mock()))
        self.assertIsNone(watch.start())
