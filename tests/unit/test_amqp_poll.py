"""nova_moves.amqp_poll: oslo.messaging's rabbit listener and reply
waiter wait [DEFAULT] rpc_ack_interval after a message before their first
empty wake-up (then double it), unless a prefetch count is set; checked
on oslo.messaging's own polling loops, driven by a connection that
records the timeouts it is given."""
import threading

from oslo_messaging._drivers import amqpdriver
from oslo_messaging._drivers import common as rpc_common
from oslo_messaging import conffixture
import testtools

from nova_moves import amqp_poll
from nova_moves import conf
from nova_moves import rpc

CONF = conf.CONF


class _Conn:
    """Nothing to read: every consume times out; the test's ``stop`` is
    called after ``polls`` of them."""

    def __init__(self, polls):
        self.polls, self.timeouts, self.stop = polls, [], None

    def declare_direct_consumer(self, queue, callback):
        pass

    def stop_consuming(self):
        pass

    def consume(self, timeout=None):
        self.timeouts.append(timeout)
        if len(self.timeouts) == self.polls:
            self.stop()
        raise rpc_common.Timeout()


class _Driver:
    prefetch_size = 0


class AmqpPollTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(conffixture.ConfFixture(CONF))
        rpc.set_defaults(CONF)
        self.addCleanup(setattr, amqpdriver, amqp_poll.NAME,
                        getattr(amqpdriver, amqp_poll.NAME))
        # As oslo.messaging ships it, whatever a transport built earlier
        # in this process installed.
        setattr(amqpdriver, amqp_poll.NAME, amqp_poll._ORIGINAL)

    def _listener_timeouts(self):
        conn = _Conn(3)
        listener = amqpdriver.AMQPListener(_Driver(), conn)
        conn.stop = listener._shutdown.set
        self.assertEqual([], listener.poll(timeout=30))
        return conn.timeouts

    def _reply_waiter_timeouts(self):
        conn = _Conn(3)
        waiter = amqpdriver.ReplyWaiter.__new__(amqpdriver.ReplyWaiter)
        exit_event = threading.Event()
        conn.stop = exit_event.set
        waiter.conn, waiter._thread_exit_event = conn, exit_event
        waiter.poll()
        return conn.timeouts

    def test_the_pinned_oslo_messaging_is_the_known_one(self):
        # Fails when an oslo.messaging upgrade stops reading the constant
        # at each poll: read amqpdriver again (the module says why).
        self.assertTrue(amqp_poll.known())

    def test_oslo_messaging_alone_polls_from_a_millisecond(self):
        self.assertEqual([0.001, 0.002, 0.004], self._listener_timeouts())

    def test_installed_the_listener_waits_the_interval(self):
        self.assertEqual(0.05, amqp_poll.install(CONF))
        self.assertEqual([0.05, 0.1, 0.2], self._listener_timeouts())
        self.assertEqual([0.05, 0.1, 0.2], self._reply_waiter_timeouts())

    def test_the_option_sets_it(self):
        CONF.set_override('rpc_ack_interval', 0.2)
        self.assertEqual(0.2, amqp_poll.install(CONF))
        self.assertEqual([0.2, 0.4, 0.8], self._listener_timeouts())

    def test_a_prefetch_count_keeps_oslo_messagings_millisecond(self):
        # Unacked messages count against the prefetch: an ack must not wait.
        CONF.set_override('rabbit_qos_prefetch_count', 10,
                          group='oslo_messaging_rabbit')
        self.assertEqual(0.001, amqp_poll.install(CONF))
        self.assertEqual([0.001, 0.002, 0.004], self._listener_timeouts())

    def test_the_interval_is_bounded_by_the_option(self):
        self.assertRaises(ValueError, CONF.set_override,
                          'rpc_ack_interval', 0)
        self.assertRaises(ValueError, CONF.set_override,
                          'rpc_ack_interval', 6.0)
