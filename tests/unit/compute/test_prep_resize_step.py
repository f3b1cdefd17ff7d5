"""prep_resize's guarded step on a real (SQLite) database through the
conductor's compute_db endpoint object: from conductor RPC 1.3 one call
at its end (guard + whole event), below it a start and an end call; a
stale message writes nothing and casts nothing."""
from nova_moves.compute import manager as compute_manager
from nova_moves.db import api as db_api
from nova_moves import states
from tests.unit.compute import served
from tests.unit.compute import steps_base


class RecordingCasts:
    def __init__(self):
        self.sent = []

    def resize_instance(self, ctxt, host, instance_uuid, migration_uuid):
        self.sent.append(('resize_instance', host, migration_uuid))


class PrepResizeStepTest(steps_base.ColdStepTestCase):

    def _compute(self, whole_steps):
        return served.Served(compute_manager.ComputeManager(
            'h2', conductor=steps_base.RecordingConductor(whole_steps),
            compute_api=RecordingCasts()))

    def _prep(self, compute):
        compute.prep_resize(self.ctxt, self.server, self.migration['uuid'],
                            self.flavor, {}, [])

    def test_rpc_13_one_call_at_the_end_with_the_whole_event(self):
        compute = self._compute(whole_steps=True)
        self._prep(compute)
        [event] = compute.conductor.advances
        self.assertEqual('Success', event['result'])
        self.assertIn('start_time', event)
        self.assertEqual([('compute_prep_resize', 'Success', 'h2')],
                         self._events())
        [row] = db_api.action_events_get(self.action['id'])
        self.assertLessEqual(row['start_time'], row['finish_time'])
        self.assertEqual(
            [('resize_instance', 'h1', self.migration['uuid'])],
            compute.compute_rpcapi.sent)

    def test_below_rpc_13_a_start_and_an_end_call(self):
        compute = self._compute(whole_steps=False)
        self._prep(compute)
        self.assertEqual([None, 'Success'], [
            e['result'] for e in compute.conductor.advances])
        self.assertNotIn('start_time', compute.conductor.advances[1])
        self.assertEqual([('compute_prep_resize', 'Success', 'h2')],
                         self._events())
        self.assertEqual(1, len(compute.compute_rpcapi.sent))

    def test_stale_message_writes_and_casts_nothing(self):
        db_api.move_failed(self.migration['uuid'],
                           expected_status=[states.M_PRE_MIGRATING])
        before = db_api.migration_get(self.migration['uuid'])
        compute = self._compute(whole_steps=True)
        self._prep(compute)
        self.assertEqual([], self._events())
        self.assertEqual([], compute.compute_rpcapi.sent)
        after = db_api.migration_get(self.migration['uuid'])
        self.assertEqual((states.M_ERROR, before['updated_at']),
                         (after['status'], after['updated_at']))
