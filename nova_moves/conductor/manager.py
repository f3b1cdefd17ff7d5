"""The conductor's ``compute_task`` endpoint: it runs each long flow as a
task object; the ``compute_db`` endpoint serves compute agents."""
from oslo_log import log as logging
import oslo_messaging as messaging

from nova_moves.compute import rpcapi as compute_rpcapi
from nova_moves.conductor import db_proxy
from nova_moves.conductor import recovery
from nova_moves import conf
from nova_moves.conductor.tasks import build
from nova_moves.conductor.tasks import live_migrate
from nova_moves.conductor.tasks import migrate
from nova_moves.conductor.tasks import rebuild
from nova_moves import instance_actions
from nova_moves.scheduler import rpcapi as scheduler_rpcapi

LOG = logging.getLogger(__name__)
wrap_instance_event = instance_actions.wrap_instance_event


class ConductorManager:
    # The newest version served: see conductor/rpcapi.py for the history.
    target = messaging.Target(namespace='compute_task', version='1.1')

    def __init__(self):
        self.host = conf.CONF.host
        self.db = db_proxy.ComputeDBProxy()
        self.event_backend = self.db
        self.scheduler = scheduler_rpcapi.SchedulerAPI()
        self.compute_rpcapi = compute_rpcapi.ComputeAPI()

    def endpoints(self):
        return [self, self.db]

    def post_start_hook(self):
        self._recovery = recovery.RecoveryThread(self.compute_rpcapi)
        self._recovery.start()

    def cleanup_host(self):
        if getattr(self, '_recovery', None) is not None:
            self._recovery.stop()

    def _task_kwargs(self):
        return dict(db=self.db, scheduler=self.scheduler,
                    compute_rpcapi=self.compute_rpcapi)

    def build_instances(self, ctxt, instance_uuids, request_spec):
        for instance_uuid in instance_uuids:
            try:
                with instance_actions.event(
                        self.event_backend, ctxt, instance_uuid,
                        'conductor_schedule_and_build_instances'):
                    build.BuildTask(ctxt, instance_uuid, dict(request_spec),
                                    **self._task_kwargs()).run()
            except Exception as exc:
                LOG.warning('Build of %s failed: %s', instance_uuid, exc)

    @wrap_instance_event('conductor')
    def migrate_server(self, ctxt, instance_uuid, live=False, flavor=None,
                       host=None, force=False, block_migration=None,
                       migration_uuid=None, alternates=None, failed_host=None):
        if live:
            return live_migrate.LiveMigrationTask(
                ctxt, instance_uuid, migration_uuid=migration_uuid,
                host=host, force=force, block_migration=block_migration,
                **self._task_kwargs()).run()
        return migrate.MigrationTask(
            ctxt, instance_uuid, flavor=flavor, host=host, force=force,
            migration_uuid=migration_uuid, alternates=alternates,
            failed_host=failed_host, **self._task_kwargs()).run()

    @wrap_instance_event('conductor')
    def live_migrate_instance(self, ctxt, instance_uuid, migration_uuid,
                              host=None, force=False, block_migration=None):
        return live_migrate.LiveMigrationTask(
            ctxt, instance_uuid, migration_uuid=migration_uuid, host=host,
            force=force, block_migration=block_migration,
            **self._task_kwargs()).run()

    @wrap_instance_event('conductor')
    def rebuild_instance(self, ctxt, instance_uuid, migration_uuid,
                         host=None, force=False, stop_after=False):
        return rebuild.EvacuateTask(
            ctxt, instance_uuid, migration_uuid=migration_uuid, host=host,
            force=force, stop_after=stop_after,
            **self._task_kwargs()).run()
