"""rescue / unrescue end to end (api -> compute RPC 1.10 -> the fake
hypervisor -> conductor), real processes on the real broker: a rescued
server is RESCUE, refuses the other actions with 409 and comes back
ACTIVE on unrescue; a stopped server can be rescued, a paused one not;
a failed rescue is ERROR with a fault; a compute killed inside a rescue
redoes it when it restarts (its row of moves/lifecycle.py). A stable
device rescue (a store image with hw_rescue_bus / hw_rescue_device) is
on the guest's console; an unsupported one is ERROR with a fault naming
the property."""
import json
import os
import uuid

from nova_moves.api import image_refs
from tests.functional import base

SLOW = 60  # seconds: far longer than the test, so only the kill ends it
IMAGE = image_refs.image_id('fake')  # the configured image


class RescueTest(base.StackTestCase):

    COMPUTES = 1

    def guest(self, server):
        return self.local_guests('compute1').get(server['id'], {})

    def rescue(self, server, body=None, expect=200):
        return self.admin.action(server['id'], {'rescue': body},
                                 expect=expect)

    def test_rescue_refuses_other_actions_then_unrescue(self):
        server = self.boot('rs-cycle')
        answer = self.rescue(server, {'adminPass': 'pw',
                                      'rescue_image_ref': IMAGE}).json()
        self.assertEqual({'adminPass': 'pw'}, answer)
        shown = self.admin.wait_for_status(server['id'], 'RESCUE',
                                           timeout=30)
        self.assertEqual(('rescued', None, 1), (
            shown['OS-EXT-STS:vm_state'], shown['OS-EXT-STS:task_state'],
            shown['OS-EXT-STS:power_state']))
        guest = self.guest(server)
        self.assertEqual(('running', True, IMAGE), (
            guest['power'], guest.get('rescued'), guest['rescue_image']))
        for body in ({'reboot': {'type': 'SOFT'}},
                     {'reboot': {'type': 'HARD'}},
                     {'rebuild': {'imageRef': IMAGE}}, {'pause': None},
                     {'shelve': None}, {'migrate': None},
                     {'os-stop': None}, {'rescue': None}):
            self.admin.action(server['id'], body, expect=409)
        self.admin.action(server['id'], {'unrescue': None}, expect=202)
        shown = self.admin.wait_for_status(server['id'], 'ACTIVE',
                                           timeout=30)
        self.assertEqual('active', shown['OS-EXT-STS:vm_state'])
        self.assertNotIn('rescued', self.guest(server))
        self.assertEqual(['unrescue', 'rescue', 'create'], [
            a['action'] for a in self.admin.actions(server['id'])])
        # Not rescued: unrescue is a 409.
        self.admin.action(server['id'], {'unrescue': None}, expect=409)
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_rescue_a_stopped_server_and_not_a_paused_one(self):
        stopped = self.boot('rs-stopped')
        self.admin.action(stopped['id'], {'os-stop': None}, expect=202)
        self.admin.wait_for_status(stopped['id'], 'SHUTOFF', timeout=30)
        self.assertTrue(self.rescue(stopped).json()['adminPass'])
        self.admin.wait_for_status(stopped['id'], 'RESCUE', timeout=30)
        self.assertEqual('running', self.guest(stopped)['power'])
        self.admin.action(stopped['id'], {'unrescue': None}, expect=202)
        self.admin.wait_for_status(stopped['id'], 'ACTIVE', timeout=30)

        paused = self.boot('rs-paused')
        self.admin.action(paused['id'], {'pause': None}, expect=202)
        self.admin.wait_for_status(paused['id'], 'PAUSED', timeout=30)
        self.rescue(paused, expect=409)
        self.assertEqual('PAUSED', self.admin.server(paused['id'])['status'])
        for server in (stopped, paused):
            self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_a_failed_rescue_is_error_with_a_fault(self):
        server = self.boot('rs-fail')
        self.admin.set_faults('compute1', ['rescue'])
        self.addCleanup(self.admin.set_faults, 'compute1', [])
        self.rescue(server)
        shown = self.admin.wait_for_status(server['id'], 'ERROR', timeout=30)
        self.assertIn('rescue', shown['fault']['message'])
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def store_image(self, name, **properties):
        """A record in the stack's image store ($state_path/images), as
        an import with --property writes it (the fake reads no file)."""
        image_id = str(uuid.uuid4())
        folder = os.path.join(self.stack.workdir, 'state', 'images',
                              image_id)
        os.makedirs(folder)
        with open(os.path.join(folder, 'image.json'), 'w') as f:
            json.dump({
                'id': image_id, 'name': name, 'status': 'active',
                'created_at': '2026-11-29T00:00:00Z',
                'updated_at': '2026-11-29T00:00:00Z', 'kernel': 'kernel',
                'initrd': 'initrd', 'disk': 'disk', 'cmdline': '',
                'size': 0, 'virtual_size': 0, 'disk_format': 'qcow2',
                'container_format': 'bare', 'visibility': 'public',
                'owner': None, 'min_disk': 0, 'min_ram': 0,
                'properties': properties}, f)
        return image_id

    def test_stable_device_rescue(self):
        stable = self.store_image('rescue-cd', hw_rescue_device='cdrom',
                                  hw_rescue_bus='sata')
        shown = self.admin.get('/images/%s' % stable, expect=200).json()
        self.assertEqual(('cdrom', 'sata'), (shown['hw_rescue_device'],
                                             shown['hw_rescue_bus']))
        server = self.boot('rs-stable')
        self.rescue(server, {'rescue_image_ref': stable})
        self.admin.wait_for_status(server['id'], 'RESCUE', timeout=30)
        self.assertEqual({'device': 'cdrom', 'bus': 'sata'},
                         self.guest(server)['rescue_stable'])
        output = self.admin.action(server['id'], {
            # Nova's count: the final newline ends a piece of its own.
            'os-getConsoleOutput': {'length': 3}}, expect=200).json()[
                'output']
        self.assertIn('stable rescue: the rescue cdrom on bus sata (sr0), '
                      'after its own disk vda', output)
        self.admin.action(server['id'], {'unrescue': None}, expect=202)
        self.admin.wait_for_status(server['id'], 'ACTIVE', timeout=30)
        self.assertNotIn('rescue_stable', self.guest(server))

        floppy = self.store_image('rescue-floppy', hw_rescue_device='floppy')
        self.rescue(server, {'rescue_image_ref': floppy})
        shown = self.admin.wait_for_status(server['id'], 'ERROR', timeout=30)
        self.assertIn('hw_rescue_device=floppy', shown['fault']['message'])
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_a_rescued_server_is_deleted(self):
        server = self.boot('rs-delete')
        self.rescue(server)
        self.admin.wait_for_status(server['id'], 'RESCUE', timeout=30)
        self.admin.delete('/servers/%s' % server['id'], expect=204)
        self.admin.wait_for(lambda: not self.guest(server), timeout=30,
                            what='the rescued guest destroyed')


class RescueRecoveryTest(base.StackTestCase):
    """A compute SIGKILLed inside a rescue (the fake's 'rescue' slowed,
    as tests/functional/test_lifecycle_recovery.py does) redoes it when
    it restarts: the row's recovery is REDO."""

    COMPUTES = 1

    def operating(self):
        path = os.path.join(self.stack.workdir, 'state', 'fake-hypervisor',
                            'compute1.operating')
        try:
            with open(path) as f:
                return f.read()
        except OSError:
            return None

    def _unslowed(self):
        try:
            self.admin.set_faults('compute1', [], {})
            return True
        except Exception:
            return False

    def test_killed_while_rescuing_is_rescued_after_restart(self):
        server = self.boot('rs-killed')
        self.admin.set_faults('compute1', [], {'rescue': SLOW})
        self.admin.action(server['id'], {'rescue': {
            'rescue_image_ref': IMAGE}}, expect=200)
        self.admin.wait_for(lambda: self.operating() == 'rescue',
                            timeout=30, what='compute1 rescuing')
        self.stack.kill('compute1')
        self.stack.restart('compute1')
        self.admin.wait_for(self._unslowed, timeout=60,
                            what='compute1 answers')
        shown = self.admin.wait_for_status(server['id'], 'RESCUE',
                                           timeout=90)
        self.assertIsNone(shown['OS-EXT-STS:task_state'])
        newest = self.admin.actions(server['id'])[0]
        detail = self.admin.action_detail(server['id'],
                                          newest['request_id'])
        events = {e['event']: e['result'] for e in detail['events']}
        self.assertEqual('Success', events.get('compute_rescue_instance'),
                         detail['events'])
        guest = self.local_guests('compute1')[server['id']]
        # Redone from the image the interrupted rescue recorded.
        self.assertEqual((True, IMAGE), (guest.get('rescued'),
                                         guest['rescue_image']))
        self.admin.action(server['id'], {'unrescue': None}, expect=202)
        self.admin.wait_for_status(server['id'], 'ACTIVE', timeout=30)
        self.admin.delete('/servers/%s' % server['id'], expect=204)
