"""A server group member's cross-cell resize (doc/cells.md "Server
groups").

Nova's global scheduler filters every host of every cell by the
group's members: a hard-affinity member whose group has other members
finds no host in another cell (they are all in its cell), any other
policy's member may leave. Here each cell's scheduler sees its own
cell's members: before a target cell's scheduler is asked, the server
joins the group there (the group mirrored, as a boot in that cell
does), so it filters and weighs with that cell's members; the
membership goes with the target's copy when the move is undone or
reverted, and with the source's at confirm (db/cross_cell.py)."""
from oslo_log import log as logging

from nova_moves import cells
from nova_moves.db import api as db_api
from nova_moves import exception

LOG = logging.getLogger(__name__)
HARD_AFFINITY = 'affinity'


def group_of(instance_uuid):
    """The server's group in its (source) cell, or None."""
    return db_api.server_group_of_instance(instance_uuid)


def check_may_leave(group, instance_uuid):
    """NoValidHost for a hard-affinity member with other members: no
    host of another cell is where they are (Nova's filter finds none)."""
    if group is not None and group['policy'] == HARD_AFFINITY and any(
            m != instance_uuid for m in group['members']):
        raise exception.NoValidHost(
            reason='Server %s is a member of affinity server group %s '
                   'whose other members are in its cell.' % (
                       instance_uuid, group['uuid']))


def join_target(group, instance_uuid):
    """Inside the target cell's target: the server a member there, so
    its scheduler sees the group (nothing for a server in no group)."""
    if group is not None:
        db_api.server_group_join(group, instance_uuid)


def leave_target(target, group, instance_uuid):
    """The membership written by join_target goes (the cell found no
    host); a failure is logged: a member row with no server there is
    not a member (its server is not in that cell)."""
    if group is None:
        return
    try:
        with cells.target(target):
            db_api.server_group_leave(instance_uuid)
    except Exception:
        LOG.warning('Could not remove %s from group %s in cell %s',
                    instance_uuid, group['uuid'], target.name,
                    exc_info=True)
