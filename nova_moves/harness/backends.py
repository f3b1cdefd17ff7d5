"""Private backends a harness topology asks for: ``broker: cluster-3``
(a 3-node RabbitMQ cluster on loopback, quorum queues, its nodes exposed
as processes rabbit1..3 for faults), ``broker: private`` (one node of
its own, process rabbit1, run with the product's RabbitMQ defaults: what
a single-broker deployment gets), ``database: postgresql`` (a private
PostgreSQL cluster) and ``coordination: redis`` (the machine's redis in
a namespace of the run's own). Started before the stack, stopped after."""
import uuid

from nova_moves.harness import pg_cluster
from nova_moves.harness import rabbit_cluster

REDIS_URL = 'redis://127.0.0.1:6379?timeout=10&namespace=%s'
# What every process is told about a clustered broker.
CLUSTER_CONF = {'rabbit_quorum_queue': 'true',
                'rabbit_transient_quorum_queue': 'true',
                'heartbeat_timeout_threshold': '10',
                'kombu_reconnect_delay': '0.5'}


class Backends:

    def __init__(self, broker='local', database='sqlite',
                 coordination='file'):
        self.broker = broker
        self.database = database
        self.coordination = coordination
        self.rabbit = None
        self.postgres = None

    def start(self):
        """Stack keyword arguments and extra configuration to run on them."""
        options, conf = {}, {}
        try:
            if self.broker == 'cluster-3':
                self.rabbit = rabbit_cluster.RabbitCluster(3).start()
                options.update(broker_url=self.rabbit.url,
                               broker_ctl=self.rabbit.ctl)
                conf['oslo_messaging_rabbit'] = dict(CLUSTER_CONF)
            elif self.broker == 'private':
                # No CLUSTER_CONF: a lone node is measured as shipped
                # (nova_moves.rpc.RABBIT_DEFAULTS), not tuned for failover.
                self.rabbit = rabbit_cluster.RabbitCluster(1).start()
                options.update(broker_url=self.rabbit.url,
                               broker_ctl=self.rabbit.ctl)
            if self.database == 'postgresql':
                self.postgres = pg_cluster.PostgresCluster().start()
                options['database_url'] = self.postgres.create_database(
                    'nova_moves')
            if self.coordination == 'redis':
                options['coordination_url'] = REDIS_URL % (
                    'nm-harness-%s' % uuid.uuid4().hex[:12])
        except Exception:
            self.stop()
            raise
        return options, conf

    def attach(self, stack):
        """The broker's nodes become processes of the stack."""
        if self.rabbit is not None:
            for i, node in enumerate(self.rabbit.nodes):
                name = 'rabbit%d' % (i + 1)
                stack.processes[name] = rabbit_cluster.NodeProcess(name, node)

    def stop(self):
        if self.rabbit is not None:
            self.rabbit.stop()
            self.rabbit = None
        if self.postgres is not None:
            self.postgres.destroy()
            self.postgres = None
