"""rescue / unrescue through the WSGI app on SQLite (api/rescue.py): the
codes, the claims (the rows of moves/lifecycle.py), the policies, bad
bodies and images; the casts go to the fake transport unanswered. The
compute side: tests/unit/compute/test_rescue.py; end to end:
tests/functional/test_rescue.py."""
from nova_moves.api import image_refs
from nova_moves.api import views
from nova_moves.compute import rpcapi as compute_rpcapi
from nova_moves.db import api as db_api
from nova_moves import states
from tests.unit.api import test_lifecycle

ADMIN = test_lifecycle.ADMIN
OWNER = test_lifecycle.OWNER
OTHER = test_lifecycle.OTHER
IMAGE = image_refs.image_id('fake')  # the configured image's id


class RescueAPITest(test_lifecycle._Base):

    def test_state_rules(self):
        """rescue from ACTIVE, SHUTOFF and ERROR; unrescue from RESCUED;
        409 (nothing written) from every other vm_state."""
        for body, allowed, task, code in (
                ({'rescue': None}, ['active', 'stopped', 'error'],
                 states.RESCUING, 200),
                ({'unrescue': None}, ['rescued'], states.UNRESCUING, 202)):
            for vm_state in test_lifecycle.ALL_VM_STATES:
                server = self.server(vm_state)
                response = self.act(server, body)
                after = db_api.instance_get(server['uuid'])
                if vm_state in allowed:
                    self.assertEqual(code, response.status_code,
                                     (body, vm_state, response.get_json()))
                    self.assertEqual(task, after['task_state'])
                    self.assertEqual([list(body)[0]], [
                        a['action'] for a in db_api.actions_get(
                            server['uuid'])])
                else:
                    self.assertEqual(409, response.status_code,
                                     (body, vm_state))
                    self.assertIsNone(after['task_state'])
                    self.assertEqual([], db_api.actions_get(server['uuid']))

    def test_rescue_answers_the_admin_password(self):
        response = self.act(self.server(), {'rescue': {'adminPass': 'pw'}})
        self.assertEqual({'adminPass': 'pw'}, response.get_json())
        response = self.act(self.server(), {'rescue': {
            'rescue_image_ref': IMAGE}})
        self.assertEqual(200, response.status_code, response.get_json())
        self.assertTrue(response.get_json()['adminPass'])

    def test_status_is_rescue(self):
        self.assertEqual('RESCUE', views.server_status(
            {'vm_state': states.RESCUED, 'task_state': None}))
        self.assertEqual('RESCUE', views.server_status(
            {'vm_state': states.ACTIVE, 'task_state': states.RESCUING}))
        self.assertEqual('RESCUE', views.server_status(
            {'vm_state': states.RESCUED, 'task_state': states.UNRESCUING}))

    def test_busy_or_locked_server_is_409(self):
        server = self.server(task_state='migrating')
        self.assertEqual(409, self.act(server, {'rescue': None}).status_code)
        server = self.server('rescued', task_state='unrescuing')
        self.assertEqual(409, self.act(server,
                                       {'unrescue': None}).status_code)
        server = self.server(locked_by='owner')
        response = self.act(server, {'rescue': None})
        self.assertEqual(409, response.status_code)
        self.assertIn('locked', response.get_json()['conflictingRequest'][
            'message'])
        self.assertEqual(200, self.act(server, {'rescue': None},
                                       headers=ADMIN).status_code)

    def test_bad_bodies_are_400_naming_the_problem(self):
        server = self.server()
        for body, named in (({'rescue': {'x': 1}}, 'x'),
                            ({'rescue': 1}, 'rescue'),
                            ({'rescue': {'adminPass': 7}}, 'adminPass'),
                            ({'rescue': {'rescue_image_ref': ''}},
                             'rescue_image_ref'),
                            ({'unrescue': {'x': 1}}, 'x'),
                            ({'unrescue': 'now'}, 'unrescue')):
            response = self.act(server, body)
            self.assertEqual(400, response.status_code, body)
            self.assertIn(named, response.get_json()['badRequest'][
                'message'], body)
        response = self.act(server, {'rescue': {
            'rescue_image_ref': 'no-such-image'}})
        self.assertEqual(400, response.status_code)
        self.assertIn('no-such-image',
                      response.get_json()['badRequest']['message'])
        self.assertIsNone(db_api.instance_get(server['uuid'])['task_state'])
        self.assertEqual([], db_api.actions_get(server['uuid']))

    def test_a_paused_server_is_409_whatever_the_image(self):
        response = self.act(self.server('paused'), {'rescue': {
            'rescue_image_ref': 'no-such-image'}})
        self.assertEqual(409, response.status_code)

    def test_policies(self):
        """Another project's server is 404; the personas' 403s are the
        policy matrix's (tests/functional/test_policy_matrix.py)."""
        server = self.server()
        self.assertEqual(404, self.act(server, {'rescue': None},
                                       headers=OTHER).status_code)
        rescued = self.server('rescued')
        self.assertEqual(404, self.act(rescued, {'unrescue': None},
                                       headers=OTHER).status_code)
        self.assertEqual(202, self.act(rescued, {'unrescue': None},
                                       headers=ADMIN).status_code)

    def test_a_compute_capped_below_1_10_is_409(self):
        self.patch(compute_rpcapi.ComputeAPI, 'can_rescue',
                   lambda self: False)
        server = self.server()
        response = self.act(server, {'rescue': None})
        self.assertEqual(409, response.status_code)
        self.assertIn('1.10', response.get_json()['conflictingRequest'][
            'message'])
        self.assertIsNone(db_api.instance_get(server['uuid'])['task_state'])
