"""Functional tests run the real console scripts on the machine's
RabbitMQ (a vhost per test class) and drive them over HTTP."""
import json
import os
import time

import testtools

from nova_moves.harness import invariants
from nova_moves.harness import stack as nm_stack


class StackTestCase(testtools.TestCase):
    """One stack per test class; invariants checked after every test."""

    COMPUTES = 2
    CONDUCTORS = 1
    SCHEDULERS = 1
    EXTRA_CONF = {}
    DATABASE_URL = None
    COORDINATION_URL = None
    CHECK_INVARIANTS = True
    # Tests boot more servers per class than a project's default quota
    # (10 instances); only the quota tests keep Nova's defaults.
    DEFAULT_QUOTAS = False

    @classmethod
    def extra_conf(cls):
        conf = dict(cls.EXTRA_CONF)
        if not cls.DEFAULT_QUOTAS and 'quota' not in conf:
            conf['quota'] = {'instances': -1, 'cores': -1, 'ram': -1}
        return conf

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.stack = nm_stack.Stack(
            computes=cls.COMPUTES, conductors=cls.CONDUCTORS,
            schedulers=cls.SCHEDULERS, extra_conf=cls.extra_conf(),
            database_url=cls.DATABASE_URL or os.environ.get(
                'NOVA_MOVES_TEST_DATABASE_URL'),
            coordination_url=cls.COORDINATION_URL,
            keep_workdir=bool(os.environ.get('NOVA_MOVES_KEEP_LOGS')),
            **cls.stack_options())
        try:
            cls.stack.start()
        except Exception:
            cls.stack.keep_workdir = True
            cls.stack.stop()
            raise
        cls.admin = cls.stack.client()
        cls.flavors = {}

    @classmethod
    def stack_options(cls):
        """More Stack arguments (e.g. a private broker's url and ctl)."""
        return {}

    @classmethod
    def tearDownClass(cls):
        cls.stack.stop()
        super().tearDownClass()

    def setUp(self):
        super().setUp()
        self.addOnException(self._attach_logs)
        if self.CHECK_INVARIANTS:
            self.addCleanup(self.assert_invariants)

    def _attach_logs(self, exc_info):
        import testtools.content as content
        for name, proc in self.stack.processes.items():
            try:
                tail = self.stack.log(name)[-6000:]
            except OSError:
                continue
            self.addDetail('log-' + name, content.text_content(tail))

    def local_guests(self, host):
        """The guests the fake hypervisor of ``host`` holds on disk."""
        path = os.path.join(self.stack.workdir, 'state', 'fake-hypervisor',
                            '%s.json' % host)
        if not os.path.exists(path):
            return {}  # the host never had a guest
        with open(path) as f:
            return json.load(f)

    def flavor(self, name, vcpus=1, ram=512, disk=1):
        key = (name, vcpus, ram, disk)
        if key not in self.flavors:
            self.flavors[key] = self.admin.create_flavor(
                '%s-%d-%d-%d' % (name, vcpus, ram, disk), vcpus, ram, disk)
        return self.flavors[key]

    def boot(self, name='vm', flavor=None, host=None, client=None):
        flavor = flavor or self.flavor('small')
        server = (client or self.admin).boot(name, flavor['id'], host=host)
        self.assertEqual('ACTIVE', server['status'], server)
        return server

    def assert_invariants(self, grace=10):
        """The invariants, given ``grace`` seconds to hold: a flow's last
        local clean-up (the source's copy after a live migration
        completed) follows the status a test waits for."""
        state = os.path.join(self.stack.workdir, 'state')
        deadline = time.monotonic() + grace
        while True:
            problems = invariants.check(
                self.admin, guests=invariants.read_guests(state))
            if not problems or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        self.assertEqual([], problems)
