"""rescue / unrescue on the compute side (RPC 1.10), in process with the
fake hypervisor: the rows' ends, the image the guest is rescued from
(kept for a redo), ERROR with a fault on a failure, and a message out
of turn changing nothing. Stable device rescue (an image store image
with hw_rescue_bus / hw_rescue_device): recorded on the guest, shown on
its console, an unsupported one ERROR with a fault naming it."""
import json
import os
import uuid as uuid_mod

import fixtures

from nova_moves.db import api as db_api
from nova_moves import states
from tests.unit.compute import lifecycle_base
from tests.unit import fixtures as nm_fixtures


class ComputeRescueTest(lifecycle_base.LifecycleComputeTestCase):

    def state(self, uuid):
        row = db_api.instance_get(uuid)
        guest = self.compute.driver._record(uuid)
        return (row['vm_state'], row['task_state'], row['power_state'],
                guest and guest['power'], guest and guest.get('rescued'))

    def test_rescue_then_unrescue(self):
        uuid = self.server(states.ACTIVE, states.RESCUING)
        self.compute.rescue_instance(self.ctxt, uuid, 'rescue-img')
        self.assertEqual((states.RESCUED, None, states.POWER_RUNNING,
                          'running', True), self.state(uuid))
        self.assertIn('booted from image rescue-img',
                      self.compute.driver.console_output(uuid))
        db_api.instance_update(uuid, {'task_state': states.UNRESCUING})
        self.compute.unrescue_instance(self.ctxt, uuid)
        self.assertEqual((states.ACTIVE, None, states.POWER_RUNNING,
                          'running', None), self.state(uuid))
        self.assertIn('booted from its own disk',
                      self.compute.driver.console_output(uuid, 1 + 1))

    def test_rescue_of_a_stopped_server_runs_it(self):
        uuid = self.server(states.STOPPED, states.RESCUING, power='shutdown')
        self.compute.rescue_instance(self.ctxt, uuid, None)
        self.assertEqual((states.RESCUED, None, states.POWER_RUNNING,
                          'running', True), self.state(uuid))
        # No image: the server's own.
        self.assertEqual('fake', self.compute.driver._record(uuid)[
            'rescue_image'])

    def test_a_redo_keeps_the_image_the_rescue_recorded(self):
        uuid = self.server(states.ACTIVE, states.RESCUING)
        self.compute.driver._guests[uuid]['rescue_image'] = 'rescue-img'
        self.compute.rescue_instance(self.ctxt, uuid)  # no image: a redo
        self.assertIn('booted from image rescue-img',
                      self.compute.driver.console_output(uuid))

    def test_a_failed_rescue_is_error_with_a_fault(self):
        uuid = self.server(states.ACTIVE, states.RESCUING)
        self.compute.driver.set_fault_injection(['rescue'])
        self.assertRaises(Exception, self.compute.rescue_instance,
                          self.ctxt, uuid, 'img')
        row = db_api.instance_get(uuid)
        self.assertEqual((states.ERROR, None),
                         (row['vm_state'], row['task_state']))
        self.assertIn('rescue',
                      db_api.instance_fault_get_latest(uuid)['message'])

    def test_a_hard_reboot_out_of_a_failed_rescue_boots_its_own_disk(self):
        uuid = self.server(states.ACTIVE, states.RESCUING)
        self.compute.driver.set_fault_injection(['rescue'])
        self.assertRaises(Exception, self.compute.rescue_instance,
                          self.ctxt, uuid, 'img')
        self.compute.driver.set_fault_injection([])
        db_api.instance_update(uuid, {'task_state': states.REBOOTING_HARD})
        self.compute.reboot_instance(self.ctxt, uuid, 'HARD')
        self.assertEqual((states.ACTIVE, None, states.POWER_RUNNING,
                          'running', None), self.state(uuid))
        self.assertNotIn('rescue_image', self.compute.driver._record(uuid))

    def test_a_failed_unrescue_is_error_with_a_fault(self):
        uuid = self.server(states.RESCUED, states.UNRESCUING)
        self.compute.driver.set_fault_injection(['unrescue'])
        self.assertRaises(Exception, self.compute.unrescue_instance,
                          self.ctxt, uuid)
        self.assertEqual(states.ERROR, db_api.instance_get(uuid)['vm_state'])
        self.assertIsNotNone(db_api.instance_fault_get_latest(uuid))

    def test_messages_out_of_turn_change_nothing(self):
        active = self.server(states.ACTIVE, None)
        rescued = self.server(states.RESCUED, None)
        self.compute.unrescue_instance(self.ctxt, active)
        self.compute.rescue_instance(self.ctxt, rescued, 'img')
        self.assertEqual((states.ACTIVE, None, states.POWER_RUNNING,
                          'running', None), self.state(active))
        self.assertEqual((states.RESCUED, None), self.state(rescued)[:2])
        self.assertIsNone(self.compute.driver._record(rescued).get(
            'rescued'))


class ComputeStableRescueTest(lifecycle_base.LifecycleComputeTestCase):

    def setUp(self):
        super().setUp()
        self.store = self.useFixture(fixtures.TempDir()).path
        self.useFixture(nm_fixtures.Override('store_path', self.store,
                                             'image'))

    def image(self, **properties):
        """A store record with ``properties`` (the fake reads no file)."""
        image_id = str(uuid_mod.uuid4())
        os.mkdir(os.path.join(self.store, image_id))
        with open(os.path.join(self.store, image_id, 'image.json'),
                  'w') as f:
            json.dump({'id': image_id, 'properties': properties}, f)
        return image_id

    def test_stable_rescue_recorded_and_shown(self):
        image = self.image(hw_rescue_bus='virtio')
        uuid = self.server(states.ACTIVE, states.RESCUING)
        self.compute.rescue_instance(self.ctxt, uuid, image)
        guest = self.compute.driver._record(uuid)
        self.assertEqual((True, image, {'device': 'disk', 'bus': 'virtio'}),
                         (guest['rescued'], guest['rescue_image'],
                          guest['rescue_stable']))
        self.assertIn('booted from image %s, stable rescue: the rescue disk '
                      'on bus virtio (vdb), after its own disk vda' % image,
                      self.compute.driver.console_output(uuid))
        db_api.instance_update(uuid, {'task_state': states.UNRESCUING})
        self.compute.unrescue_instance(self.ctxt, uuid)
        self.assertNotIn('rescue_stable', self.compute.driver._record(uuid))

    def test_a_redo_rescues_the_same_way(self):
        image = self.image(hw_rescue_device='cdrom')
        uuid = self.server(states.ACTIVE, states.RESCUING)
        self.compute.driver._guests[uuid]['rescue_image'] = image
        self.compute.rescue_instance(self.ctxt, uuid)  # no image: a redo
        self.assertEqual({'device': 'cdrom', 'bus': 'ide'},
                         self.compute.driver._record(uuid)['rescue_stable'])
        self.assertIn('the rescue cdrom on bus ide (sr0)',
                      self.compute.driver.console_output(uuid))

    def test_without_the_properties_a_legacy_rescue(self):
        image = self.image(os_distro='debian')
        uuid = self.server(states.ACTIVE, states.RESCUING)
        self.compute.rescue_instance(self.ctxt, uuid, image)
        self.assertIsNone(self.compute.driver._record(uuid)['rescue_stable'])
        self.assertIn('its own disk attached second',
                      self.compute.driver.console_output(uuid))

    def test_an_unsupported_one_is_error_with_a_fault_naming_it(self):
        image = self.image(hw_rescue_device='cdrom', hw_rescue_bus='virtio')
        uuid = self.server(states.ACTIVE, states.RESCUING)
        self.assertRaises(Exception, self.compute.rescue_instance,
                          self.ctxt, uuid, image)
        row = db_api.instance_get(uuid)
        self.assertEqual((states.ERROR, None),
                         (row['vm_state'], row['task_state']))
        message = db_api.instance_fault_get_latest(uuid)['message']
        self.assertIn('hw_rescue_device=cdrom, hw_rescue_bus=virtio',
                      message)
        # Refused before the guest was touched: not rescued.
        guest = self.compute.driver._record(uuid)
        self.assertEqual(('running', None),
                         (guest['power'], guest.get('rescued')))
