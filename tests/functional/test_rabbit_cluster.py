"""The services on a private 3-node RabbitMQ cluster with quorum queues
and a multi-host transport_url; one node SIGKILLed in the middle of a
burst of cold migrations, then restarted: every move reaches a terminal
state and every service is still up.

NOVA_MOVES_CLUSTER_MOVES sets the burst size (default 20)."""
import concurrent.futures
import os
import time

from tests.functional import base
from tests.functional import private_broker
from tests.functional import private_rabbit_cluster

MOVES = int(os.environ.get('NOVA_MOVES_CLUSTER_MOVES', '20'))
TERMINAL = {'ACTIVE', 'VERIFY_RESIZE', 'ERROR'}


class RabbitClusterTest(private_broker.OnPrivateBroker,
                        base.StackTestCase):
    CONDUCTORS = 2
    COMPUTES = 3
    EXTRA_CONF = {
        'DEFAULT': {'stuck_move_timeout': 20, 'rpc_response_timeout': 20,
                    'debug': 'false'},
        'oslo_messaging_rabbit': {
            'rabbit_quorum_queue': 'true',
            'rabbit_transient_quorum_queue': 'true',
            # A node that dies without closing the socket is noticed by
            # the heartbeat; kill -9 on loopback resets it at once anyway.
            'heartbeat_timeout_threshold': '10',
            'kombu_reconnect_delay': '0.5'},
        'compute': {'operation_seconds': 'migrate_disk:0.3'},
        # More servers than the default per-project quota of 10.
        'quota': {'instances': -1, 'cores': -1, 'ram': -1},
    }

    @classmethod
    def make_broker(cls):
        return private_rabbit_cluster.PrivateRabbitCluster(3)

    def test_transport_url_names_every_node(self):
        with open(self.stack.config_path) as f:
            config = f.read()
        for node in self.broker.cluster.nodes:
            self.assertIn('127.0.0.1:%d' % node.port, config)

    def test_queues_are_quorum_queues(self):
        out = self.broker.cluster.ctl('list_queues', '--no-table-headers',
                                      '-p', self.stack.vhost, 'name', 'type')
        types = dict(line.split('\t') for line in out.splitlines()
                     if '\t' in line)
        self.assertEqual('quorum', types['conductor'], types)
        self.assertEqual('quorum', types['scheduler'], types)
        # Reply and fanout queues too (rabbit_transient_quorum_queue).
        self.assertEqual({'quorum'}, set(types.values()), types)

    def _migrate(self, server_id):
        response = self.admin.action(server_id, {'migrate': None})
        return response.status_code

    def _boot(self, count, prefix):
        flavor = self.flavor('cl')
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            servers = list(pool.map(
                lambda i: self.admin.boot('%s%d' % (prefix, i), flavor['id'],
                                          timeout=180), range(count)))
        self.assertEqual({'ACTIVE'}, {s['status'] for s in servers})
        return [s['id'] for s in servers]

    def _settle(self, ids, since):
        """Every server in a terminal state with no task_state left."""
        settled = {}
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and len(settled) < len(ids):
            for server_id in ids:
                if server_id in settled:
                    continue
                server = self.admin.server(server_id, version='2.47')
                if server['status'] in TERMINAL and \
                        server['OS-EXT-STS:task_state'] is None:
                    settled[server_id] = server['status']
            time.sleep(1)
        self.addDetail('outcomes', _text(sorted(settled.values())))
        self.addDetail('settled-after-fault-s',
                       _text('%.1f' % (time.monotonic() - since)))
        self.assertEqual(set(ids), set(settled),
                         'servers never settled after the broker fault')
        return settled

    def _confirm(self, settled):
        for server_id, status in settled.items():
            if status == 'VERIFY_RESIZE':
                self.admin.action(server_id, {'confirmResize': None},
                                  expect=204)
        for server_id in settled:
            self.admin.wait_for_status(server_id, ('ACTIVE', 'ERROR'),
                                       timeout=120)

    def test_node_killed_mid_burst(self):
        ids = self._boot(MOVES, 'cl')
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            futures = [pool.submit(self._migrate, i) for i in ids]
            # Kill the node every client connected to first, with half
            # the requests sent: its queue leaders move to the others.
            self.admin.wait_for(
                lambda: sum(f.done() for f in futures) >= MOVES // 2,
                timeout=120, what='half the migrations accepted')
            killed_at = time.monotonic()
            self.broker.cluster.kill(0)
            codes = [f.result() for f in futures]
        self.addDetail('api-status-codes', _text(sorted(codes)))
        settled = self._settle(ids, killed_at)
        self.assertNotIn(500, codes)
        # The node comes back, rejoins, and every service is (still) up.
        self.broker.cluster.restart(0)
        self.stack.wait_until_ready(120)
        self._confirm(settled)
        # Most of the burst went through rather than being rolled back.
        moved = sum(1 for s in settled.values() if s == 'VERIFY_RESIZE')
        self.assertGreater(moved, MOVES // 2, settled)

    def test_rolling_restart_mid_burst(self):
        """Each node stopped and started in turn while moves run."""
        ids = self._boot(MOVES // 2, 'roll')
        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            futures = [pool.submit(self._migrate, i) for i in ids]
            for index in range(3):
                self.broker.cluster.stop_node(index)
                self.broker.cluster.restart(index)
            codes = [f.result() for f in futures]
        self.addDetail('api-status-codes', _text(sorted(codes)))
        settled = self._settle(ids, started)
        self.assertNotIn(500, codes)
        self.stack.wait_until_ready(120)
        self._confirm(settled)


def _text(value):
    import testtools.content as content
    return content.text_content(str(value))
