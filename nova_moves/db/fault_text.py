"""Fault messages and Error event details as they are written: for the
server's owner (nova_moves/faultinfo.py), with every host name the
database knows masked; what was masked or cut stays in the fault's
``details`` (admins only)."""
import sqlalchemy as sa

from nova_moves.db import models
from nova_moves import faultinfo

_SERVICES = models.Service.__table__
_NODES = models.ComputeNode.__table__


def known_hosts(session):
    """Every service host and hypervisor name (a fault is rare: one
    small query is cheaper than trusting each writer to mask)."""
    hosts = set(session.execute(sa.select(_SERVICES.c.host)).scalars())
    for host, node in session.execute(sa.select(
            _NODES.c.host, _NODES.c.hypervisor_hostname)):
        hosts.update((host, node))
    return hosts


def fault(session, values):
    """``values`` {code, message, details, host} as stored."""
    values = dict(values)
    original = values.get('message') or 'move failed'
    hosts = known_hosts(session) | {values.get('host')}
    values['message'] = faultinfo.owner_text(original, hosts) or \
        'Unknown error'
    if values['message'] != original.strip() and not values.get('details'):
        values['details'] = original
    return values


def event_details(session, result, details, traceback):
    """An Error event's details (2.84): the writer's, or the message of
    its traceback, masked like a fault's; None for other results."""
    if result != 'Error':
        return details
    details = details or faultinfo.message_from_traceback(traceback)
    if not details:
        return None
    return faultinfo.owner_text(details, known_hosts(session))
