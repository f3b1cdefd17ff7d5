"""Calls apart from casts (nova_moves.rpc CALLS_SUFFIX): a server takes
calls on '<topic>_calls' too, a client calls there once its peer's
version says it listens, and through the topic as before when capped
below; casts (the move steps) always go to the topic's own queues. The
calls' transport declares its topic queues as the reply queues are."""
import threading
from unittest import mock

import oslo_messaging as messaging
from oslo_messaging import conffixture
import testtools

from nova_moves import conf
from nova_moves import context as nm_context
from nova_moves import rpc

CONF = conf.CONF


class Endpoint:
    target = messaging.Target(version='1.1')

    def __init__(self):
        self.seen = threading.Event()

    def echo(self, ctxt, value):
        return value

    def note(self, ctxt, value):
        self.seen.set()


class CallsQueuesTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(conffixture.ConfFixture(CONF))
        rpc.cleanup()
        CONF.set_override('transport_url', 'fake:/')
        CONF.set_override('rpc_stats_dir', None)
        self.addCleanup(CONF.clear_override, 'rpc_stats_dir')
        self.addCleanup(rpc.cleanup)
        self.ctxt = nm_context.get_admin_context()

    def _serve(self, transport, target):
        """A plain oslo.messaging server on only one of the two."""
        endpoint = Endpoint()
        server = messaging.get_rpc_server(
            transport, target, [endpoint], executor='threading',
            serializer=rpc.RequestContextSerializer())
        server.start()
        self.addCleanup(server.wait)
        self.addCleanup(server.stop)
        return endpoint

    def _client(self, cap=None):
        return rpc.get_client(messaging.Target(topic='t', version='1.0'),
                              version_cap=cap, calls_version='1.1',
                              timeout=5)

    def test_a_server_takes_calls_on_both(self):
        server = rpc.get_server(messaging.Target(topic='t', server='unit'),
                                [Endpoint()])
        server.start()
        self.addCleanup(server.wait)
        self.addCleanup(server.stop)
        for transport, target in (
                (rpc.get_transport(), messaging.Target(topic='t')),
                (rpc.get_calls_transport(), rpc.calls_target(
                    messaging.Target(topic='t')))):
            client = messaging.get_rpc_client(
                transport, target, serializer=rpc.RequestContextSerializer(),
                timeout=5)
            self.assertEqual(3, client.prepare(server='unit').call(
                self.ctxt, 'echo', value=3))

    def test_calls_go_to_the_calls_queues(self):
        self._serve(rpc.get_calls_transport(), rpc.calls_target(
            messaging.Target(topic='t', server='unit')))
        self.assertEqual(5, self._client().prepare(server='unit').call(
            self.ctxt, 'echo', value=5))

    def test_capped_below_calls_go_with_the_casts(self):
        self._serve(rpc.get_transport(),
                    messaging.Target(topic='t', server='unit'))
        self.assertEqual(7, self._client(cap='1.0').prepare(
            server='unit').call(self.ctxt, 'echo', value=7))

    def test_casts_stay_on_the_topic(self):
        endpoint = self._serve(rpc.get_transport(),
                               messaging.Target(topic='t', server='unit'))
        self._client().prepare(server='unit').cast(self.ctxt, 'note',
                                                   value=1)
        self.assertTrue(endpoint.seen.wait(5))

    def test_calls_queues_declared_as_the_reply_queues(self):
        url = rpc.calls_url(CONF)
        self.assertEqual('false', url.query['rabbit_quorum_queue'])
        self.assertEqual('false', url.query['amqp_durable_queues'])
        rpc.set_defaults(CONF)
        CONF.set_override('rabbit_transient_quorum_queue', True,
                          group=rpc.RABBIT_GROUP)
        self.addCleanup(CONF.clear_override,
                        'rabbit_transient_quorum_queue',
                        group=rpc.RABBIT_GROUP)
        url = rpc.calls_url(CONF)
        self.assertEqual('true', url.query['rabbit_quorum_queue'])
        self.assertEqual('true', url.query['amqp_durable_queues'])

    def test_the_calls_transport_reads_its_url_options(self):
        CONF.set_override('transport_url',
                          'rabbit://guest:guest@127.0.0.1:1/v')
        url = rpc.calls_url(CONF)
        self.assertIn('rabbit_quorum_queue=false', str(url))
        self.assertEqual('rabbit://guest:guest@127.0.0.1:1/v',
                         str(url).split('?')[0])

    def test_a_call_no_calls_queue_takes_goes_through_the_topic(self):
        casts, calls = mock.Mock(), mock.Mock()
        casts.can_send_version.return_value = True
        calls.call.side_effect = messaging.MessageUndeliverable(
            Exception('no route'), 'nova_moves_calls', 't_calls', {})
        casts.call.return_value = 'answered'
        client = rpc._SplitClient(casts, calls, '1.1')
        self.assertEqual('answered', client.call(self.ctxt, 'echo',
                                                 value=1))
        calls.call.assert_called_once_with(self.ctxt, 'echo', value=1)
        casts.call.assert_called_once_with(self.ctxt, 'echo', value=1)

    def test_the_calls_client_publishes_mandatory(self):
        client = self._client()
        self.assertTrue(client._calls.transport_options.at_least_once)
        self.assertFalse(client._casts.transport_options.at_least_once)
