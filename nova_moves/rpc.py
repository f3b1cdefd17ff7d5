"""oslo.messaging plumbing: one transport per process, request contexts
serialized into every message, and our exceptions re-raised on the caller.

With ``[DEFAULT] rpc_stats_dir`` set, clients time their calls and casts
and servers time their handlers (nova_moves.rpcstats)."""
import inspect
import time

import oslo_messaging as messaging
from oslo_messaging import opts as messaging_opts
from oslo_messaging.rpc import dispatcher

from nova_moves import broker_tls
from nova_moves import conf
from nova_moves import context as nm_context
from nova_moves import kombu_autoretry
from nova_moves import rpcstats

CONF = conf.CONF
EXCHANGE = 'nova_moves'
ALLOWED_EXMODS = ['nova_moves.exception']


class RequestContextSerializer(messaging.Serializer):
    """Carries the RequestContext across a hop; entity values are plain
    JSON-able dicts and lists, so they pass through untouched."""

    def serialize_entity(self, ctxt, entity):
        return entity

    def deserialize_entity(self, ctxt, entity):
        return entity

    def serialize_context(self, ctxt):
        return ctxt.to_dict()

    def deserialize_context(self, ctxt):
        # Creating the context stores it in thread-local storage, so every
        # log line written by the handler carries its request id.
        return nm_context.RequestContext.from_dict(ctxt)


class _Transports:
    """Lazily built transport, one per process; kept on the class so that
    nothing global is mutated at import time."""
    transport = None


# A broker restart (or a node lost, in a cluster) loses no step: topic
# queues are quorum queues (durable, replicated where there are nodes to
# replicate to) and kombu publishes persistent messages, confirmed by the
# broker (oslo.messaging's confirm_publish), so a cast the sender saw
# succeed is on disk. Reply and fanout queues stay transient: a call in
# flight during the restart times out as before. The cost is measured in
# doc/scale.md ("A broker restart loses no step"). Operators may set it
# back. A connection lost in a broker outage is retried at least every
# 5 s (oslo.messaging's cap is 30: after a 40 s outage the next try
# could come ~10 s after the broker's return, past the 2 x
# report_interval a heartbeat has to be back in).
RABBIT_DEFAULTS = {'rabbit_quorum_queue': True, 'rabbit_interval_max': 5}
RABBIT_GROUP = 'oslo_messaging_rabbit'


def set_defaults(conf):
    """Project defaults for oslo.messaging's RabbitMQ options. The driver
    registers its options only when a transport is built; registering
    the same option objects first lets their defaults be set (and the
    config file still wins)."""
    for group, opts in messaging_opts.list_opts():
        if group == RABBIT_GROUP:
            conf.register_opts(opts, group=group)
    for name, value in RABBIT_DEFAULTS.items():
        conf.set_default(name, value, group=RABBIT_GROUP)


def get_transport():
    if _Transports.transport is None:
        messaging.set_transport_defaults(control_exchange=EXCHANGE)
        set_defaults(CONF)
        # A TLS file that is not there fails here, not at every retry.
        broker_tls.check(CONF)
        broker_tls.install()
        # One class fewer per message for the collector (the module
        # says why; skipped on a kombu it was not written against).
        kombu_autoretry.install()
        _Transports.transport = messaging.get_rpc_transport(
            CONF, allowed_remote_exmods=ALLOWED_EXMODS)
    return _Transports.transport


def cleanup():
    if _Transports.transport is not None:
        _Transports.transport.cleanup()
        _Transports.transport = None


def _recorder():
    return rpcstats.get_recorder(CONF.rpc_stats_dir, CONF.host)


class _TimedClient:
    """An RPCClient (or a prepared call context) whose call and cast are
    timed per '<topic>.<method>'; everything else passes through."""

    def __init__(self, client, topic, recorder):
        self._client = client
        self._topic = topic
        self._recorder = recorder

    def prepare(self, *args, **kwargs):
        return _TimedClient(self._client.prepare(*args, **kwargs),
                            kwargs.get('topic') or self._topic,
                            self._recorder)

    def _timed(self, kind, ctxt, method, kwargs):
        start = time.monotonic()
        failed = True
        try:
            result = getattr(self._client, kind)(ctxt, method, **kwargs)
            failed = False
            return result
        finally:
            self._recorder.record(kind, '%s.%s' % (self._topic, method),
                                  time.monotonic() - start, failed)

    def call(self, ctxt, method, **kwargs):
        return self._timed('call', ctxt, method, kwargs)

    def cast(self, ctxt, method, **kwargs):
        return self._timed('cast', ctxt, method, kwargs)

    def __getattr__(self, name):
        return getattr(self._client, name)


class _TimedEndpoint:
    """An endpoint whose public methods record how long they ran; the
    dispatcher finds ``target`` and the methods through it unchanged."""

    def __init__(self, endpoint, topic, recorder):
        self._endpoint = endpoint
        self._topic = topic
        self._recorder = recorder

    def __getattr__(self, name):
        attr = getattr(self._endpoint, name)
        if name.startswith('_') or not inspect.isroutine(attr):
            return attr
        recorder, label = self._recorder, '%s.%s' % (self._topic, name)

        def timed(*args, **kwargs):
            recorder.begin(label)
            start = time.monotonic()
            failed = True
            try:
                result = attr(*args, **kwargs)
                failed = False
                return result
            finally:
                recorder.record('handle', label, time.monotonic() - start,
                                failed)
        return timed


def get_client(target, version_cap=None, timeout=None, mandatory=False):
    """``mandatory``: publish with the mandatory flag (oslo.messaging's
    at_least_once), so a message no queue takes (the broker lost its
    queues, the consumer is gone) raises MessageUndeliverable at the
    sender instead of vanishing."""
    client = messaging.get_rpc_client(
        get_transport(), target, version_cap=version_cap,
        serializer=RequestContextSerializer(), timeout=timeout,
        transport_options=messaging.TransportOptions(
            at_least_once=mandatory))
    recorder = _recorder()
    if recorder is None:
        return client
    return _TimedClient(client, target.topic, recorder)


def get_server(target, endpoints):
    recorder = _recorder()
    if recorder is not None:
        endpoints = [_TimedEndpoint(e, target.topic, recorder)
                     for e in endpoints]
    return messaging.get_rpc_server(
        get_transport(), target, endpoints, executor='threading',
        serializer=RequestContextSerializer(),
        access_policy=dispatcher.DefaultRPCAccessPolicy)
