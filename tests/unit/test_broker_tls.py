"""TLS to RabbitMQ as the product sees it (nova_moves.broker_tls): the
files [oslo_messaging_rabbit] names are checked at start, a status check
connects with the services' TLS parameters, and a connection the broker
will never accept gets one ERROR naming the option to fix."""
import logging
import os
import ssl
import tempfile
from unittest import mock

from oslo_config import cfg
import oslo_messaging as messaging
import testtools

from nova_moves import broker_tls
from nova_moves.cmd import manage_status
from nova_moves.harness import stack as nm_stack
from nova_moves import rpc


def _conf(**rabbit):
    conf = cfg.ConfigOpts()
    rpc.set_defaults(conf)
    conf([], project='nova_moves', default_config_files=[])
    for name, value in rabbit.items():
        conf.set_override(name, value, group='oslo_messaging_rabbit')
    return conf


class ProblemsTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        fd, self.ca = tempfile.mkstemp()
        os.close(fd)
        self.addCleanup(os.unlink, self.ca)

    def test_tls_off_checks_nothing(self):
        self.assertEqual([], broker_tls.problems(
            _conf(ssl_ca_file='/nonexistent/ca.pem')))

    def test_readable_ca(self):
        broker_tls.check(_conf(ssl=True, ssl_ca_file=self.ca))

    def test_missing_file_named(self):
        conf = _conf(ssl=True, ssl_ca_file='/nonexistent/ca.pem')
        error = self.assertRaises(broker_tls.BrokerConfigError,
                                  broker_tls.check, conf)
        self.assertIn('[oslo_messaging_rabbit] ssl_ca_file = '
                      '/nonexistent/ca.pem is not a readable file',
                      str(error))

    def test_cert_without_key(self):
        found = broker_tls.problems(_conf(ssl=True, ssl_cert_file=self.ca))
        self.assertEqual(1, len(found))
        self.assertIn('ssl_cert_file and ssl_key_file go together',
                      found[0])


class KombuSslTest(testtools.TestCase):

    def test_off(self):
        self.assertIs(False, broker_tls.kombu_ssl('h', _conf()))

    def test_on_without_files_uses_system_defaults(self):
        self.assertIs(True, broker_tls.kombu_ssl('h', _conf(ssl=True)))

    def test_ca_verifies_the_host(self):
        params = broker_tls.kombu_ssl('rabbit.example', _conf(
            ssl=True, ssl_ca_file='/ca', ssl_cert_file='/c',
            ssl_key_file='/k'))
        self.assertEqual({'ca_certs': '/ca', 'cert_reqs': ssl.CERT_REQUIRED,
                          'server_hostname': 'rabbit.example',
                          'certfile': '/c', 'keyfile': '/k'}, params)


class HintTest(testtools.TestCase):

    def test_outage_has_no_hint(self):
        self.assertIsNone(broker_tls.hint(
            '[Errno 111] ECONNREFUSED', _conf(ssl=True)))

    def test_verify_failed_names_the_ca_option(self):
        found = broker_tls.hint('[SSL: CERTIFICATE_VERIFY_FAILED] x',
                                _conf(ssl=True, ssl_ca_file='/ca.pem'))
        self.assertIn('ssl_ca_file = /ca.pem', found)

    def test_reset_without_tls_suggests_tls(self):
        self.assertIn('set [oslo_messaging_rabbit] ssl = true',
                      broker_tls.hint('[Errno 104] Connection reset by peer',
                                      _conf()))
        # With TLS on, or on an established connection (a broker killed),
        # a reset is an outage like any other.
        self.assertIsNone(broker_tls.hint(
            '[Errno 104] Connection reset by peer', _conf(ssl=True)))
        self.assertIsNone(broker_tls.hint(
            '[Errno 104] Connection reset by peer', _conf(),
            connecting=False))

    def test_tls_to_a_plain_port(self):
        self.assertIn('does not speak TLS', broker_tls.hint(
            '[SSL: WRONG_VERSION_NUMBER] wrong version number',
            _conf(ssl=True)))

    def test_refused_user_and_vhost(self):
        self.assertIn('password', broker_tls.hint(
            'Connection.open: (403) ACCESS_REFUSED - Login was refused',
            _conf()))
        self.assertIn('set_permissions', broker_tls.hint(
            "(530) NOT_ALLOWED - access to vhost 'v' refused for user 'u'",
            _conf()))

    def test_watch_says_it_once_and_drops_nothing(self):
        watch = broker_tls.HintWatch(_conf(ssl=True, ssl_ca_file='/ca'))
        record = logging.LogRecord(
            'oslo.messaging._drivers.impl_rabbit', logging.ERROR, __file__,
            1, 'Connection failed: %s (retrying in %s seconds)',
            ('[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed',
             1.0), None)
        with mock.patch.object(watch, '_log') as log:
            self.assertTrue(watch.filter(record))
            self.assertTrue(watch.filter(record))
        self.assertEqual(1, log.error.call_count)
        self.assertIn('ssl_ca_file = /ca', log.error.call_args[0][1])

    def test_watch_ignores_a_reset_after_connecting(self):
        watch = broker_tls.HintWatch(_conf())
        lost = logging.LogRecord(
            'oslo.messaging._drivers.impl_rabbit', logging.ERROR, __file__,
            1, '[%s] AMQP server on %s:%s is unreachable: %s. Trying again '
            'in %d seconds.', ('id', 'h', 5672,
                               '[Errno 104] Connection reset by peer', 1),
            None)
        with mock.patch.object(watch, '_log') as log:
            self.assertTrue(watch.filter(lost))
        self.assertEqual(0, log.error.call_count)


class StatusCheckTest(testtools.TestCase):
    """nova-moves-manage status check connects as the services do."""

    def _check(self, url, **rabbit):
        conf = _conf(**rabbit)
        messaging.TransportURL.parse(conf, None)  # registers its options
        conf.set_override('transport_url', url)
        connection = mock.MagicMock(hostname='h', port=5671)
        with mock.patch.object(manage_status, 'CONF', conf), \
                mock.patch.object(broker_tls, 'CONF', conf), \
                mock.patch.object(rpc, 'get_transport'), \
                mock.patch('kombu.Connection',
                           return_value=connection) as kombu:
            result = manage_status.check_rabbitmq()
        return result, kombu.call_args

    def test_tls_and_quoted_credentials(self):
        result, call = self._check('rabbit://nm-api:p%40ss@h:5671/v',
                                   ssl=True, ssl_ca_file='/ca')
        self.assertEqual(manage_status.SUCCESS, result[0])
        self.assertIn('TLS', result[1])
        self.assertEqual('amqp://nm-api:p%40ss@h:5671/v', call[0][0])
        self.assertEqual({'ca_certs': '/ca', 'cert_reqs': ssl.CERT_REQUIRED,
                          'server_hostname': 'h'}, call[1]['ssl'])

    def test_unreadable_ca_is_a_failure(self):
        conf = _conf(ssl=True, ssl_ca_file='/nonexistent/ca.pem')
        with mock.patch.object(manage_status, 'CONF', conf), \
                mock.patch.object(rpc, 'CONF', conf), \
                mock.patch.object(rpc._Transports, 'transport', None), \
                mock.patch('oslo_messaging.get_rpc_transport') as build:
            result = manage_status.check_rabbitmq()
        self.assertEqual(manage_status.FAILURE, result[0])
        self.assertIn('ssl_ca_file = /nonexistent/ca.pem', result[1])
        build.assert_not_called()

    def test_plain(self):
        result, call = self._check('rabbit://u:p@h/v')
        self.assertEqual('amqp://u:p@h:5672/v', call[0][0])
        self.assertIs(False, call[1]['ssl'])


class StackBrokerUsersTest(testtools.TestCase):
    """The harness grants the vhost to every user a service logs in as."""

    def test_shared_user_only(self):
        stack = nm_stack.Stack(broker_url='rabbit://a:b@h:1/')
        self.addCleanup(os.rmdir, stack.workdir)
        self.assertEqual([('a', ('.*', '.*', '.*'))], stack._broker_grants())

    def test_every_kind_has_its_own(self):
        urls = {kind: 'rabbit://nm-%s:pw@h:1/' % kind
                for kind in ('api', 'conductor', 'scheduler', 'compute')}
        stack = nm_stack.Stack(
            broker_url='rabbit://h:1/', service_broker_urls=urls,
            service_broker_permissions={'api': ('a', 'b', 'c')})
        self.addCleanup(os.rmdir, stack.workdir)
        grants = dict(stack._broker_grants())
        self.assertEqual(sorted('nm-%s' % k for k in urls), sorted(grants))
        self.assertEqual(('a', 'b', 'c'), grants['nm-api'])
        self.assertEqual(('.*', '.*', '.*'), grants['nm-compute'])
        self.assertEqual('rabbit://nm-api:pw@h:1/' + stack.vhost,
                         stack._service_default('api', 'api')[
                             'transport_url'])


class PermissionsTest(testtools.TestCase):

    def test_control_exchange_is_rpcs(self):
        self.assertEqual(rpc.EXCHANGE, broker_tls.CONTROL_EXCHANGE)

    def test_each_kind_reads_only_its_own_topic(self):
        import re
        for kind in ('conductor', 'scheduler', 'compute'):
            read = re.compile(broker_tls.permissions(kind)[2])
            self.assertTrue(read.match(kind))
            self.assertTrue(read.match('%s.host1' % kind))
            self.assertTrue(read.match('%s_fanout_0a1b' % kind))
            # The calls' own queues (rpc.CALLS_SUFFIX).
            self.assertTrue(read.match(kind + rpc.CALLS_SUFFIX))
            self.assertTrue(read.match('%s%s.host1' % (kind,
                                                        rpc.CALLS_SUFFIX)))
            for other in {'conductor', 'scheduler', 'compute'} - {kind}:
                self.assertFalse(read.match(other), (kind, other))
                self.assertFalse(read.match(other + rpc.CALLS_SUFFIX))
        api = broker_tls.permissions('api')
        self.assertFalse(re.match(api[2], 'conductor'))
        self.assertTrue(re.match(api[1], 'amq.default'))
        self.assertTrue(re.match(api[1], rpc.CALLS_EXCHANGE))
        self.assertTrue(re.match(api[2], 'reply_0a1b'))
