"""nova-moves-compute: one agent process serving one or more hosts
([compute] fake_hosts), each with its own RPC server and service record."""
import sys

from oslo_log import log as logging

from nova_moves.compute import fence
from nova_moves.compute import manager
from nova_moves import conf
from nova_moves import coordination
from nova_moves import service

CONF = conf.CONF
LOG = logging.getLogger(__name__)


def main():
    service.prepare(sys.argv, 'nova-moves-compute')
    try:
        # Refused rather than warned: a fence that may come after the
        # host is shown down protects nothing, while the operator counts
        # on it; and the guests run on while the agent is not started.
        fence.check_config()
    except fence.FenceConfigError as exc:
        LOG.error('%s', exc)
        sys.exit('nova-moves-compute: %s' % exc)
    hosts = CONF.compute.fake_hosts or [CONF.host]
    services = []
    for host in hosts:
        compute = manager.ComputeManager(host)
        services.append(service.Service(host, 'nova-moves-compute',
                                        'compute', compute, compute.report))
    service.exit_with(service.run(services, coordination.Coordinator()))
