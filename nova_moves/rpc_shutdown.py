"""Stopping an RPC server without the broker talking into a closing
channel.

oslo.messaging's rabbit driver deletes a server's fanout queue when it
closes the listener's connection, while the consumer on that queue is
still registered. RabbitMQ answers the deletion with a consumer cancel
notification (basic.cancel) that arrives after the client has begun
closing the channel, and py-amqp logs "Received method (60, 30) during
closing channel" at every stop. Cancelling the listener's consumers
first, once it no longer polls, closes things in order: nothing is
consuming when the queue goes away.
"""
from oslo_log import log as logging

LOG = logging.getLogger(__name__)


def _rabbit_connection(server):
    """The listener's driver connection, or None (fake:// and other
    drivers have none; the attributes are oslo.messaging internals,
    hence every getattr)."""
    adapter = getattr(server, 'listener', None)
    listener = getattr(adapter, '_poll_style_listener', adapter)
    return getattr(listener, 'conn', None)


def cancel_consumers(server):
    """Cancel the stopped server's consumers while the connection is up.
    Best effort: a broker already gone has nothing to notify."""
    conn = _rabbit_connection(server)
    consumers = getattr(conn, '_consumers', None)
    kombu_conn = getattr(getattr(conn, 'connection', None), 'connection',
                         None)
    if not consumers or not getattr(kombu_conn, 'connected', False):
        return 0
    cancelled = 0
    for consumer, tag in list(consumers.items()):
        try:
            consumer.cancel(tag=tag)
            cancelled += 1
        except Exception as exc:  # the broker went away meanwhile
            LOG.debug('Cancelling consumer %s at stop failed: %s', tag, exc)
            break
    return cancelled


def stop_server(server):
    """server.stop(), then cancel its consumers before server.wait()
    closes the connection and deletes the fanout queue."""
    server.stop()
    cancel_consumers(server)
