"""A private RabbitMQ node that speaks AMQP over TLS only, with a
throwaway CA, and broker users of its own.

The node is a rabbit_cluster.Node (private name, ports, cookie, data
under one temp dir; the machine's node is never touched) whose
rabbitmq.conf has ``listeners.tcp = none`` and one ``listeners.ssl``
listener: plain AMQP to it is refused. The CA, the server's certificate
(for 127.0.0.1 and localhost, which oslo.messaging checks the broker's
host name against) and a second, unrelated CA (for a client that must
fail verification) are made with openssl in the same temp dir."""
import os
import shutil
import subprocess
import tempfile
import uuid

from nova_moves.harness import rabbit_cluster

available = rabbit_cluster.available


def _openssl(*args, cwd):
    subprocess.run(['openssl'] + list(args), cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                   timeout=60)


def make_ca(directory, name):
    """A self-signed CA: (certificate path, key path)."""
    cert = os.path.join(directory, '%s-ca.pem' % name)
    key = os.path.join(directory, '%s-ca.key' % name)
    _openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-sha256',
             '-days', '2', '-subj', '/CN=nova-moves test CA %s' % name,
             '-keyout', key, '-out', cert, cwd=directory)
    return cert, key


def make_cert(directory, name, ca, hosts=('localhost',),
              ips=('127.0.0.1',)):
    """A certificate signed by ``ca`` (cert, key) for ``hosts``/``ips``:
    (certificate path, key path)."""
    cert = os.path.join(directory, '%s.pem' % name)
    key = os.path.join(directory, '%s.key' % name)
    csr = os.path.join(directory, '%s.csr' % name)
    ext = os.path.join(directory, '%s.ext' % name)
    san = ','.join(['DNS:%s' % h for h in hosts] + ['IP:%s' % i for i in ips])
    with open(ext, 'w') as f:
        f.write('subjectAltName = %s\n' % san)
    _openssl('req', '-new', '-newkey', 'rsa:2048', '-nodes', '-sha256',
             '-subj', '/CN=%s' % (hosts[0] if hosts else name),
             '-keyout', key, '-out', csr, cwd=directory)
    _openssl('x509', '-req', '-in', csr, '-CA', ca[0], '-CAkey', ca[1],
             '-CAcreateserial', '-days', '2', '-sha256', '-extfile', ext,
             '-out', cert, cwd=directory)
    # The broker runs as this user and reads its key itself.
    os.chmod(key, 0o600)
    return cert, key


class TLSNode(rabbit_cluster.Node):
    """``port`` is the TLS listener; there is no plain one."""

    def __init__(self, base, cookie_home, name, ca_file, cert_file,
                 key_file):
        super().__init__(base, cookie_home, name)
        self._write('rabbitmq.conf', ''.join(line + '\n' for line in (
            'listeners.tcp = none',
            'listeners.ssl.default = 127.0.0.1:%d' % self.port,
            'ssl_options.cacertfile = %s' % ca_file,
            'ssl_options.certfile = %s' % cert_file,
            'ssl_options.keyfile = %s' % key_file,
            # Clients present no certificate (user/password auth); a
            # client that sends one still has it checked against the CA.
            'ssl_options.verify = verify_peer',
            'ssl_options.fail_if_no_peer_cert = false',
            # What a deployment should allow: nothing older than 1.2.
            'ssl_options.versions.1 = tlsv1.3',
            'ssl_options.versions.2 = tlsv1.2',
            'loopback_users = none',
            'disk_free_limit.absolute = 10MB',
            'log.console = false', 'log.file.level = warning')))

    @property
    def env(self):
        env = super().env
        # The env's NODE_PORT would add a plain listener back.
        env.pop('RABBITMQ_NODE_PORT', None)
        env.pop('RABBITMQ_NODE_IP_ADDRESS', None)
        return env


class TLSBroker:
    """One TLS-only node. ``users`` maps a broker user to its password;
    the node's default guest user is deleted, so every client logs in
    as one of them. ``ca_file`` is what clients trust; ``other_ca_file``
    a CA that did not sign the broker's certificate."""

    def __init__(self, users, start_timeout=120):
        self.users = dict(users)
        self.start_timeout = start_timeout
        self.base = None
        self.node = None

    def start(self):
        self.base = tempfile.mkdtemp(prefix='nova-moves-rabbit-tls-')
        try:
            self._start()
        except Exception:
            self.stop()
            raise
        return self

    def _start(self):
        home = os.path.join(self.base, 'home')
        pki = os.path.join(self.base, 'pki')
        os.makedirs(home)
        os.makedirs(pki)
        cookie = os.path.join(home, '.erlang.cookie')
        with open(cookie, 'w') as f:
            f.write(uuid.uuid4().hex.upper())
        os.chmod(cookie, 0o400)
        ca = make_ca(pki, 'broker')
        self.ca_file = ca[0]
        self.other_ca_file = make_ca(pki, 'other')[0]
        self.cert_file, self.key_file = make_cert(pki, 'broker', ca)
        self.node = TLSNode(self.base, home,
                            'nmtls%s' % uuid.uuid4().hex[:8], self.ca_file,
                            self.cert_file, self.key_file)
        self.node.spawn()
        self.node.wait_serving(self.start_timeout)
        for user, password in self.users.items():
            self.node.ctl('add_user', user, password)
        self.node.ctl('delete_user', 'guest')

    def stop(self):
        if self.node is not None:
            self.node.kill()
        if self.base:
            shutil.rmtree(self.base, ignore_errors=True)
            self.base = None

    @property
    def port(self):
        return self.node.port

    def url(self, user=None):
        """rabbit://user:password@127.0.0.1:<tls port>/ (no user: none)."""
        auth = '%s:%s@' % (user, self.users[user]) if user else ''
        return 'rabbit://%s127.0.0.1:%d/' % (auth, self.port)

    def ctl(self, *args, timeout=60):
        return self.node.ctl(*args, timeout=timeout)

    @property
    def client_conf(self):
        """[oslo_messaging_rabbit] options a client needs to reach it."""
        return {'ssl': 'true', 'ssl_ca_file': self.ca_file}
