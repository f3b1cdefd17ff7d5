"""A private RabbitMQ node for tests that stop, kill or restart the broker.

The machine's node (rabbit@localhost, port 5672) is shared by every test
and every helper, so a test that breaks the broker starts its own: one
node of nova_moves.harness.rabbit_cluster (its own node name, AMQP and
distribution ports, mnesia/log dirs, config, enabled-plugins and env
files and Erlang cookie, all under a temp dir; nothing reads /etc/rabbitmq
or /var/lib/rabbitmq and nothing listens on 5672/25672/15672)."""
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid

import fixtures

from nova_moves.harness import rabbit_cluster
from tests.functional import private_backend

available = rabbit_cluster.available


class PrivateBroker(fixtures.Fixture):
    """start() / stop() (graceful) / kill() (SIGKILL) / restart().

    The node keeps its data dir between stop and start, like a broker
    restarted in place: vhosts and users survive; the stack's queues are
    not durable, so they and whatever they held are gone."""

    def __init__(self, start_timeout=90):
        super().__init__()
        self.start_timeout = start_timeout

    def _setUp(self):
        base = tempfile.mkdtemp(prefix='nova-moves-rabbit-')
        self.addCleanup(shutil.rmtree, base, ignore_errors=True)
        home = os.path.join(base, 'home')
        os.makedirs(home)
        cookie = os.path.join(home, '.erlang.cookie')
        with open(cookie, 'w') as f:
            f.write(uuid.uuid4().hex.upper())
        os.chmod(cookie, 0o400)
        self.node = rabbit_cluster.Node(base, home,
                                        'nmtest-%s' % uuid.uuid4().hex[:10])
        self.addCleanup(self.node.kill)
        self.start()

    @property
    def url(self):
        return 'rabbit://guest:guest@127.0.0.1:%d/' % self.node.port

    def ctl(self, *args, timeout=60):
        """rabbitmqctl against this node only."""
        return self.node.ctl(*args, timeout=timeout)

    def alive(self):
        return self.node.alive()

    def start(self):
        if not self.node.alive():
            self.node.spawn()
            self.node.wait_serving(self.start_timeout)

    def stop(self, timeout=60):
        """A graceful stop (SIGTERM: the node closes its connections)."""
        if not self.node.alive():
            return
        self.node.popen.send_signal(signal.SIGTERM)
        try:
            self.node.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.node.kill()

    def kill(self):
        """kill -9: connections reset without a close frame. The node
        first writes out its quorum-queue registry, as any node up for
        a few seconds has: the stack declares its queues moments before
        a test kills the node, and RabbitMQ 3.10 would otherwise bring
        the newest back without a leader (rabbit_cluster.Node.
        persist_queue_registry), a broker defect no test here is
        about."""
        if self.node.alive():
            self.node.persist_queue_registry()
        self.node.kill()

    def restart(self, down_for=0):
        self.stop()
        time.sleep(down_for)
        self.start()


class OnPrivateBroker(private_backend.PrivateBackend):
    """Mix into a StackTestCase (before it): the class's stack runs on the
    broker ``make_broker()`` returns (a fixture with ``url`` and ``ctl``),
    started before the stack and gone after it, as ``cls.broker``."""

    @classmethod
    def make_broker(cls):
        return PrivateBroker()

    @classmethod
    def setUpClass(cls):
        cls.start_fixture('broker', cls.make_broker(), unavailable=None
                          if available() else
                          'RabbitMQ server scripts not installed')
        super().setUpClass()

    @classmethod
    def stack_options(cls):
        return dict(super().stack_options(), broker_url=cls.broker.url,
                    broker_ctl=cls.broker.ctl)
