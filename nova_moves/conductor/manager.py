"""The conductor's ``compute_task`` endpoint: it runs each long flow as a
task object; the ``compute_db`` endpoint serves compute agents.

Every move passes the concurrency gate (conductor/admission.py) first: a
move over the limits returns at once, its migration ``queued``, and a
conductor's pass runs it later through run_admitted()."""
from oslo_log import log as logging
import oslo_messaging as messaging

from nova_moves.compute import rpcapi as compute_rpcapi
from nova_moves.conductor import admission
from nova_moves.conductor import cell_clients
from nova_moves.conductor import db_proxy
from nova_moves.conductor import drain
from nova_moves.conductor import recovery
from nova_moves.conductor import usage_audit
from nova_moves.conductor import unknown_hosts
from nova_moves import conf
from nova_moves.conductor.tasks import build
from nova_moves.conductor.tasks import cross_cell_settle
from nova_moves.conductor.tasks import live_migrate
from nova_moves.conductor.tasks import migrate
from nova_moves.conductor.tasks import rebuild
from nova_moves.conductor.tasks import unshelve
from nova_moves import exception
from nova_moves import instance_actions
from nova_moves.scheduler import rpcapi as scheduler_rpcapi
from nova_moves import servicegroup
from nova_moves import states

LOG = logging.getLogger(__name__)
wrap_instance_event = instance_actions.wrap_instance_event
# The conductor records its own events whole at their end: one
# transaction instead of two, and its steps take milliseconds unless the
# scheduler is slow (the events list in start order either way).


class ConductorManager:
    # The newest version served: see conductor/rpcapi.py for the history.
    target = messaging.Target(namespace='compute_task', version='1.3')

    def __init__(self):
        self.host = conf.CONF.host
        self.gate = admission.Gate(self.run_admitted)
        self.db = db_proxy.ComputeDBProxy(on_settled=self.gate.wake)
        self.event_backend = self.db
        self.scheduler = unknown_hosts.WaitingScheduler(
            scheduler_rpcapi.SchedulerAPI())
        self.compute_rpcapi = compute_rpcapi.ComputeAPI()
        # Other cells' schedulers and computes (cross-cell resize).
        self.cell_clients = cell_clients.CellClients()
        # Heartbeat-only liveness (no membership) for the drains.
        self.servicegroup = servicegroup.ServiceGroup()
        self.drains = drain.DrainRunner(self.gate, self.start_move,
                                        self.compute_rpcapi,
                                        self.servicegroup)

    def endpoints(self):
        return [self, self.db]

    def post_start_hook(self):
        self.usage_audit = usage_audit.UsageAudit()
        # Sees an outage of the heartbeats while it lasts (the drains).
        self.servicegroup.start()
        self._recovery = recovery.RecoveryThread(
            self.compute_rpcapi,
            fast_tasks=[self.drains.tick, self.usage_audit.tick],
            cell_clients=self.cell_clients)
        self._recovery.start()
        self.gate.start()

    def cleanup_host(self):
        if getattr(self, '_recovery', None) is not None:
            self._recovery.stop()
        self.gate.stop()
        self.servicegroup.stop()

    # -- the concurrency gate ------------------------------------------------
    def _admitted(self, ctxt, kind, instance_uuid, migration_uuid, kwargs):
        migration = self.db.migration_get(ctxt, migration_uuid)
        if migration['status'] in states.MIGRATION_SETTLED_STATUSES:
            return True  # a stale request: the task's guards refuse it
        try:
            return self.gate.enter(ctxt, kind, instance_uuid, migration_uuid,
                                   migration['source_compute'],
                                   migration['status'], kwargs)
        except exception.MoveConflict as exc:
            LOG.info('Not starting stale move %s: %s', migration_uuid, exc)
            return False

    def _live(self, ctxt, instance_uuid, migration_uuid, gate=True,
              **kwargs):
        if gate and not self._admitted(ctxt, admission.LIVE, instance_uuid,
                                       migration_uuid, kwargs):
            return None
        return live_migrate.LiveMigrationTask(
            ctxt, instance_uuid, migration_uuid=migration_uuid,
            host_memory_used=self.db.host_memory_used,
            **kwargs, **self._task_kwargs()).run()

    def _evacuate(self, ctxt, instance_uuid, migration_uuid, gate=True,
                  **kwargs):
        if gate and not self._admitted(ctxt, admission.EVACUATE,
                                       instance_uuid, migration_uuid, kwargs):
            return None
        return rebuild.EvacuateTask(
            ctxt, instance_uuid, migration_uuid=migration_uuid,
            **kwargs, **self._task_kwargs()).run()

    def _cold(self, ctxt, instance_uuid, migration_uuid=None, resume=False,
              recording=None, **kwargs):
        # A fresh cold move has no migration yet: the task enters the gate
        # once it made one. Its conductor event is written in the step
        # that records the destination (``recording``).
        return migrate.MigrationTask(
            ctxt, instance_uuid, migration_uuid=migration_uuid,
            alternates=None, resume=resume, gate=self.gate,
            recording=recording, **kwargs, **self._task_kwargs()).run()

    def start_move(self, kind, ctxt, instance_uuid, migration_uuid, kwargs):
        """A move started by the conductor itself (a host drain), after
        its db move_start, as if the API had cast it."""
        with instance_actions.event(self.event_backend, ctxt, instance_uuid,
                                    'conductor_drain_move', host=self.host):
            if kind == admission.COLD:
                return self._cold(ctxt, instance_uuid,
                                  new_migration_uuid=migration_uuid,
                                  **kwargs)
            if kind == admission.LIVE:
                return self._live(ctxt, instance_uuid, migration_uuid,
                                  **kwargs)
            return self._evacuate(ctxt, instance_uuid, migration_uuid,
                                  **kwargs)

    def run_admitted(self, kind, ctxt, instance_uuid, migration_uuid,
                     kwargs):
        """A move that waited in the queue got its slot."""
        with instance_actions.event(self.event_backend, ctxt, instance_uuid,
                                    'conductor_start_queued_move',
                                    host=self.host, whole=True) as recording:
            if kind == admission.COLD:
                return self._cold(ctxt, instance_uuid, migration_uuid,
                                  resume=True, recording=recording, **kwargs)
            if kind == admission.LIVE:
                return self._live(ctxt, instance_uuid, migration_uuid,
                                  gate=False, **kwargs)
            return self._evacuate(ctxt, instance_uuid, migration_uuid,
                                  gate=False, **kwargs)

    def _task_kwargs(self):
        return dict(db=self.db, scheduler=self.scheduler,
                    compute_rpcapi=self.compute_rpcapi)

    def build_instances(self, ctxt, instance_uuids, request_spec):
        for instance_uuid in instance_uuids:
            try:
                with instance_actions.event(
                        self.event_backend, ctxt, instance_uuid,
                        'conductor_schedule_and_build_instances',
                        host=self.host, whole=True):
                    build.BuildTask(ctxt, instance_uuid, dict(request_spec),
                                    **self._task_kwargs()).run()
            except Exception as exc:
                LOG.warning('Build of %s failed: %s', instance_uuid, exc)

    def migrate_server(self, ctxt, instance_uuid, live=False, flavor=None,
                       host=None, force=False, block_migration=None,
                       migration_uuid=None, alternates=None, failed_host=None,
                       cross_cell=False):
        with instance_actions.event(self.event_backend, ctxt, instance_uuid,
                                    'conductor_migrate_server',
                                    host=self.host, whole=True) as recording:
            return self._migrate_server(
                ctxt, instance_uuid, live, flavor, host, force,
                block_migration, migration_uuid, alternates, failed_host,
                recording, cross_cell)

    def _migrate_server(self, ctxt, instance_uuid, live, flavor, host, force,
                        block_migration, migration_uuid, alternates,
                        failed_host, recording, cross_cell=False):
        if live:
            return self._live(ctxt, instance_uuid, migration_uuid, host=host,
                              force=force, block_migration=block_migration)
        if migration_uuid is None:
            # 1.3 cross_cell: the API's policy let this move leave its
            # cell when the cell has no host (conductor/tasks/cross_cell).
            return self._cold(ctxt, instance_uuid, flavor=flavor, host=host,
                              force=force, recording=recording,
                              cross_cell=cross_cell,
                              cell_clients=self.cell_clients)
        return migrate.MigrationTask(
            ctxt, instance_uuid, flavor=flavor, host=host, force=force,
            migration_uuid=migration_uuid, alternates=alternates,
            failed_host=failed_host, **self._task_kwargs()).run()

    # -- 1.3: cross-cell resize, confirm and revert (in the server's cell)
    @wrap_instance_event('conductor', whole=True)
    def confirm_snapshot_based_resize(self, ctxt, instance_uuid,
                                      migration_uuid):
        return cross_cell_settle.confirm(ctxt, self.db, self.cell_clients,
                                         migration_uuid)

    @wrap_instance_event('conductor', whole=True)
    def revert_snapshot_based_resize(self, ctxt, instance_uuid,
                                     migration_uuid):
        return cross_cell_settle.revert(ctxt, self.db, self.cell_clients,
                                        migration_uuid)

    @wrap_instance_event('conductor', whole=True)
    def live_migrate_instance(self, ctxt, instance_uuid, migration_uuid,
                              host=None, force=False, block_migration=None):
        return self._live(ctxt, instance_uuid, migration_uuid, host=host,
                          force=force, block_migration=block_migration)

    @wrap_instance_event('conductor', whole=True)
    def rebuild_instance(self, ctxt, instance_uuid, migration_uuid,
                         host=None, force=False, stop_after=False):
        return self._evacuate(ctxt, instance_uuid, migration_uuid, host=host,
                              force=force, stop_after=stop_after)

    @wrap_instance_event('conductor', whole=True)
    def unshelve_instance(self, ctxt, instance_uuid, host=None):
        """1.2: place a SHELVED_OFFLOADED server (conductor/tasks/
        unshelve.py); a failure is its event's Error and a fault."""
        return unshelve.UnshelveTask(ctxt, instance_uuid, host,
                                     **self._task_kwargs()).run()
