"""A tap on the stack's RPC exchange and an injector that sends a captured
message again, exactly as a redelivery or a late copy would arrive.

The tap is one more queue bound with ``#`` to the ``nova_moves`` topic
exchange (casts) and to ``nova_moves_calls`` (calls, rpc.CALLS_EXCHANGE):
the broker copies every request (cast or call, to a topic or to a
server) into it, while the real consumers get theirs as usual. Replies go
to their own exchanges and are not seen. Nothing in the product knows the
tap exists."""
import copy
import json
import time
import uuid

import kombu

from nova_moves import rpc

# oslo.messaging keeps the last ids it consumed and drops a message whose
# _unique_id it has seen, so a resent copy gets a fresh one: the handler,
# not that cache, is what must make the step harmless (a consumer that
# restarted, or another host, has no such cache).
UNIQUE_ID = '_unique_id'
REPLY_KEYS = ('_msg_id', '_reply_q', '_timeout')


class Captured:
    def __init__(self, routing_key, envelope, exchange=rpc.EXCHANGE):
        self.exchange = exchange
        self.routing_key = routing_key
        self.envelope = envelope
        self.message = json.loads(envelope['oslo.message'])

    @property
    def topic(self):
        """The topic the request went to, a call's as its cast's would
        (its queues are '<topic>_calls', rpc.CALLS_SUFFIX)."""
        topic = self.routing_key.split('.')[0]
        return topic[:-len(rpc.CALLS_SUFFIX)] if topic.endswith(
            rpc.CALLS_SUFFIX) else topic

    @property
    def method(self):
        return self.message['method']

    @property
    def args(self):
        return self.message['args']

    @property
    def is_call(self):
        return '_msg_id' in self.message

    def __repr__(self):
        return '<%s %s %s>' % (self.routing_key, self.method,
                               sorted(self.args))


class RpcTap:
    """tap = RpcTap(stack.transport_url); tap.start(); ...;
    tap.find('prep_resize', instance_uuid=...); tap.resend(msg)"""

    def __init__(self, transport_url,
                 exchanges=(rpc.EXCHANGE, rpc.CALLS_EXCHANGE)):
        # kombu names the AMQP transport 'amqp'; oslo.messaging 'rabbit'.
        self.url = transport_url.replace('rabbit://', 'amqp://', 1)
        self.exchanges = exchanges
        self.queue = 'nm-tap-%s' % uuid.uuid4().hex[:12]
        self.captured = []
        self.connection = None

    def start(self):
        self.connection = kombu.Connection(self.url)
        self.connection.connect()
        self.channel = self.connection.channel()
        self.channel.queue_declare(queue=self.queue, exclusive=True,
                                   auto_delete=True)
        # Both exchanges exist once the stack's servers are up.
        for exchange in self.exchanges:
            self.channel.queue_bind(queue=self.queue, exchange=exchange,
                                    routing_key='#')
        return self

    def stop(self):
        if self.connection is not None:
            self.connection.release()
            self.connection = None

    def collect(self):
        """Move whatever the broker copied to the tap into ``captured``."""
        while True:
            raw = self.channel.basic_get(queue=self.queue, no_ack=True)
            if raw is None:
                return self.captured
            body = raw.body
            if isinstance(body, bytes):
                body = body.decode('utf-8')
            self.captured.append(Captured(
                raw.delivery_info['routing_key'], json.loads(body),
                raw.delivery_info['exchange']))

    def find(self, method, mentioning=None, **match):
        """Captured requests for ``method`` (None: any) whose args include
        ``match`` and, anywhere in them, the string ``mentioning``."""
        return [c for c in self.collect()
                if method in (None, c.method)
                and all(c.args.get(k) == v for k, v in match.items())
                and (mentioning is None or mentioning in json.dumps(c.args))]

    def wait_for(self, method, timeout=30, **match):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.find(method, **match)
            if found:
                return found
            time.sleep(0.1)
        raise AssertionError('no %s %s seen on the bus within %ss; seen: %s'
                             % (method, match, timeout, self.captured))

    def clear(self):
        self.collect()
        self.captured = []

    def resend(self, captured):
        """Publish ``captured`` again to its exchange and routing key.
        A call goes out as a cast: the handler runs exactly the same, and
        nobody waits for a reply to a copy."""
        message = copy.deepcopy(captured.message)
        message[UNIQUE_ID] = uuid.uuid4().hex
        for key in REPLY_KEYS:
            message.pop(key, None)
        envelope = dict(captured.envelope,
                        **{'oslo.message': json.dumps(message)})
        producer = kombu.Producer(self.channel, auto_declare=False)
        producer.publish(envelope, exchange=captured.exchange,
                         routing_key=captured.routing_key, serializer='json')
        # The tap is bound to the same exchange: seeing the copy come back
        # proves the broker routed it (a wrong key would vanish silently).
        copy_id = message[UNIQUE_ID]
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if any(c.message.get(UNIQUE_ID) == copy_id
                   for c in self.collect()):
                return message
            time.sleep(0.05)
        raise AssertionError('resent %r was not routed' % captured)
