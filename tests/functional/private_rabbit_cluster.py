"""A private 3-node RabbitMQ cluster on loopback as a test fixture (the
cluster itself is nova_moves.harness.rabbit_cluster, which the harness's
``broker: cluster-3`` topology uses too): own node names, ports and data
dirs; never the machine's node."""
import fixtures

from nova_moves.harness import rabbit_cluster

available = rabbit_cluster.available


class PrivateRabbitCluster(fixtures.Fixture):
    """Started on setUp, every node killed and its data removed on cleanUp;
    the test reaches nodes through ``cluster``."""

    def __init__(self, size=3):
        super().__init__()
        self.cluster = rabbit_cluster.RabbitCluster(size)

    def _setUp(self):
        self.addCleanup(self.cluster.stop)
        self.cluster.start()

    @property
    def url(self):
        return self.cluster.url

    def ctl(self, *args, **kwargs):
        return self.cluster.ctl(*args, **kwargs)
