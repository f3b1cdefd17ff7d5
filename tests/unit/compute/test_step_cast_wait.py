"""A move step's cast waits for a broker that is restarting: the
transport's own retries (move_step_cast_retries) give up within seconds,
and a step given up on fails its move (measured by the harness's
broker-kill scenario: 14 of 100 cold migrations rolled back after a
5 s broker kill). A step no queue takes still fails at once."""
import kombu.exceptions
import oslo_messaging as messaging
import testtools

from nova_moves.compute import rpcapi as compute_rpcapi
from nova_moves.conductor import rpcapi as conductor_rpcapi
from nova_moves import conf
from nova_moves import rpc

CONF = conf.CONF


class _Client:
    """A prepared step client failing as a down broker does, then
    sending."""

    def __init__(self, failures):
        self.failures = list(failures)
        self.sent = []
        self.prepared = []

    def prepare(self, **kwargs):
        self.prepared.append(kwargs)
        return self

    def cast(self, ctxt, method, **kwargs):
        if self.failures:
            raise self.failures.pop(0)
        self.sent.append(method)


class StepCastWaitTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        CONF([], project='nova_moves', default_config_files=[])
        self.patch(rpc, 'CAST_RESEND_INTERVAL', 0.01)

    def _api(self, failures):
        api = compute_rpcapi.ComputeAPI.__new__(compute_rpcapi.ComputeAPI)
        api.step_client = _Client(failures)
        return api

    def test_waits_for_the_broker_to_return(self):
        api = self._api([
            messaging.MessageDeliveryFailure('Unable to connect to AMQP '
                                             'server after 3 tries'),
            kombu.exceptions.OperationalError('[Errno 111] Connection '
                                              'refused')])
        api._step('ctxt', 'h2', 'prep_resize', instance_uuid='i')
        self.assertEqual(['prep_resize'], api.step_client.sent)
        self.assertEqual(CONF.move_step_cast_retries,
                         api.step_client.prepared[0]['retry'])

    def test_gives_up_after_move_step_cast_wait(self):
        CONF.set_override('move_step_cast_wait', 0)
        self.addCleanup(CONF.clear_override, 'move_step_cast_wait')
        api = self._api([messaging.MessageDeliveryFailure('down')])
        self.assertRaises(messaging.MessageDeliveryFailure, api._step,
                          'ctxt', 'h2', 'prep_resize')
        self.assertEqual([], api.step_client.sent)

    def test_unroutable_step_fails_at_once(self):
        api = self._api([messaging.MessageUndeliverable(
            Exception('no route'), 'nova_moves', 'compute.h2', {})])
        self.assertRaises(messaging.MessageUndeliverable, api._step,
                          'ctxt', 'h2', 'prep_resize')
        self.assertEqual([], api.step_client.sent)


class StartCastWaitTest(testtools.TestCase):
    """The API's cast of a cold move's start (conductor migrate_server)
    waits as a step's does, then gives up: with oslo.messaging's default
    (retry forever) a migrate of a server whose cell's broker was killed
    held its API request thread until the broker returned (590 s in a
    two-cell walk of doc/cells.md)."""

    def setUp(self):
        super().setUp()
        CONF([], project='nova_moves', default_config_files=[])
        self.patch(rpc, 'CAST_RESEND_INTERVAL', 0.01)

    def _api(self, failures):
        api = conductor_rpcapi.ComputeTaskAPI.__new__(
            conductor_rpcapi.ComputeTaskAPI)
        api.client = _Client(failures)
        return api

    def test_waits_for_the_broker_to_return(self):
        api = self._api([messaging.MessageDeliveryFailure('down')])
        api.migrate_server('ctxt', 'i')
        self.assertEqual(['migrate_server'], api.client.sent)
        self.assertEqual(CONF.move_step_cast_retries,
                         api.client.prepared[0]['retry'])

    def test_gives_up_after_move_step_cast_wait(self):
        CONF.set_override('move_step_cast_wait', 0)
        self.addCleanup(CONF.clear_override, 'move_step_cast_wait')
        api = self._api([kombu.exceptions.OperationalError('refused')])
        self.assertRaises(kombu.exceptions.OperationalError,
                          api.migrate_server, 'ctxt', 'i')
        self.assertEqual([], api.client.sent)

    def test_live_migration_and_evacuation_starts(self):
        api = self._api([messaging.MessageDeliveryFailure('down')] * 2)
        api.live_migrate_instance('ctxt', 'i', 'm')
        api.rebuild_instance('ctxt', 'i', 'm')
        self.assertEqual(['live_migrate_instance', 'rebuild_instance'],
                         api.client.sent)
        self.assertEqual([CONF.move_step_cast_retries] * 2,
                         [p['retry'] for p in api.client.prepared])

    def test_cross_cell_confirm_and_unshelve(self):
        api = self._api([messaging.MessageDeliveryFailure('down')] * 2)
        api.confirm_snapshot_based_resize('ctxt', 'i', 'm')
        api.unshelve_instance('ctxt', 'i')
        self.assertEqual(['confirm_snapshot_based_resize',
                          'unshelve_instance'], api.client.sent)
        self.assertEqual([CONF.move_step_cast_retries] * 2,
                         [p['retry'] for p in api.client.prepared])
