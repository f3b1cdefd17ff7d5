"""tooz group membership on redis decides liveness: a SIGKILLed compute is
reported down as soon as its membership expires, long before its database
heartbeat would (service_down_time is 60 s here), while the live one stays
up, and the scheduler stops placing on the dead one."""
import signal
import socket
import time
import uuid

from tests.functional import base
from tests.functional import stack_db

REDIS = ('127.0.0.1', 6379)
MEMBERSHIP_TIMEOUT = 3


def _redis_up():
    try:
        with socket.create_connection(REDIS, timeout=2) as sock:
            sock.sendall(b'PING\r\n')
            return sock.recv(16).startswith(b'+PONG')
    except OSError:
        return False


class RedisMembershipTest(base.StackTestCase):

    COMPUTES = 2
    EXTRA_CONF = {'DEFAULT': {'service_down_time': 60}}

    @classmethod
    def setUpClass(cls):
        if not _redis_up():
            raise cls.skipException('redis not reachable on %s:%d' % REDIS)
        # A namespace per stack: other stacks on this redis have computes
        # called compute1 and compute2 too.
        cls.namespace = 'nm-test-%s' % uuid.uuid4().hex[:12]
        cls.COORDINATION_URL = 'redis://%s:%d?timeout=%d&namespace=%s' % (
            REDIS + (MEMBERSHIP_TIMEOUT, cls.namespace))
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        import redis
        client = redis.Redis(*REDIS)
        for key in client.scan_iter(cls.namespace + '*'):
            client.delete(key)
        client.close()

    def states(self):
        return {s['host']: s['state']
                for s in self.admin.services('nova-moves-compute')}

    def test_killed_compute_is_down_live_one_is_up(self):
        self.assertEqual({'compute1': 'up', 'compute2': 'up'}, self.states())
        killed_at = time.monotonic()
        self.stack.kill('compute2', signal.SIGKILL)
        self.addCleanup(self._restart_compute2)
        self.admin.wait_for(lambda: self.states()['compute2'] == 'down',
                            timeout=30, interval=0.5,
                            what='compute2 reported down')
        elapsed = time.monotonic() - killed_at
        self.assertLess(elapsed, 30)
        self.assertEqual('up', self.states()['compute1'])
        # The database heartbeat alone would still call it up: membership
        # made the difference.
        with stack_db.stack_database(self.stack) as db:
            row = db.service_get_by_host_and_binary('compute2',
                                                    'nova-moves-compute')
            self.assertTrue(db.service_is_up(row))
        for i in range(3):
            server = self.boot('after-kill-%d' % i)
            self.assertEqual('compute1', server['OS-EXT-SRV-ATTR:host'])
            self.admin.delete('/servers/%s' % server['id'], expect=204)

    def _restart_compute2(self):
        self.stack.restart('compute2')
        self.admin.wait_for(lambda: self.states()['compute2'] == 'up',
                            timeout=60, interval=0.5,
                            what='compute2 back up')

    def test_restarted_compute_rejoins(self):
        self.stack.kill('compute2', signal.SIGKILL)
        self.admin.wait_for(lambda: self.states()['compute2'] == 'down',
                            timeout=30, interval=0.5,
                            what='compute2 reported down')
        self._restart_compute2()
        server = self.boot('rejoined', host='compute2')
        self.assertEqual('compute2', server['OS-EXT-SRV-ATTR:host'])
        self.admin.delete('/servers/%s' % server['id'], expect=204)
