"""TLS to RabbitMQ and per-service broker users, as far as the product
itself is concerned.

oslo.messaging's RabbitMQ driver does TLS itself ([oslo_messaging_rabbit]
ssl, ssl_ca_file, ssl_cert_file, ssl_key_file; the broker's host name is
checked against its certificate when ssl_ca_file is set). Three things
here are the product's own:

- ``check``: the files those options name are read at every reconnect,
  where a missing one is one more "unreachable" line retried forever;
  a process refuses to start with a message naming the option instead.
- ``kombu_ssl``: the same TLS parameters for the one place that talks
  to the broker without oslo.messaging (nova-moves-manage status check).
- ``HintWatch``: the driver retries a connection the broker will never
  accept (a certificate that does not verify, plain AMQP to a TLS-only
  port, a refused user) as if it were an outage, and logs only the
  socket's error ("Connection reset by peer"). The watch adds one
  ERROR per cause naming the option to fix; it never drops a record.

And ``permissions``: the least a per-service broker user needs on its
vhost (what devstack/plugin.sh grants and the functional test runs with).
"""
import logging
import os
import ssl

from nova_moves import conf

CONF = conf.CONF
GROUP = 'oslo_messaging_rabbit'
# oslo_log names the driver's logger with a dot (as liveness.py).
_RABBIT_LOGGER = 'oslo.messaging._drivers.impl_rabbit'
_FILE_OPTS = ('ssl_ca_file', 'ssl_cert_file', 'ssl_key_file')

# nova_moves.rpc.EXCHANGE (not imported: rpc imports this module).
CONTROL_EXCHANGE = 'nova_moves'
# nova_moves.rpc.CALLS_SUFFIX, likewise.
CALLS_SUFFIX = '_calls'
# The RPC topic each kind of service serves (none for the API).
SERVED_TOPICS = {'api': None, 'conductor': 'conductor',
                 'scheduler': 'scheduler', 'compute': 'compute'}


def permissions(kind, notification_topics=('versioned_notifications',)):
    # What oslo.messaging's RabbitMQ driver declares, binds, publishes
    # to and consumes from for a kind of service: every one declares the
    # control exchange and publishes its calls and casts to it, and reads
    # replies from reply_<uuid> queues it declares; a server declares,
    # binds and reads <topic>, <topic>.<host> and <topic>_fanout(_<uuid>)
    # (exchange and queues); replies go through the default exchange
    # (amq.default, write); computes send the versioned notifications,
    # whose <topic>.<priority> queues the notifier declares and binds.
    # Configure covers declaring, write publishing and binding a queue,
    # read consuming and binding from an exchange.
    # Calls go to an exchange and '<topic>_calls' queues of their own
    # (nova_moves/rpc.py, CALLS_SUFFIX), declared and read by the server.
    names = [CONTROL_EXCHANGE, CONTROL_EXCHANGE + CALLS_SUFFIX, 'reply_.*']
    topic = SERVED_TOPICS[kind]
    if topic:
        names += [topic, topic + r'\..*', topic + '_fanout.*',
                  topic + CALLS_SUFFIX, topic + CALLS_SUFFIX + r'\..*',
                  topic + CALLS_SUFFIX + '_fanout.*']
    if kind == 'compute':
        names += [t + r'\..*' for t in notification_topics]
    configure = '^(%s)$' % '|'.join(names)
    write = '^(%s)$' % '|'.join(names + [r'amq\.default'])
    return configure, write, configure


class BrokerConfigError(Exception):
    pass


def _rabbit(conf_):
    return getattr(conf_, GROUP)


def problems(conf_=None):
    """What in [oslo_messaging_rabbit] keeps TLS from ever working."""
    rabbit = _rabbit(conf_ or CONF)
    if not rabbit.ssl:
        return []
    found = []
    for name in _FILE_OPTS:
        path = getattr(rabbit, name)
        if path and not os.access(path, os.R_OK):
            found.append('[%s] %s = %s is not a readable file' % (
                GROUP, name, path))
    if bool(rabbit.ssl_cert_file) != bool(rabbit.ssl_key_file):
        found.append('[%s] ssl_cert_file and ssl_key_file go together '
                     '(a client certificate needs its key)' % GROUP)
    return found


def check(conf_=None):
    """Raise BrokerConfigError naming every problem (process start)."""
    found = problems(conf_)
    if found:
        raise BrokerConfigError('TLS to RabbitMQ cannot work: %s'
                                % '; '.join(found))


def kombu_ssl(hostname, conf_=None):
    """kombu's ``ssl`` argument as oslo.messaging builds it (False when
    TLS is off), so a check connects the way the services do."""
    rabbit = _rabbit(conf_ or CONF)
    if not rabbit.ssl:
        return False
    params = {}
    if rabbit.ssl_key_file:
        params['keyfile'] = rabbit.ssl_key_file
    if rabbit.ssl_cert_file:
        params['certfile'] = rabbit.ssl_cert_file
    if rabbit.ssl_ca_file:
        params['ca_certs'] = rabbit.ssl_ca_file
        params['cert_reqs'] = ssl.CERT_REQUIRED
        params['server_hostname'] = hostname
    return params or True


def hint(text, conf_=None, connecting=True):
    """The configuration to look at for a failed connection's error
    text, or None when it reads like an outage. ``connecting``: the
    error came while opening the connection (a reset on an established
    one is what a killed broker looks like)."""
    rabbit = _rabbit(conf_ or CONF)
    if 'CERTIFICATE_VERIFY_FAILED' in text:
        return ('the broker\'s certificate does not verify against [%s] '
                'ssl_ca_file = %s (wrong CA, or the transport_url host is '
                'not a name in the certificate); retrying will not help'
                % (GROUP, rabbit.ssl_ca_file or '(system CAs)'))
    if rabbit.ssl and ('WRONG_VERSION_NUMBER' in text
                       or 'record layer failure' in text):
        return ('[%s] ssl = true but the broker does not speak TLS on this '
                'port (plain AMQP is 5672, TLS 5671 by convention)' % GROUP)
    if connecting and not rabbit.ssl and (
            'Connection reset by peer' in text
            or 'Server unexpectedly closed' in text):
        return ('the broker closed the connection before the AMQP '
                'handshake: if it listens with TLS only, set [%s] '
                'ssl = true and ssl_ca_file' % GROUP)
    if 'ACCESS_REFUSED' in text:
        return ('the broker refused the transport_url user: check its '
                'password (rabbitmqctl authenticate_user)')
    if 'NOT_ALLOWED' in text and 'vhost' in text:
        return ('the transport_url user has no permissions on its vhost '
                '(rabbitmqctl set_permissions -p <vhost> <user> ...)')
    return None


class HintWatch(logging.Filter):
    """Adds an ERROR naming the option to fix after the driver's own
    "unreachable"/"Connection failed" line, once per cause and process."""

    def __init__(self, conf_=None):
        super().__init__()
        self._conf = conf_
        self._said = set()
        self._log = logging.getLogger(__name__)

    def filter(self, record):
        if record.levelno >= logging.ERROR:
            try:
                text = record.getMessage()
            except Exception:  # a malformed record is the driver's own
                return True
            # The driver's connect-time line (its reconnects after a lost
            # connection say "is unreachable").
            found = hint(text, self._conf,
                         connecting=text.startswith('Connection failed'))
            if found and found not in self._said:
                self._said.add(found)
                self._log.error('RabbitMQ connection failed, not an outage: '
                                '%s', found)
        return True


_WATCH = HintWatch()


def install():
    """Watch this process's RabbitMQ connections (idempotent)."""
    logger = logging.getLogger(_RABBIT_LOGGER)
    if _WATCH not in logger.filters:
        logger.addFilter(_WATCH)
