"""The lifecycle actions' state rules, lock and os-resetState through the
WSGI app on a real (SQLite) database; the compute casts go to the fake
transport and are not answered, so what is checked is what the API
claimed (task_state) or refused (409) and that a refusal wrote
nothing. The computes' side runs in tests/functional/test_lifecycle.py."""
import oslo_messaging as messaging
from oslo_messaging.rpc import client as messaging_client
import testtools

from nova_moves.api import views
from nova_moves import conf
from nova_moves.db import api as db_api
from nova_moves import rpc
from nova_moves import states
from tests.unit import fixtures as nm_fixtures

ADMIN = {'X-Auth-Token': 'admin:admin'}
OWNER = {'X-Auth-Token': 'alice:p1'}
OTHER = {'X-Auth-Token': 'bob:p2'}

# action body -> (vm_states it is accepted in, task_state it claims)
RULES = {
    'pause': ({'pause': None}, ['active'], 'pausing'),
    'unpause': ({'unpause': None}, ['paused'], 'unpausing'),
    'suspend': ({'suspend': {}}, ['active'], 'suspending'),
    'resume': ({'resume': None}, ['suspended'], 'resuming'),
    'soft': ({'reboot': {'type': 'SOFT'}}, ['active'], 'rebooting'),
    'hard': ({'reboot': {'type': 'hard'}},
             ['active', 'stopped', 'paused', 'suspended', 'error'],
             'rebooting_hard'),
    'rebuild': ({'rebuild': {'imageRef': 'img-2', 'name': 'new'}},
                ['active', 'stopped', 'error'], 'rebuilding'),
    'shelve': ({'shelve': None}, ['active', 'stopped', 'paused',
                                  'suspended'], 'shelving'),
    'unshelve': ({'unshelve': None}, ['shelved', 'shelved_offloaded'],
                 'unshelving'),
}
ALL_VM_STATES = ['active', 'stopped', 'paused', 'suspended', 'error',
                 'resized', 'shelved', 'shelved_offloaded', 'rescued']


class _Base(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.client = nm_fixtures.app_client(self, 'h1', 'h2')
        self.flavor = nm_fixtures.flavor()

    def server(self, vm_state='active', task_state=None, host='h1',
               project='p1', **values):
        return db_api.instance_create(dict({
            'display_name': 'vm', 'user_id': 'alice', 'project_id': project,
            'vm_state': vm_state, 'task_state': task_state, 'host': host,
            'node': host, 'power_state': 1, 'flavor': self.flavor,
            'image_ref': 'img-1'}, **values))

    def act(self, server, body, headers=OWNER, version='2.1'):
        headers = dict(headers, **{'OpenStack-API-Version':
                                   'compute %s' % version})
        return self.client.post('/v2.1/servers/%s/action' % server['uuid'],
                                json=body, headers=headers)


class LifecycleAPITest(_Base):

    def test_state_rules(self):
        """Each action is 202 (and claims its task_state) in the vm_states
        Nova allows, 409 (nothing written) in every other."""
        for name, (body, allowed, task_state) in sorted(RULES.items()):
            for vm_state in ALL_VM_STATES:
                server = self.server(vm_state)
                response = self.act(server, body)
                after = db_api.instance_get(server['uuid'])
                if vm_state in allowed:
                    self.assertEqual(202, response.status_code,
                                     (name, vm_state, response.get_json()))
                    self.assertEqual(task_state, after['task_state'])
                else:
                    self.assertEqual(409, response.status_code,
                                     (name, vm_state, response.get_json()))
                    self.assertIsNone(after['task_state'], name)
                    self.assertEqual([], db_api.actions_get(server['uuid']))
                self.assertEqual(vm_state, after['vm_state'])

    def test_busy_server_is_409(self):
        for name, (body, allowed, _) in sorted(RULES.items()):
            if name == 'hard':
                continue
            server = self.server(allowed[0], task_state='migrating')
            response = self.act(server, body)
            self.assertEqual(409, response.status_code, name)
            self.assertEqual('migrating', db_api.instance_get(
                server['uuid'])['task_state'])

    def test_hard_reboot_takes_over_a_stuck_action_not_a_move(self):
        for task_state in ('rebooting', 'pausing', 'suspending',
                           'resuming', 'unpausing'):
            server = self.server('active', task_state=task_state)
            self.assertEqual(202, self.act(
                server, RULES['hard'][0]).status_code, task_state)
            self.assertEqual('rebooting_hard', db_api.instance_get(
                server['uuid'])['task_state'])
        for task_state in ('migrating', 'resize_prep', 'rebuilding',
                           'deleting', 'powering-off'):
            server = self.server('active', task_state=task_state)
            self.assertEqual(409, self.act(
                server, RULES['hard'][0]).status_code, task_state)

    def test_bad_bodies_are_400(self):
        server = self.server()
        for body in ({'pause': {'x': 1}}, {'pause': 1}, {'reboot': None},
                     {'reboot': {}}, {'reboot': {'type': 'WARM'}},
                     {'reboot': {'type': 'SOFT', 'x': 1}},
                     {'rebuild': {}}, {'rebuild': {'imageRef': 7}},
                     {'rebuild': {'imageRef': 'i', 'name': ''}},
                     {'rebuild': {'imageRef': 'i', 'bogus': 1}},
                     {'os-resetState': {'state': 'paused'}},
                     {'os-resetState': None}, {'lock': {'x': 1}},
                     {'unlock': 5}):
            response = self.act(server, body, headers=ADMIN)
            self.assertEqual(400, response.status_code,
                             (body, response.get_json()))
        self.assertIsNone(db_api.instance_get(server['uuid'])['task_state'])
        # locked_reason arrives at 2.73; rebuild's description at 2.19.
        self.assertEqual(400, self.act(server, {'lock': {
            'locked_reason': 'r'}}, version='2.72').status_code)
        self.assertEqual(400, self.act(server, {'rebuild': {
            'imageRef': 'i', 'description': 'd'}}, version='2.18')
            .status_code)

    def test_policies_and_other_projects(self):
        server = self.server()
        self.assertEqual(404, self.act(server, {'pause': None},
                                       headers=OTHER).status_code)
        self.assertEqual(403, self.act(server, {'os-resetState': {
            'state': 'error'}}).status_code)

    def test_rebuild_answers_with_the_server(self):
        server = self.server()
        response = self.act(server, {'rebuild': {
            'imageRef': 'img-2', 'name': 'renamed', 'adminPass': 'pw'}},
            version='2.75')
        self.assertEqual(202, response.status_code, response.get_json())
        body = response.get_json()['server']
        self.assertEqual(('renamed', 'REBUILD', 'img-2', 'pw'),
                         (body['name'], body['status'], body['image']['id'],
                          body['adminPass']))


class LockTest(_Base):

    def show(self, server, version='2.73', headers=OWNER):
        headers = dict(headers, **{'OpenStack-API-Version':
                                   'compute %s' % version})
        return self.client.get('/v2.1/servers/%s' % server['uuid'],
                               headers=headers).get_json()['server']

    def test_lock_refuses_the_owner_not_the_admin(self):
        server = self.server()
        self.assertEqual(202, self.act(server, {'lock': {
            'locked_reason': 'maintenance'}}, version='2.73').status_code)
        shown = self.show(server)
        self.assertEqual((True, 'maintenance'),
                         (shown['locked'], shown['locked_reason']))
        self.assertNotIn('locked', self.show(server, version='2.8'))
        for body in ({'pause': None}, {'reboot': {'type': 'HARD'}},
                     {'resize': {'flavorRef': self.flavor['flavorid']}},
                     {'os-stop': None}, {'rebuild': {'imageRef': 'i'}}):
            response = self.act(server, body)
            self.assertEqual(409, response.status_code, body)
            self.assertIn('locked', response.get_json()[
                'conflictingRequest']['message'])
        self.assertEqual(409, self.client.delete(
            '/v2.1/servers/%s' % server['uuid'], headers=OWNER).status_code)
        # A policy the owner fails is still its 403 (Nova's order).
        self.assertEqual(403, self.act(server, {'migrate': None})
                         .status_code)
        self.assertIsNone(db_api.instance_get(server['uuid'])['task_state'])
        # The admin acts on it.
        self.assertEqual(202, self.act(server, {'pause': None},
                                       headers=ADMIN).status_code)
        actions = [a['action'] for a in db_api.actions_get(server['uuid'])]
        self.assertEqual(['pause', 'lock'], actions)

    def test_unlock_override(self):
        server = self.server()
        self.assertEqual(202, self.act(server, {'lock': None},
                                       headers=ADMIN).status_code)
        self.assertEqual('admin', db_api.instance_get(
            server['uuid'])['locked_by'])
        # Locked by an admin: the owner may not unlock it.
        self.assertEqual(403, self.act(server, {'unlock': None}).status_code)
        self.assertEqual(202, self.act(server, {'unlock': None},
                                       headers=ADMIN).status_code)
        self.assertFalse(self.show(server)['locked'])
        self.assertIsNone(self.show(server)['locked_reason'])
        # The owner's own lock the owner undoes.
        self.assertEqual(202, self.act(server, {'lock': None}).status_code)
        self.assertEqual(202, self.act(server, {'unlock': None}).status_code)
        self.assertEqual(202, self.act(server, {'pause': None}).status_code)


class ResetStateTest(_Base):

    def test_reset_clears_task_state_and_sets_vm_state(self):
        server = self.server('paused', task_state='unpausing')
        self.assertEqual(202, self.act(server, {'os-resetState': {
            'state': 'error'}}, headers=ADMIN).status_code)
        after = db_api.instance_get(server['uuid'])
        self.assertEqual(('error', None), (after['vm_state'],
                                           after['task_state']))
        self.assertEqual(202, self.act(server, {'os-resetState': {
            'state': 'active'}}, headers=ADMIN).status_code)
        self.assertEqual('active', db_api.instance_get(
            server['uuid'])['vm_state'])

    def _cold_move(self, status):
        """A server half way through a cold migration h1 -> h2: the
        migration holds the source half, the server the destination's."""
        server = self.server('active', task_state='resize_migrating')
        migration = db_api.migration_create({
            'instance_uuid': server['uuid'], 'migration_type': 'migration',
            'status': status, 'source_compute': 'h1', 'source_node': 'h1',
            'dest_compute': 'h2', 'dest_node': 'h2',
            'old_flavor_id': str(self.flavor['id']),
            'new_flavor_id': str(self.flavor['id'])})
        return server, migration

    def test_reset_ends_an_unfinished_move_like_move_failed(self):
        server, migration = self._cold_move('migrating')
        db_api.instance_update(server['uuid'], {'host': 'h2', 'node': 'h2'})
        self.assertEqual(202, self.act(server, {'os-resetState': {
            'state': 'active'}}, headers=ADMIN).status_code)
        after = db_api.instance_get(server['uuid'])
        self.assertEqual(('active', None, 'h1'), (
            after['vm_state'], after['task_state'], after['host']))
        self.assertEqual('error', db_api.migration_get(
            migration['uuid'])['status'])
        fault = db_api.instance_fault_get_latest(server['uuid'])
        self.assertIn('os-resetState', fault['message'])

    def test_reset_refuses_a_resize_awaiting_confirmation(self):
        server, migration = self._cold_move('finished')
        db_api.instance_update(server['uuid'], {'vm_state': 'resized',
                                                'task_state': None})
        response = self.act(server, {'os-resetState': {'state': 'active'}},
                            headers=ADMIN)
        self.assertEqual(409, response.status_code)
        self.assertEqual('resized', db_api.instance_get(
            server['uuid'])['vm_state'])
        self.assertEqual('finished', db_api.migration_get(
            migration['uuid'])['status'])


class ShelveTest(_Base):

    def test_offload_is_admin_and_needs_shelved(self):
        server = self.server('shelved')
        self.assertEqual(403, self.act(server, {'shelveOffload': None})
                         .status_code)
        active = self.server('active')
        self.assertEqual(409, self.act(active, {'shelveOffload': None},
                                       headers=ADMIN).status_code)
        self.assertEqual(202, self.act(server, {'shelveOffload': None},
                                       headers=ADMIN).status_code)
        self.assertEqual('shelving_offloading', db_api.instance_get(
            server['uuid'])['task_state'])

    def test_unshelve_bodies_per_microversion(self):
        offloaded = self.server('shelved_offloaded', host=None)
        for version, body, code in (
                ('2.76', {'availability_zone': 'nova'}, 400),
                ('2.77', {}, 400),
                ('2.77', {'host': 'h1'}, 400),
                ('2.91', {'host': 'nowhere'}, 400),
                ('2.91', {}, 400),
                ('2.91', {'availability_zone': ''}, 400)):
            response = self.act(offloaded, {'unshelve': body},
                                headers=ADMIN, version=version)
            self.assertEqual(code, response.status_code,
                             (version, body, response.get_json()))
        self.assertIsNone(db_api.instance_get(
            offloaded['uuid'])['task_state'])
        # To a host: admin only by default (unshelve_to_host).
        owned = self.server('shelved_offloaded', host=None)
        self.assertEqual(403, self.act(owned, {'unshelve': {'host': 'h1'}},
                                       version='2.91').status_code)
        # Zone or host for a server still SHELVED on its host: 409.
        shelved = self.server('shelved')
        self.assertEqual(409, self.act(shelved, {'unshelve': {
            'availability_zone': 'nova'}}, version='2.77').status_code)
        self.assertEqual(202, self.act(owned, {'unshelve': {
            'availability_zone': 'az2'}}, version='2.77').status_code)
        after = db_api.instance_get(owned['uuid'])
        self.assertEqual(('unshelving', 'az2'), (after['task_state'],
                                                 after['requested_az']))

    def test_unshelve_check_needs_a_known_host(self):
        # The verdict itself asks the scheduler: tests/functional.
        offloaded = self.server('shelved_offloaded', host=None)
        for body in ({'check': True}, {'check': True, 'host': 'nowhere'},
                     {'check': 'maybe', 'host': 'h2'}):
            self.assertEqual(400, self.act(offloaded, {'unshelve': body},
                                           headers=ADMIN,
                                           version='2.91').status_code)
        self.assertEqual(400, self.act(offloaded, {'unshelve': {
            'check': True, 'host': 'h2'}}, headers=ADMIN,
            version='2.90').status_code)
        self.assertIsNone(db_api.instance_get(
            offloaded['uuid'])['task_state'])


class StatusTest(testtools.TestCase):

    def test_nova_statuses(self):
        for vm, task, status in (
                ('paused', None, 'PAUSED'), ('paused', 'migrating',
                                             'MIGRATING'),
                ('paused', 'unpausing', 'PAUSED'),
                ('suspended', None, 'SUSPENDED'),
                ('active', 'rebooting', 'REBOOT'),
                ('active', 'reboot_started', 'REBOOT'),
                ('active', 'rebooting_hard', 'HARD_REBOOT'),
                ('stopped', 'rebooting_hard', 'SHUTOFF'),
                ('active', 'rebuilding', 'REBUILD'),
                ('stopped', 'rebuild_spawning', 'REBUILD'),
                ('error', 'rebuilding', 'REBUILD'),
                ('active', 'pausing', 'ACTIVE'),
                ('shelved_offloaded', None, 'SHELVED_OFFLOADED')):
            self.assertEqual(status, views.server_status(
                {'vm_state': vm, 'task_state': task}), (vm, task))
        self.assertIn(states.PAUSED, states.ALLOW_HARD_REBOOT)


class BrokerAwayTest(_Base):
    """A server action's cast given up on ([DEFAULT] move_step_cast_wait,
    a cell's broker away): 503 naming the message queue, and the claim
    undone, where the cast used to hold the request until the broker
    returned."""

    def setUp(self):
        super().setUp()
        conf.CONF.set_override('move_step_cast_wait', 0)
        self.addCleanup(conf.CONF.clear_override, 'move_step_cast_wait')
        self.patch(rpc, 'CAST_RESEND_INTERVAL', 0.01)
        self.sent = []

        def unreachable(context, ctxt, method, **kwargs):
            self.sent.append(method)
            raise messaging.MessageDeliveryFailure('Unable to connect to '
                                                   'AMQP server')
        self.patch(messaging_client._BaseCallContext, 'cast', unreachable)

    def test_503_and_nothing_claimed(self):
        for body, vm_state in (({'pause': None}, 'active'),
                               ({'os-stop': None}, 'active'),
                               ({'reboot': {'type': 'HARD'}}, 'active'),
                               ({'unshelve': None}, 'shelved_offloaded')):
            server = self.server(vm_state, host=None if vm_state ==
                                 'shelved_offloaded' else 'h1')
            response = self.act(server, body)
            self.assertEqual(503, response.status_code, body)
            self.assertIn('message queue cannot be reached',
                          response.get_json()['serviceUnavailable']
                          ['message'])
            after = db_api.instance_get(server['uuid'])
            self.assertEqual((vm_state, None),
                             (after['vm_state'], after['task_state']), body)
        self.assertEqual(['pause_instance', 'stop_instance',
                          'reboot_instance', 'unshelve_instance'], self.sent)

    def test_unshelve_into_a_zone_keeps_the_old_zone(self):
        agg = db_api.aggregate_create('z2-hosts', 'z2')
        db_api.aggregate_host_add(agg['id'], 'h2')
        server = self.server('shelved_offloaded', host=None,
                             availability_zone='nova')
        response = self.act(server, {'unshelve': {'availability_zone':
                                                  'z2'}}, version='2.77')
        self.assertEqual(503, response.status_code, response.get_json())
        after = db_api.instance_get(server['uuid'])
        self.assertEqual((None, 'nova', None), (
            after['task_state'], after['availability_zone'],
            after['requested_az']))
        self.assertEqual(['unshelve_instance'], self.sent)
