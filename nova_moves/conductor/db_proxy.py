"""The conductor's ``compute_db`` endpoint: db/api.py for compute agents.
Conductor code uses the same object locally, so both sides record
instance events through one interface."""
import oslo_messaging as messaging

from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import instance_actions
from nova_moves import moves
from nova_moves import states

CONDUCTOR = 'nova-moves-conductor'


class ComputeDBProxy:
    """Version history: see conductor/rpcapi.py ConductorDBAPI."""
    target = messaging.Target(namespace='compute_db', version='1.8')

    def __init__(self, on_settled=None):
        # Called when a step settles its migration (the conductor's gate
        # admits a queued move into the freed slot at once).
        self._on_settled = on_settled

    def _settled(self, migration):
        if (self._on_settled is not None and migration and
                migration.get('status') in
                states.MIGRATION_SETTLED_STATUSES):
            self._on_settled()

    def service_report(self, ctxt, host, binary, topic,
                       availability_zone=None, settled=None):
        """The heartbeat of a compute. The answer names the conductors up,
        so a compute whose heartbeat one of them leaves unanswered (hung,
        or killed with it) can send it to another one directly.

        ``settled`` False (1.5): the compute has not settled anything
        since its last report. If it is shown down meanwhile (silent, or
        forced down: its servers may have been evacuated) and evacuations
        away from it are not cleaned up yet, nothing is recorded and the
        answer is {'settle_first': True, 'evacuations': [those
        migrations]}: the compute removes the evacuated copies, then
        reports with ``settled`` True. The compute cannot tell this
        itself: a report it sent before a partition may reach the broker
        only after the partition heals. With nothing to clean the report
        is recorded at once: a host forced down for long sends one call
        per heartbeat, not three."""
        if settled is False:
            service = db_api.service_get_by_host_and_binary(host, binary)
            if service is not None and not db_api.service_is_up(service):
                evacuations = db_api.migration_get_all(
                    source_compute=host, migration_type=states.EVACUATION,
                    status=[states.M_DONE] +
                    sorted(moves.EVACUATING))
                if evacuations:
                    return {'settle_first': True,
                            'evacuations': evacuations}
        service = db_api.service_report(host, binary, topic,
                                        availability_zone)
        # forced_down: a self-fenced compute keeps its guests fenced
        # while the operator says it is down (compute/fence.py).
        return {'conductors': [
            s['host'] for s in db_api.service_get_all(binary=CONDUCTOR)
            if db_api.service_is_up(s)],
            'forced_down': bool(service and service.get('forced_down'))}

    def compute_node_sync(self, ctxt, node):
        return db_api.compute_node_sync(node)

    def instance_get(self, ctxt, instance_uuid, read_deleted=False):
        return db_api.instance_get(instance_uuid, read_deleted=read_deleted)

    def instance_get_all_by_host(self, ctxt, host):
        return db_api.instance_get_all(host=host)

    def instance_update(self, ctxt, instance_uuid, values, expected=None):
        return db_api.instance_update(instance_uuid, values,
                                      **(expected or {}))

    def instance_fault_create(self, ctxt, instance_uuid, code, message,
                              details=None, host=None):
        return db_api.instance_fault_create(instance_uuid, code, message,
                                            details, host)

    def migration_get(self, ctxt, migration_id):
        return db_api.migration_get(migration_id)

    def migration_get_all(self, ctxt, filters):
        return db_api.migration_get_all(**filters)

    # -- 1.7 ---------------------------------------------------------------
    @messaging.expected_exceptions(exception.Conflict)
    def settle_start(self, ctxt, step, migration_uuid):
        """db_api.settle_start of one migration: [migration, facts]."""
        migration, facts = db_api.settle_start(step,
                                               migration_uuid=migration_uuid)
        return [migration, facts]

    def migration_update(self, ctxt, migration_id, values,
                         expected_status=None):
        migration = db_api.migration_update(
            migration_id, values, expected_status=expected_status)
        self._settled(migration)
        return migration

    def allocations_get(self, ctxt, consumer_id):
        return db_api.allocations_get(consumer_id)

    def allocations_replace(self, ctxt, consumer_id, allocations,
                            from_consumer=None, consumer_generation=None):
        return db_api.allocations_replace(
            consumer_id, allocations, from_consumer=from_consumer,
            consumer_generation=consumer_generation)

    def allocations_move(self, ctxt, from_consumer, to_consumer):
        return db_api.allocations_move(from_consumer, to_consumer)

    def allocations_delete(self, ctxt, consumer_id, root_host=None):
        return db_api.allocations_delete(consumer_id, root_host=root_host)

    # A flow started by a service (recovery, auto-confirm) has no action
    # for its request id; the caller knows and carries on, so this is no
    # server-side error worth a traceback in the log.
    @messaging.expected_exceptions(exception.ActionNotFound)
    def action_event_start(self, ctxt, instance_uuid, request_id, event,
                           host=None):
        return db_api.action_event_start(instance_uuid, request_id, event,
                                         host)

    @messaging.expected_exceptions(exception.ActionNotFound)
    def action_event_finish(self, ctxt, instance_uuid, request_id, event,
                            result, traceback=None, details=None, host=None,
                            start_time=None):
        """1.2: ``host`` and ``start_time`` record a step whole at its end
        (instance_actions.event(whole=True)). ``request_id``
        instance_actions.NEWEST: the server's newest action (an older
        conductor finds no such action and records nothing)."""
        if request_id == instance_actions.NEWEST:
            newest = db_api.actions_get(instance_uuid, limit=1)
            if not newest:
                raise exception.ActionNotFound(request_id=request_id,
                                               instance_uuid=instance_uuid)
            request_id = newest[0]['request_id']
        return db_api.action_event_finish(
            instance_uuid, request_id, event, result, traceback, details,
            host=host, start_time=start_time)

    def can_record_whole_events(self):
        return True

    # -- 1.1: the guarded move steps ---------------------------------------
    # A stale step is the caller's to drop: no traceback in our log.
    @messaging.expected_exceptions(exception.MoveConflict)
    def move_advance(self, ctxt, migration_id, **kwargs):
        kwargs.setdefault('request_id', getattr(ctxt, 'request_id', None))
        result = db_api.move_advance(migration_id, **kwargs)
        self._settled(result['migration'])
        return result

    @messaging.expected_exceptions(exception.MoveConflict)
    def move_failed(self, ctxt, migration_id=None, **kwargs):
        kwargs.setdefault('request_id', getattr(ctxt, 'request_id', None))
        result = db_api.move_failed(migration_id, **kwargs)
        self._settled(result['migration'])
        return result

    @staticmethod
    def host_memory_used(host, except_uuid):
        """The memory the flavors of ``host``'s servers take, but
        ``except_uuid``'s. Not an RPC method: the conductor's live
        migration task sends it with the destination's check (compute
        1.6), which then makes no call of its own."""
        return sum(i['flavor']['memory_mb']
                   for i in db_api.instance_get_all(host=host)
                   if i['uuid'] != except_uuid and i.get('flavor'))

    def consumer_generation_get(self, ctxt, consumer_id):
        return db_api.consumer_generation_get(consumer_id)
