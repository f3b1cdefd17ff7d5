"""POST /servers/{id}/action {"evacuate": {...}}: rebuild a server of a
failed host elsewhere.

The API refuses while the source compute service is up, claims the
server (task_state None -> rebuilding, a compare-and-swap), records the
action and an 'evacuation' migration, then casts the conductor's
rebuild_instance. Answers 200 (as Nova does); the body carries adminPass
only below 2.14.
"""
import secrets

import flask

from nova_moves.api import request as api_req
from nova_moves.api import common
from nova_moves.api import servicegroup_cache
from nova_moves import liveness
from nova_moves.api import service_names
from nova_moves.api import validation
from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import moves
from nova_moves.moves import evacuate as table
from nova_moves import states

POLICY = 'os_compute_api:os-evacuate'
ALLOWED_VM_STATES = list(states.ALLOW_EVACUATE)
# What move_start sets: the evacuation table's conductor row's task_state.
TASK_STATE = moves.request_task_state(table)

_ADMIN_PASSWORD = {'type': 'string'}


def _schema(properties, required=()):
    # nova_moves extension at every version: a dry run (blueprint "Check
    # the destination host when migrating").
    properties = dict(properties, check=validation.BOOLEAN)
    inner = {'type': 'object', 'properties': properties,
             'additionalProperties': False}
    if required:
        inner['required'] = list(required)
    return {'type': 'object', 'properties': {'evacuate': inner},
            'required': ['evacuate'], 'additionalProperties': False}


# 2.1: onSharedStorage required; host and adminPass optional.
SCHEMA_V21 = _schema({'host': validation.HOSTNAME,
                      'onSharedStorage': validation.BOOLEAN,
                      'adminPass': _ADMIN_PASSWORD},
                     required=['onSharedStorage'])
# 2.14: onSharedStorage gone (the compute finds out itself).
SCHEMA_V214 = _schema({'host': validation.HOSTNAME,
                       'adminPass': _ADMIN_PASSWORD})
# 2.29: force (skip the scheduler for the named host).
SCHEMA_V229 = _schema({'host': validation.HOSTNAME,
                       'adminPass': _ADMIN_PASSWORD,
                       'force': validation.BOOLEAN})
# 2.68: force gone again (spec "Remove force flag from live-migrate and
# evacuate").
SCHEMA_V268 = SCHEMA_V214


class ComputeServiceInUse(exception.Invalid):
    msg_fmt = 'Compute service of %(host)s is still in use.'


class ComputeServiceUnknown(exception.Invalid):
    msg_fmt = ('Compute service of %(host)s may still be in use: it has '
               'not reported since heartbeats could be seen again after '
               'an outage of the control plane. Retry once it has had '
               'service_down_time to report.')


def _check_target(instance, host):
    if host is None:
        return
    if not db_api.service_get_all(binary=service_names.COMPUTE_BINARY,
                                  host=host):
        raise exception.ComputeHostNotFound(host=host)
    if host == instance['host']:
        raise exception.ValidationError(
            detail="The target host can't be the same one.")


def _check_source_down(instance):
    """Evacuating a server whose compute still runs it would leave two
    copies running: only a dead (or fenced, forced-down) source qualifies."""
    if not instance['host']:
        raise exception.InstanceInvalidState(
            method='evacuate', instance_uuid=instance['uuid'], attr='host',
            state=None)
    service = db_api.service_get_by_host_and_binary(instance['host'],
                                                    service_names.COMPUTE_BINARY)
    if not service:
        return
    state = servicegroup_cache.state(service)
    if state == liveness.UNKNOWN:
        # Silent only because heartbeats could not be seen (a broker
        # outage): it may still run the server. Nova evacuates it.
        raise ComputeServiceUnknown(host=instance['host'])
    if state != liveness.DOWN:
        raise ComputeServiceInUse(host=instance['host'])


@validation.schema(SCHEMA_V21, max_version='2.13')
@validation.schema(SCHEMA_V214, '2.14', '2.28')
@validation.schema(SCHEMA_V229, '2.29', '2.67')
@validation.schema(SCHEMA_V268, '2.68')
def evacuate(server_id, value):
    version = api_req.version()
    ctxt = api_req.context()
    instance = common.get_instance(server_id, POLICY)
    body = validation.body()['evacuate']
    host = body.get('host')
    force = validation.to_bool(body.get('force', False))
    if force and not host:
        raise exception.ValidationError(
            detail="Can't force to a non-provided destination")
    on_shared_storage = (validation.to_bool(body['onSharedStorage'])
                         if version < '2.14' else False)
    if 'adminPass' in body and on_shared_storage:
        raise exception.ValidationError(
            detail="admin password can't be changed on existing disk")
    password = body.get('adminPass')
    if password is None and not on_shared_storage:
        password = secrets.token_urlsafe(9)

    _check_target(instance, host)
    if validation.to_bool(body.get('check', False)):
        common.require_host_for('check', host)
        try:
            _check_source_down(instance)
            source_reasons = []
        except (exception.Invalid, exception.Conflict) as exc:
            source_reasons = [exc.message]
        return common.dry_run_verdict(instance, host, 'evacuate',
                                      ALLOWED_VM_STATES, source_reasons)
    common.check_state(instance, 'evacuate', ALLOWED_VM_STATES)
    _check_source_down(instance)
    if instance['host'] == host:
        raise exception.ValidationError(
            detail="The target host can't be the same one.")
    migration = common.start_move(
        instance, 'evacuate', TASK_STATE, ALLOWED_VM_STATES,
        'evacuate',
        migration={'migration_type': states.EVACUATION,
                   'status': states.M_ACCEPTED,
                   'source_compute': instance['host'],
                   'source_node': instance['node'], 'dest_compute': host,
                   'old_flavor_id': str(instance['flavor']['id']),
                   'new_flavor_id': str(instance['flavor']['id'])})
    try:
        with api_req.services().keeper.sending(
                instance['uuid'], states.REBUILDING, migration):
            api_req.services().conductor.rebuild_instance(
                ctxt, instance['uuid'], migration['uuid'], host=host,
                force=force, stop_after=version >= '2.95')
    except Exception:
        # Nothing was sent: the server back as it was, the migration
        # closed (move_failed, without a fault: nothing failed yet).
        common.abandon_move(instance['uuid'], TASK_STATE, migration,
                            instance_values={'vm_state': instance[
                                'vm_state']})
        raise

    if version < '2.14':
        return flask.jsonify({'adminPass': password})
    return flask.Response(status=200)


ACTIONS = {'evacuate': evacuate}
