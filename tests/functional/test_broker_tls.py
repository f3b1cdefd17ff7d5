"""The services on a private RabbitMQ node that listens with TLS only
(a throwaway CA; ``listeners.tcp = none``), each kind of service with a
broker user of its own that has only the permissions
nova_moves.broker_tls.permissions gives it, on the stack's vhost only
(the node's guest user is deleted; versioned notifications are on, so
the computes' notifier needs its queues too): the configuration an operator
writes (transport_url with port and user per service, [oslo_messaging_
rabbit] ssl + ssl_ca_file) carries a cold migration and its confirm,
and a service that cannot talk TLS to the broker says why."""
import os
import re
import ssl
import subprocess
import sys
import time

import kombu

from nova_moves import broker_tls
from nova_moves.harness import rabbit_tls
from tests.functional import base
from tests.functional import private_backend

KINDS = ('api', 'conductor', 'scheduler', 'compute')
USERS = {'nm-%s' % kind: 'pw-%s-%s' % (kind, os.urandom(4).hex())
         for kind in KINDS}


class BrokerTLSTest(private_backend.PrivateBackend, base.StackTestCase):
    COMPUTES = 2

    @classmethod
    def setUpClass(cls):
        cls.start_backend(
            'broker', lambda: rabbit_tls.TLSBroker(USERS).start(),
            lambda broker, failed: broker.stop(),
            unavailable=None if rabbit_tls.available() else
            'RabbitMQ server scripts not installed (%s)' %
            rabbit_tls.rabbit_cluster.SCRIPTS)
        super().setUpClass()

    @classmethod
    def stack_options(cls):
        # The shared file's transport_url has no user: a service that
        # did not get its own could not log in.
        return dict(super().stack_options(), broker_url=cls.broker.url(),
                    broker_ctl=cls.broker.ctl, service_broker_urls={
                        kind: cls.broker.url('nm-%s' % kind)
                        for kind in KINDS},
                    service_broker_permissions={
                        kind: broker_tls.permissions(kind)
                        for kind in KINDS})

    @classmethod
    def extra_conf(cls):
        conf = super().extra_conf()
        conf['oslo_messaging_rabbit'] = dict(cls.broker.client_conf)
        conf['notifications'] = {'notification_format': 'versioned'}
        return conf

    def _connections(self):
        out = self.broker.ctl('list_connections', 'user', 'ssl', 'vhost')
        rows = [line.split('\t') for line in out.splitlines() if line]
        return [r for r in rows if len(r) == 3 and r[0] != 'user']

    def test_every_service_on_its_own_user_over_tls(self):
        rows = self._connections()
        self.assertEqual(set(USERS), {r[0] for r in rows}, rows)
        self.assertEqual({'true'}, {r[1] for r in rows}, rows)
        self.assertEqual({self.stack.vhost}, {r[2] for r in rows}, rows)

    def test_users_have_only_their_permissions(self):
        out = self.broker.ctl('list_permissions', '-p', self.stack.vhost)
        rows = {r[0]: tuple(r[1:]) for r in (
            line.split('\t') for line in out.splitlines())
            if len(r) == 4 and r[0] != 'user'}
        self.assertEqual({'nm-%s' % kind: broker_tls.permissions(kind)
                          for kind in KINDS}, rows)
        # The API's user cannot take the conductors' messages.
        url = 'amqp://nm-api:%s@127.0.0.1:%d/%s' % (
            USERS['nm-api'], self.broker.port, self.stack.vhost)
        with kombu.Connection(url, ssl={
                'ca_certs': self.broker.ca_file,
                'cert_reqs': ssl.CERT_REQUIRED,
                'server_hostname': '127.0.0.1'}) as conn:
            queue = kombu.Queue('conductor', channel=conn.channel(),
                                no_declare=True)
            error = self.assertRaises(Exception, queue.get)
        self.assertIn('ACCESS_REFUSED', str(error))

    def test_the_node_listens_with_tls_only(self):
        listeners = self.broker.ctl(
            'eval', 'rabbit_networking:active_listeners().')
        protocols = set(re.findall(r'\{listener,[^,]+,([^,]+),', listeners))
        self.assertEqual({'clustering', "'amqp/ssl'"}, protocols, listeners)

    def test_cold_migrate_and_confirm(self):
        server = self.boot('tls')
        source = server['OS-EXT-SRV-ATTR:host']
        self.admin.action(server['id'], {'migrate': None}, expect=202)
        moved = self.admin.wait_for_status(server['id'], 'VERIFY_RESIZE',
                                           timeout=60)
        self.assertNotEqual(source, moved['OS-EXT-SRV-ATTR:host'])
        self.admin.action(server['id'], {'confirmResize': None}, expect=204)
        done = self.admin.wait_for_status(server['id'], 'ACTIVE', timeout=60)
        self.assertEqual(moved['OS-EXT-SRV-ATTR:host'],
                         done['OS-EXT-SRV-ATTR:host'])
        # The computes' notifications got through their own user.
        queues = self.broker.ctl('list_queues', '-p', self.stack.vhost,
                                 'name', 'messages')
        self.assertIn('versioned_notifications.info', queues)
        # Nothing any service did was refused by its permissions.
        for name in self.stack.processes:
            self.assertNotIn('ACCESS_REFUSED', self.stack.log(name), name)

    def _bad_compute(self, name, rabbit, timeout=20, marks=()):
        """A compute with [oslo_messaging_rabbit] ``rabbit`` added: its
        log once one of ``marks`` shows (or it exited)."""
        overlay = self.stack._overlay(name, {
            'DEFAULT': dict(self.stack._service_default('compute', name)),
            'oslo_messaging_rabbit': rabbit})
        proc = self.stack.add_process(name, 'nova-moves-compute', overlay)
        proc.stopped_on_purpose = True  # the stack's checks ignore it

        def _stop():
            self.stack.kill(name)
            self.stack.processes.pop(name, None)
        self.addCleanup(_stop)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.stack.log(name)
            if not proc.alive() or any(m in text for m in marks):
                return proc, text
            time.sleep(0.3)
        return proc, self.stack.log(name)

    def _assert_never_up(self, host):
        self.assertNotIn(host, {s['host'] for s in self.admin.services()})

    def test_wrong_ca_says_why(self):
        mark = 'does not verify against [oslo_messaging_rabbit] ssl_ca_file'
        proc, log = self._bad_compute(
            'badca', {'ssl_ca_file': self.broker.other_ca_file},
            marks=[mark])
        self.assertIn('CERTIFICATE_VERIFY_FAILED', log)
        self.assertIn(mark, log)
        self._assert_never_up('badca')

    def test_plain_amqp_to_tls_port_says_why(self):
        mark = 'if it listens with TLS only, set [oslo_messaging_rabbit] ' \
            'ssl = true'
        proc, log = self._bad_compute('plain', {'ssl': 'false'},
                                      marks=[mark])
        self.assertIn(mark, log)
        self._assert_never_up('plain')

    def test_missing_ca_file_refuses_to_start(self):
        missing = os.path.join(self.stack.workdir, 'no-such-ca.pem')
        proc, log = self._bad_compute('noca', {'ssl_ca_file': missing})
        self.assertIsNotNone(proc.wait(10), log)
        self.assertNotEqual(0, proc.popen.returncode)
        self.assertIn('ssl_ca_file = %s is not a readable file' % missing,
                      log)

    def test_status_check_connects_with_tls(self):
        conf = os.path.join(self.stack.workdir, 'conductor1.conf')
        out = subprocess.run(
            [os.path.join(os.path.dirname(sys.executable),
                          'nova-moves-manage'), '--config-file',
             self.stack.config_path, '--config-file', conf,
             'status', 'check'], capture_output=True, text=True,
            timeout=60).stdout
        self.assertIn('Connected to 127.0.0.1:%d' % self.broker.port, out)
        self.assertIn('TLS', out)
