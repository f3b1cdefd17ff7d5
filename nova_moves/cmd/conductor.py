"""nova-moves-conductor: the long flows, and the database for computes."""
import sys

from nova_moves.conductor import manager
from nova_moves import conf
from nova_moves import coordination
from nova_moves.db import api as db_api
from nova_moves import service

CONF = conf.CONF


def _report(ctxt, host, binary, topic):
    db_api.service_report(host, binary, topic)


def main():
    service.prepare(sys.argv, 'nova-moves-conductor')
    conductor = manager.ConductorManager()
    svc = service.Service(CONF.host, 'nova-moves-conductor', 'conductor',
                          conductor, _report,
                          conductor.servicegroup.observer)
    service.exit_with(service.run([svc], coordination.Coordinator()))
