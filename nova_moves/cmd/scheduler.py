"""nova-moves-scheduler: select_destinations and check_destination."""
import sys
import threading

from nova_moves import conf
from nova_moves import coordination
from nova_moves.db import api as db_api
from nova_moves.scheduler import host_discovery
from nova_moves.scheduler import manager
from nova_moves import service
from nova_moves import servicegroup

CONF = conf.CONF


def _report(ctxt, host, binary, topic):
    db_api.service_report(host, binary, topic)


def main():
    service.prepare(sys.argv, 'nova-moves-scheduler')
    coordinator = coordination.Coordinator()
    group = servicegroup.ServiceGroup(
        coordinator if coordination.membership_enabled() else None)
    scheduler = manager.SchedulerManager(group, coordinator)
    # Beside the RPC server, not before it: a database still starting
    # must not hold the service's start (a request meanwhile waits for
    # the view's lock, then finds it loaded).
    threading.Thread(target=scheduler.load_placement, daemon=True,
                     name='placement-load').start()
    discovery = host_discovery.HostDiscovery.from_conf()
    if discovery is not None:
        discovery.start()
    svc = service.Service(CONF.host, 'nova-moves-scheduler', 'scheduler',
                          scheduler, _report, group.observer)
    service.exit_with(service.run([svc], coordinator))
