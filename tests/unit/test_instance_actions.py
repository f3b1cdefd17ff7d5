"""Instance action events recorded around a block, on a real (SQLite)
database through the conductor's compute_db endpoint object."""
import datetime

import testtools

from nova_moves.conductor import db_proxy
from nova_moves import context as nm_context
from nova_moves.db import actions
from nova_moves.db import api as db_api
from nova_moves.db import session as db_session
from nova_moves import exception
from nova_moves import instance_actions
from tests.unit import fixtures as nm_fixtures


class _StartFinishOnly(db_proxy.ComputeDBProxy):
    """A conductor capped below RPC 1.2."""

    def can_record_whole_events(self):
        return False


class _ActionBase(testtools.TestCase):

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


class EventTest(_ActionBase):

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



def _iso(value):
    return value.isoformat() if hasattr(value, 'isoformat') else value


class ActionTouchedTest(_ActionBase):
    """A move step's events do not write their action: its updated_at
    (and 2.58's changes-since / changes-before) is read as the newest of
    its own and its events'."""

    def _step_event_at(self, moment, request_id=None, events=None):
        self.patch(actions, 'utcnow', lambda: moment)
        with db_session._tx() as session:
            actions.events_in(session, self.uuid,
                              request_id or self.ctxt.request_id,
                              events or [{'name': 'compute_step'}],
                              lookup=False)

    def test_step_event_moves_updated_at_and_changes_since(self):
        created = _iso(db_api.actions_get(self.uuid)[0]['updated_at'])
        later = datetime.datetime(2030, 1, 1)
        self._step_event_at(later)
        [action] = db_api.actions_get(self.uuid)
        self.assertEqual(later.isoformat(), _iso(action['updated_at']))
        self.assertEqual(later.isoformat(), _iso(
            db_api.action_get_by_request_id(
                self.uuid, self.ctxt.request_id)['updated_at']))
        # Found by its event's time, gone from before its own creation.
        self.assertEqual(1, len(db_api.actions_get(
            self.uuid, changes_since='2029-12-31T00:00:00')))
        self.assertEqual([], db_api.actions_get(
            self.uuid, changes_before=created[:4] + '-01-01T00:00:00'))
        self.assertEqual([], db_api.actions_get(
            self.uuid, changes_since='2030-01-02T00:00:00'))

    def test_without_an_action_a_step_records_nothing(self):
        self._step_event_at(datetime.datetime(2030, 1, 1), 'req-unknown', [
            {'name': 'compute_step'},
            {'name': 'compute_done', 'result': 'Success'}])
        self.assertEqual([], self.events())
        self.assertRaises(exception.ActionNotFound, db_api.action_event_start,
                          self.uuid, 'req-unknown', 'compute_step')

    def test_an_error_event_marks_its_action(self):
        self._step_event_at(datetime.datetime(2030, 1, 1), events=[
            {'name': 'compute_step', 'result': 'Error'}])
        self.assertEqual('Error', db_api.action_get_by_request_id(
            self.uuid, self.ctxt.request_id)['message'])
        [event] = self.events()
        self.assertEqual('Error', event['result'])
