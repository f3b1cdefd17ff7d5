"""Instance action events recorded around a block, on a real (SQLite)
database through the conductor's compute_db endpoint object."""
import testtools

from nova_moves.conductor import db_proxy
from nova_moves import context as nm_context
from nova_moves.db import api as db_api
from nova_moves import instance_actions
from tests.unit import fixtures as nm_fixtures


class _StartFinishOnly(db_proxy.ComputeDBProxy):
    """A conductor capped below RPC 1.2."""

    def can_record_whole_events(self):
        return False


class EventTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.Database())
        self.uuid = db_api.instance_create({
            'display_name': 'vm', 'project_id': 'p', 'user_id': 'u',
            'flavor': nm_fixtures.flavor(), 'vm_state': 'active'})['uuid']
        self.ctxt = nm_context.RequestContext(user_id='u', project_id='p')
        self.action = db_api.action_start(self.uuid, 'live-migration',
                                          self.ctxt.request_id, 'u', 'p')

    def events(self):
        return db_api.action_events_get(self.action['id'])

    def test_whole_event_is_recorded_at_the_end_only(self):
        backend = db_proxy.ComputeDBProxy()
        with instance_actions.event(backend, self.ctxt, self.uuid,
                                    'compute_check', host='h1', whole=True):
            # Not listed while it runs: one write, at the end.
            self.assertEqual([], self.events())
        [event] = self.events()
        self.assertEqual(('compute_check', 'Success', 'h1'),
                         (event['event'], event['result'], event['host']))
        self.assertLessEqual(event['start_time'], event['finish_time'])

    def test_whole_event_records_the_error_and_reraises(self):
        backend = db_proxy.ComputeDBProxy()

        def fail():
            with instance_actions.event(backend, self.ctxt, self.uuid,
                                        'compute_check', whole=True):
                raise ValueError('memory')
        self.assertRaises(ValueError, fail)
        [event] = self.events()
        self.assertEqual('Error', event['result'])
        self.assertIn('ValueError: memory', event['traceback'])

    def test_below_rpc_12_the_event_starts_first(self):
        backend = _StartFinishOnly()
        with instance_actions.event(backend, self.ctxt, self.uuid,
                                    'compute_check', host='h1', whole=True):
            [started] = self.events()
            self.assertIsNone(started['finish_time'])
        [event] = self.events()
        self.assertEqual('Success', event['result'])
