"""A fixture around nova_moves.harness.tcp_proxy for the functional tests
that partition one process from the broker (cut, then heal, without
touching the process or the broker)."""
import os

import fixtures

from nova_moves.harness import stack as nm_stack
from nova_moves.harness import tcp_proxy


def broker_address(url):
    """(host, port) of a rabbit:// url."""
    rest = url.split('://', 1)[1].split('/', 1)[0]
    hostport = rest.rsplit('@', 1)[-1]
    host, _, port = hostport.partition(':')
    return host or '127.0.0.1', int(port or 5672)


class BrokerProxy(fixtures.Fixture):
    """A proxy to the broker at ``broker_url``; ``port`` is where a
    process's transport_url must point (Stack.transport_url_via)."""

    def __init__(self, broker_url):
        super().__init__()
        self.proxy = tcp_proxy.TcpProxy(broker_address(broker_url))

    def _setUp(self):
        self.proxy.start()
        self.addCleanup(self.proxy.stop)

    @property
    def port(self):
        return self.proxy.port

    def cut(self):
        self.proxy.cut()

    def heal(self):
        self.proxy.heal()

    @property
    def is_cut(self):
        return self.proxy.is_cut

    def connections(self):
        return self.proxy.connections()


class OnBrokerProxy:
    """Mix into a StackTestCase (before it): ``cls.proxy``, a BrokerProxy
    to the stack's broker, up before the stack (whose processes may then
    point at ``cls.proxy.port``) and gone after it; healed after every
    test, so a test that failed while cut does not take the next one."""

    @classmethod
    def setUpClass(cls):
        cls.proxy = BrokerProxy(os.environ.get('NOVA_MOVES_BROKER_URL',
                                               nm_stack.DEFAULT_BROKER))
        cls.proxy.setUp()
        try:
            cls.before_stack()
            super().setUpClass()
            cls.after_stack()
        except Exception:
            cls.proxy.cleanUp()
            raise

    @classmethod
    def before_stack(cls):
        """Set class attributes that need the proxy's port."""

    @classmethod
    def after_stack(cls):
        """Start processes that reach the broker through the proxy."""

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            cls.proxy.cleanUp()

    def setUp(self):
        super().setUp()
        self.addCleanup(self.proxy.heal)
