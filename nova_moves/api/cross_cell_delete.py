"""Deleting a server in VERIFY_RESIZE after a cross-cell resize (doc/
cells.md "Cross-cell resize"): its old copy, rows and allocation are in
the source cell, which the delete (in the server's cell) does not reach.
As Nova's _confirm_resize_on_deleting does, the move is confirmed
first, synchronously, by the conductor of the server's cell; then the
delete goes on as for any server."""
from oslo_log import log as logging

from nova_moves.api import common
from nova_moves.api import request as api_req
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import states

LOG = logging.getLogger(__name__)


def _finished_cross_cell(instance_uuid):
    for migration in db_api.migration_get_all(instance_uuid=instance_uuid):
        if migration.get('cross_cell_move') and \
                migration['status'] == states.M_FINISHED:
            return migration
    return None


def confirm_first(instance):
    """The server as it is after its cross-cell move was confirmed, or
    None when it has none to confirm."""
    if _finished_cross_cell(instance['uuid']) is None:
        return None
    try:
        migration, _facts = db_api.settle_start(
            'confirm_resize', instance_uuid=instance['uuid'],
            action=common.action_of(instance, 'confirmResize'))
    except (exception.Invalid, exception.Conflict) as exc:
        LOG.info('Not confirming %s before its delete: %s',
                 instance['uuid'], exc)
        return None
    try:
        api_req.services().conductor.confirm_snapshot_based_resize(
            api_req.context(), instance['uuid'], migration['uuid'],
            do_cast=False)
    except Exception:
        db_api.settle_abandon('confirm_resize', migration)
        raise
    return db_api.instance_get(instance['uuid'])
