"""How soon oslo.messaging's rabbit consumers wake with nothing to read.

oslo.messaging's listener (amqpdriver ``AMQPListener.poll``) and reply
waiter (``ReplyWaiter.poll``) wait on the broker's socket with a timeout
that starts at ``ACK_REQUEUE_EVERY_SECONDS_MIN`` (1 ms) after every
message and doubles up to 5 s. The listener wakes to send the acks its
handler threads queued (kombu's channel is not thread-safe); the reply
waiter acks inline and has nothing to send. A message wakes either at
once whatever the timeout: only a queued ack waits for it.

Each empty wake-up costs 0.2-0.45 ms of CPU on the lab VMs (a timer
wake-up through kombu's and oslo.messaging's stacks), and a compute
receiving a message every ~50 ms woke ~6 times after each: 11-20 %
of our processes' CPU per cold move (doc/performance.md, "the
consumers' empty wake-ups"). ``[DEFAULT] rpc_ack_interval`` is that
first timeout. A received message's ack is sent within it instead of
~1 ms (its handler never waited for the ack); a process killed inside
that window has the message redelivered, which the guard every handler
starts with already refuses or finishes.

Not applied with ``[oslo_messaging_rabbit] rabbit_qos_prefetch_count``
set: unacked messages would then hold back the next ones. oslo.messaging
has no option for it; it reads the module constant at every poll, which
tests/unit/test_amqp_poll.py checks so that an upgrade that stops doing so
is looked at rather than silently ignored.
"""
from oslo_messaging._drivers import amqpdriver

NAME = 'ACK_REQUEUE_EVERY_SECONDS_MIN'
_ORIGINAL = amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN


def _unwrapped(fn):
    """The function under oslo.messaging's batch_poll_helper (which
    keeps it in its closure, without functools.wraps)."""
    for cell in fn.__closure__ or ():
        inner = cell.cell_contents
        if getattr(inner, '__name__', None) == 'poll':
            return inner
    return fn


def known():
    """True when both of oslo.messaging's polling loops read the constant
    when they run (so setting it takes effect)."""
    return all(NAME in fn.__code__.co_names for fn in (
        amqpdriver.ReplyWaiter.poll,
        _unwrapped(amqpdriver.AMQPListener.poll)))


def install(conf):
    """The first poll timeout after a message, from ``conf``; returns
    the one in force."""
    interval = conf.rpc_ack_interval
    if conf.oslo_messaging_rabbit.rabbit_qos_prefetch_count or not known():
        interval = _ORIGINAL
    amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN = min(
        interval, amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX)
    return amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN
