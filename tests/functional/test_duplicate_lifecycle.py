"""Every lifecycle RPC method delivered again, after its action settled
and out of turn, changes nothing (issue 37: a stray stop_instance
powered off an ACTIVE server's guest, a stray start_instance started a
SHUTOFF one's).

Each handler checks its row of the lifecycle table (the server's
task_state, moves/lifecycle.py) before it touches the guest. The tap
captures each action's real message; once the server has come to rest
every message captured so far for it is sent again (a fresh oslo id)
and the server, its allocations and the hypervisors' guests must stay
exactly as they were."""
import copy
import json

from tests.functional import rpc_injector
from tests.functional import test_duplicate_steps

PAUSE = 'compute.pause_instance'
UNPAUSE = 'compute.unpause_instance'
SUSPEND = 'compute.suspend_instance'
RESUME = 'compute.resume_instance'
REBOOT = 'compute.reboot_instance'
STOP = 'compute.stop_instance'
START = 'compute.start_instance'
REBUILD = 'compute.rebuild_instance_same_host'
SHELVE = 'compute.shelve_instance'
UNSHELVE = 'compute.unshelve_instance'
RESCUE = 'compute.rescue_instance'
UNRESCUE = 'compute.unrescue_instance'


# Every lifecycle method of the compute (RPC 1.2, 1.4 and 1.10), with
# the arguments it takes besides the server.
EVERY = {'pause_instance': {}, 'unpause_instance': {},
         'suspend_instance': {}, 'resume_instance': {},
         'reboot_instance': {'reboot_type': 'HARD'},
         'stop_instance': {}, 'start_instance': {},
         'rebuild_instance_same_host': {'image_ref': 'fake2'},
         'shelve_instance': {}, 'shelve_offload_instance': {},
         'unshelve_instance': {}, 'rescue_instance': {},
         'unrescue_instance': {}}


class DuplicateLifecycleTest(test_duplicate_steps.DuplicateBase):

    COMPUTES = 1

    def act(self, server, body, status, version=None):
        self.admin.action(server['id'], body, version=version, expect=202)
        return self.admin.wait_for_status(server['id'], status, timeout=30)

    def stray(self, server_id):
        """Send every lifecycle method to the server at rest (out of
        turn: no action claimed it), each built from a captured compute
        message of it; what each changed (empty: nothing)."""
        template = [c for c in self.tap.find(None, mentioning=server_id)
                    if c.routing_key.startswith('compute.')][0]
        changed = {}
        for method, args in EVERY.items():
            message = copy.deepcopy(template.message)
            message.update(method=method,
                           args=dict(args, instance_uuid=server_id))
            forged = rpc_injector.Captured(template.routing_key, dict(
                template.envelope, **{'oslo.message': json.dumps(message)}),
                template.exchange)
            step = 'compute.' + method
            before = self.snapshot(server_id)
            done = self.handled(step)[0] + 1
            self.tap.resend(forged)
            diff = self._settle(server_id, before, step, done)
            if diff:
                changed[step] = diff
        return changed

    def test_power_and_pause_messages_twice_and_out_of_turn(self):
        server = self.boot('dup-power')
        self.act(server, {'pause': None}, 'PAUSED')
        self.assertHarmless(self.replay(server['id'], [PAUSE]))
        self.assertHarmless(self.stray(server['id']))
        self.act(server, {'unpause': None}, 'ACTIVE')
        self.assertHarmless(self.replay(server['id'], [UNPAUSE, PAUSE]))
        self.act(server, {'suspend': None}, 'SUSPENDED')
        self.assertHarmless(self.replay(server['id'], [SUSPEND]))
        self.assertHarmless(self.stray(server['id']))
        self.act(server, {'resume': None}, 'ACTIVE')
        self.assertHarmless(self.replay(server['id'], [RESUME, SUSPEND]))
        self.act(server, {'reboot': {'type': 'SOFT'}}, 'ACTIVE')
        self.act(server, {'reboot': {'type': 'HARD'}}, 'ACTIVE')
        self.assertHarmless(self.replay(server['id'], [REBOOT]))
        self.act(server, {'os-stop': None}, 'SHUTOFF')
        self.assertHarmless(self.replay(server['id'], [STOP]))
        # SHUTOFF: a start, a resume, a reboot out of turn leave it off.
        self.assertHarmless(self.stray(server['id']))
        self.act(server, {'os-start': None}, 'ACTIVE')
        # The case: a stop sent again to an ACTIVE server.
        self.assertHarmless(self.replay(server['id'], [START, STOP]))
        self.assertHarmless(self.stray(server['id']))
        shown = self.admin.server(server['id'])
        self.assertEqual(('ACTIVE', 1), (shown['status'],
                                         shown['OS-EXT-STS:power_state']))
        host = shown['OS-EXT-SRV-ATTR:host']
        self.assertEqual('running',
                         self.local_guests(host)[server['id']]['power'])
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_rebuild_and_shelve_messages_twice_and_out_of_turn(self):
        server = self.boot('dup-shelve')
        self.act(server, {'rebuild': {'imageRef': 'fake2'}}, 'ACTIVE')
        self.assertHarmless(self.replay(server['id'], [REBUILD]))
        self.act(server, {'shelve': None}, 'SHELVED_OFFLOADED')
        # Offloaded: the guest is gone and the host given up; none of
        # these may bring a guest back or take a host.
        self.assertHarmless(self.replay(server['id'], [SHELVE, REBUILD]))
        self.assertHarmless(self.stray(server['id']))
        self.act(server, {'unshelve': None}, 'ACTIVE')
        self.assertHarmless(self.replay(server['id'], [UNSHELVE, SHELVE]))
        shown = self.admin.server(server['id'])
        host = shown['OS-EXT-SRV-ATTR:host']
        self.assertEqual('running',
                         self.local_guests(host)[server['id']]['power'])
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_rescue_messages_twice_and_out_of_turn(self):
        server = self.boot('dup-rescue')
        # Rescue answers 200 (with the admin password), not 202.
        self.admin.action(server['id'], {'rescue': None}, expect=200)
        self.admin.wait_for_status(server['id'], 'RESCUE', timeout=30)
        self.assertHarmless(self.replay(server['id'], [RESCUE]))
        # RESCUE: a stray unrescue, start, reboot ... leaves it rescued.
        self.assertHarmless(self.stray(server['id']))
        self.act(server, {'unrescue': None}, 'ACTIVE')
        self.assertHarmless(self.replay(server['id'], [UNRESCUE, RESCUE]))
        self.assertHarmless(self.stray(server['id']))
        shown = self.admin.server(server['id'])
        self.assertEqual('ACTIVE', shown['status'])
        guest = self.local_guests(shown['OS-EXT-SRV-ATTR:host'])[
            server['id']]
        self.assertEqual('running', guest['power'])
        self.assertFalse(guest.get('rescued'))
        self.admin.delete('/servers/%s' % server['id'], expect=204)
