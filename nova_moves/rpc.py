"""oslo.messaging plumbing: one transport per process for casts and one
for calls, request contexts serialized into every message, and our
exceptions re-raised on the caller.

With ``[DEFAULT] rpc_stats_dir`` set, clients time their calls and casts
and servers time their handlers (nova_moves.rpcstats)."""
import inspect
import time

import kombu.exceptions
from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_messaging import opts as messaging_opts
from oslo_messaging.rpc import dispatcher

from nova_moves import amqp_poll
from nova_moves import broker_tls
from nova_moves import cells
from nova_moves import conf
from nova_moves import context as nm_context
from nova_moves import kombu_autoretry
from nova_moves import rpc_shutdown
from nova_moves import rpcstats

CONF = conf.CONF
LOG = logging.getLogger(__name__)
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
    """Lazily built transports, one of each per process; kept on the
    class so that nothing global is mutated at import time. ``cells``:
    the other cells' pairs (casts, calls) by transport URL, built for
    clients made inside cells.target (the API reaching a server's
    cell)."""
    transport = None
    calls = None
    cells = {}


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

# Calls travel apart from casts: to '<topic>_calls' on an exchange of
# their own, on a second transport whose topic queues are declared like
# the reply queues (rabbit_quorum_queue = rabbit_transient_quorum_queue,
# oslo.messaging's per-transport URL options). A call is no more durable
# than its reply, which is on a transient queue unless the operator made
# those quorum too (a cluster where a lost node must lose nothing): a
# call in flight during a broker restart times out either way, and its
# caller handles that. The casts that carry a move's steps stay on the
# quorum queues, so a broker restart still loses no step; what is saved
# is the quorum queue's log write, fsync and settle of every call
# (RabbitMQ's CPU per cold move, doc/performance.md 2026-11-29). Each
# server also listens on '<topic>_calls'; a client calls there only when
# its peer's RPC version says it does (rolling upgrades: capped below,
# calls go to '<topic>' as before), with the mandatory flag: a call no
# calls queue takes (the broker restarted, the server has not declared
# its queue again yet) comes back unrun and goes through '<topic>'.
CALLS_SUFFIX = broker_tls.CALLS_SUFFIX
CALLS_EXCHANGE = EXCHANGE + CALLS_SUFFIX


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


def _cell_url():
    """The targeted cell's transport URL when it is not this process's
    own (cells.target), else None."""
    cell = cells.current()
    if cell is None or not cell.transport_url:
        return None
    if cell.transport_url == CONF.transport_url:
        return None
    return cell.transport_url


def _cell_transports(url):
    pair = _Transports.cells.get(url)
    if pair is None:
        _own_transport()  # the defaults, TLS checks and hooks first
        set_defaults(CONF)  # also when a test put its transport in
        casts = messaging.get_rpc_transport(
            CONF, url=url, allowed_remote_exmods=ALLOWED_EXMODS)
        calls = messaging.get_rpc_transport(
            CONF, url=calls_url(CONF, url),
            allowed_remote_exmods=ALLOWED_EXMODS)
        pair = _Transports.cells.setdefault(url, (casts, calls))
    return pair


# The broker could not be reached within the transport's retries:
# oslo.messaging's MessageDeliveryFailure, or kombu's connection error
# raised as it is while a pooled connection is re-established. Worth
# sending again; a message no queue takes (MessageUndeliverable) is not.
UNREACHABLE = (messaging.MessageDeliveryFailure,
               kombu.exceptions.OperationalError)
CAST_RESEND_INTERVAL = 1.0


def cast_waiting(prepared, ctxt, method, **kwargs):
    """Cast a move's message from a client prepared with ``retry`` (the
    transport's own retries give up within seconds), sending it again
    while the broker is unreachable for up to [DEFAULT]
    move_step_cast_wait; then the failure is raised to the sender, which
    undoes the move. oslo.messaging's default (retry forever) would hold
    the sender as long as the broker is away: the API's request thread,
    for a whole cell's broker outage."""
    deadline = time.monotonic() + CONF.move_step_cast_wait
    while True:
        try:
            return prepared.cast(ctxt, method, **kwargs)
        except UNREACHABLE as exc:
            if time.monotonic() >= deadline:
                raise
            LOG.warning('%s not sent (the broker is unreachable: %s); '
                        'trying again', method, exc)
            time.sleep(CAST_RESEND_INTERVAL)


def get_transport():
    url = _cell_url()
    if url is not None:
        return _cell_transports(url)[0]
    return _own_transport()


def _own_transport():
    if _Transports.transport is None:
        messaging.set_transport_defaults(control_exchange=EXCHANGE)
        set_defaults(CONF)
        # A TLS file that is not there fails here, not at every retry.
        broker_tls.check(CONF)
        broker_tls.install()
        # One class fewer per message for the collector (the module
        # says why; skipped on a kombu it was not written against).
        kombu_autoretry.install()
        # Fewer empty wake-ups per message received (the module says why).
        amqp_poll.install(CONF)
        _Transports.transport = messaging.get_rpc_transport(
            CONF, allowed_remote_exmods=ALLOWED_EXMODS)
    return _Transports.transport


def calls_url(conf, url=None):
    """The calls' transport URL: [DEFAULT] transport_url (or ``url``, a
    cell's) with the topic queues declared as the reply queues are
    (query options override the [oslo_messaging_rabbit] ones for this
    transport only)."""
    url = messaging.TransportURL.parse(conf, url)
    transient_quorum = conf[RABBIT_GROUP].rabbit_transient_quorum_queue
    url.query = dict(url.query,
                     rabbit_quorum_queue=str(transient_quorum).lower(),
                     amqp_durable_queues=str(transient_quorum).lower())
    return url


def get_calls_transport():
    url = _cell_url()
    if url is not None:
        return _cell_transports(url)[1]
    if _Transports.calls is None:
        _own_transport()  # the defaults, TLS checks and hooks first
        set_defaults(CONF)  # also when a test put its transport in
        _Transports.calls = messaging.get_rpc_transport(
            CONF, url=calls_url(CONF), allowed_remote_exmods=ALLOWED_EXMODS)
    return _Transports.calls


def cleanup():
    done = set()
    transports = [getattr(_Transports, name) for name in ('calls',
                                                          'transport')]
    for pair in _Transports.cells.values():
        transports.extend(pair)
    _Transports.transport = _Transports.calls = None
    _Transports.cells = {}
    for transport in transports:
        # A test's in-memory transport may serve as both.
        if transport is not None and id(transport) not in done:
            done.add(id(transport))
            transport.cleanup()


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


def calls_target(target):
    """Where ``target``'s calls go: its topic's calls queues."""
    return messaging.Target(
        exchange=CALLS_EXCHANGE, topic=target.topic + CALLS_SUFFIX,
        namespace=target.namespace, version=target.version,
        server=target.server)


class _SplitClient:
    """Casts through ``casts``, calls through ``calls`` (the calls
    queues) once ``calls_version`` may be sent, through ``casts``
    before (a peer capped below it does not listen there)."""

    def __init__(self, casts, calls, calls_version):
        self._casts = casts
        self._calls = calls
        self._calls_version = calls_version

    def prepare(self, **kwargs):
        return _SplitClient(self._casts.prepare(**kwargs),
                            self._calls.prepare(**kwargs),
                            self._calls_version)

    def call(self, ctxt, method, **kwargs):
        if self._casts.can_send_version(self._calls_version):
            try:
                return self._calls.call(ctxt, method, **kwargs)
            except messaging.MessageUndeliverable:
                # No calls queue took it (published with the mandatory
                # flag, so nothing ran): a broker back from a restart
                # before the server declared its transient queue again.
                # The topic's own queue outlives the restart.
                LOG.info('No calls queue for %s yet; calling through '
                         'its topic', method)
        return self._casts.call(ctxt, method, **kwargs)

    def cast(self, ctxt, method, **kwargs):
        return self._casts.cast(ctxt, method, **kwargs)

    def __getattr__(self, name):
        return getattr(self._casts, name)


def get_client(target, version_cap=None, timeout=None, mandatory=False,
               calls_version=None):
    """``mandatory``: publish with the mandatory flag (oslo.messaging's
    at_least_once), so a message no queue takes (the broker lost its
    queues, the consumer is gone) raises MessageUndeliverable at the
    sender instead of vanishing. ``calls_version``: the peer's RPC
    version from which its servers take calls on the calls queues
    (None: every call goes with the casts)."""
    options = dict(version_cap=version_cap,
                   serializer=RequestContextSerializer(), timeout=timeout,
                   transport_options=messaging.TransportOptions(
                       at_least_once=mandatory))
    client = messaging.get_rpc_client(get_transport(), target, **options)
    if calls_version is not None:
        # Mandatory: a call no calls queue takes comes back at once and
        # goes through the topic (_SplitClient.call).
        client = _SplitClient(client, messaging.get_rpc_client(
            get_calls_transport(), calls_target(target), **dict(
                options, transport_options=messaging.TransportOptions(
                    at_least_once=True))), calls_version)
    recorder = _recorder()
    if recorder is None:
        return client
    return _TimedClient(client, target.topic, recorder)


class _Servers:
    """The RPC server of a topic and the one of its calls queues, started,
    stopped and waited for together."""

    def __init__(self, servers):
        self.servers = servers

    def start(self):
        for server in self.servers:
            server.start()

    def stop(self):
        for server in self.servers:
            rpc_shutdown.stop_server(server)

    def wait(self):
        for server in self.servers:
            server.wait()


def get_server(target, endpoints):
    """A server of ``target`` and of its calls queues (calls_target)."""
    recorder = _recorder()
    if recorder is not None:
        endpoints = [_TimedEndpoint(e, target.topic, recorder)
                     for e in endpoints]
    return _Servers([messaging.get_rpc_server(
        transport, where, endpoints, executor='threading',
        serializer=RequestContextSerializer(),
        access_policy=dispatcher.DefaultRPCAccessPolicy)
        for transport, where in ((get_transport(), target),
                                 (get_calls_transport(),
                                  calls_target(target)))])
