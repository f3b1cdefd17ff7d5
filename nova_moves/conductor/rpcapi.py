"""Clients of the conductor.

ComputeTaskAPI: the long flows (build, migrate, live migrate, evacuate).
The API casts them; migrate_server keeps ``do_cast`` because a compute's
reschedule calls it synchronously and handles its failure, and the
pre-2.34 live migration calls it so that a failed check is a 400.

ConductorDBAPI: the database for compute agents, which never open it.
"""
import oslo_messaging as messaging

from nova_moves import rpc

TOPIC = 'conductor'


class ComputeTaskAPI:
    """1.0 - build_instances, migrate_server, live_migrate_instance,
    rebuild_instance"""
    VERSION = '1.0'

    def __init__(self):
        self.client = rpc.get_client(messaging.Target(
            topic=TOPIC, namespace='compute_task', version=self.VERSION))

    def build_instances(self, ctxt, instance_uuids, request_spec):
        self.client.prepare().cast(ctxt, 'build_instances',
                                   instance_uuids=instance_uuids,
                                   request_spec=request_spec)

    def migrate_server(self, ctxt, instance_uuid, live=False, flavor=None,
                       host=None, force=False, block_migration=None,
                       migration_uuid=None, alternates=None, do_cast=True,
                       timeout=None):
        """Resize/cold migrate (live=False) or the blocking pre-2.34 live
        migration (live=True). ``migration_uuid`` and ``alternates`` are
        set on a compute's reschedule, which passes do_cast=False."""
        kwargs = dict(instance_uuid=instance_uuid, live=live, flavor=flavor,
                      host=host, force=force, block_migration=block_migration,
                      migration_uuid=migration_uuid, alternates=alternates)
        if do_cast:
            self.client.prepare().cast(ctxt, 'migrate_server', **kwargs)
            return None
        return self.client.prepare(timeout=timeout).call(
            ctxt, 'migrate_server', **kwargs)

    def live_migrate_instance(self, ctxt, instance_uuid, migration_uuid,
                              host=None, force=False, block_migration=None):
        """2.34+: the checks run in the background, reported as events."""
        self.client.prepare().cast(
            ctxt, 'live_migrate_instance', instance_uuid=instance_uuid,
            migration_uuid=migration_uuid, host=host, force=force,
            block_migration=block_migration)

    def rebuild_instance(self, ctxt, instance_uuid, migration_uuid,
                         host=None, force=False, stop_after=False):
        """Evacuate: schedule away from the failed source and rebuild."""
        self.client.prepare().cast(
            ctxt, 'rebuild_instance', instance_uuid=instance_uuid,
            migration_uuid=migration_uuid, host=host, force=force,
            stop_after=stop_after)


class ConductorDBAPI:
    """The database as compute agents see it: blocking calls, one per
    db/api.py function they may use."""
    VERSION = '1.0'

    def __init__(self):
        self.client = rpc.get_client(messaging.Target(
            topic=TOPIC, namespace='compute_db', version=self.VERSION))

    def _call(self, ctxt, method, timeout=None, **kwargs):
        return self.client.prepare(timeout=timeout).call(ctxt, method,
                                                         **kwargs)

    def service_report(self, ctxt, host, binary, topic,
                       availability_zone=None):
        return self._call(ctxt, 'service_report', host=host, binary=binary,
                          topic=topic, availability_zone=availability_zone)

    def compute_node_sync(self, ctxt, node, timeout=None):
        return self._call(ctxt, 'compute_node_sync', timeout=timeout,
                          node=node)

    def instance_get(self, ctxt, instance_uuid, read_deleted=False):
        return self._call(ctxt, 'instance_get', instance_uuid=instance_uuid,
                          read_deleted=read_deleted)

    def instance_get_all_by_host(self, ctxt, host):
        return self._call(ctxt, 'instance_get_all_by_host', host=host)

    def instance_update(self, ctxt, instance_uuid, values, **expected):
        """``expected`` may hold expected_task_state, expected_vm_state,
        expected_host: the compare-and-swap of db_api.instance_update."""
        return self._call(ctxt, 'instance_update',
                          instance_uuid=instance_uuid, values=values,
                          expected=expected)

    def instance_fault_create(self, ctxt, instance_uuid, code, message,
                              details=None, host=None):
        return self._call(ctxt, 'instance_fault_create',
                          instance_uuid=instance_uuid, code=code,
                          message=message, details=details, host=host)

    def migration_get(self, ctxt, migration_id):
        return self._call(ctxt, 'migration_get', migration_id=migration_id)

    def migration_get_all(self, ctxt, **filters):
        return self._call(ctxt, 'migration_get_all', filters=filters)

    def migration_update(self, ctxt, migration_id, values,
                         expected_status=None):
        return self._call(ctxt, 'migration_update', migration_id=migration_id,
                          values=values, expected_status=expected_status)

    def allocations_get(self, ctxt, consumer_id):
        return self._call(ctxt, 'allocations_get', consumer_id=consumer_id)

    def allocations_replace(self, ctxt, consumer_id, allocations,
                            from_consumer=None):
        return self._call(ctxt, 'allocations_replace',
                          consumer_id=consumer_id, allocations=allocations,
                          from_consumer=from_consumer)

    def allocations_move(self, ctxt, from_consumer, to_consumer):
        return self._call(ctxt, 'allocations_move',
                          from_consumer=from_consumer,
                          to_consumer=to_consumer)

    def allocations_delete(self, ctxt, consumer_id, root_host=None):
        return self._call(ctxt, 'allocations_delete', consumer_id=consumer_id,
                          root_host=root_host)

    def action_event_start(self, ctxt, instance_uuid, request_id, event,
                           host=None):
        return self._call(ctxt, 'action_event_start',
                          instance_uuid=instance_uuid, request_id=request_id,
                          event=event, host=host)

    def action_event_finish(self, ctxt, instance_uuid, request_id, event,
                            result, traceback=None, details=None):
        return self._call(ctxt, 'action_event_finish',
                          instance_uuid=instance_uuid, request_id=request_id,
                          event=event, result=result, traceback=traceback,
                          details=details)
