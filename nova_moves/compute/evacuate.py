"""Compute side of evacuate.

Destination: rebuild_instance(recreate=True) spawns the server here from
the conductor's claim, takes it over (host, node) and parks the
migration in 'done': the source half of the allocation stays with the
migration until the dead source returns.

Source, on its return (init_host): every evacuation away from this host
that is 'done' (or still in flight but already landed elsewhere) has its
local copy destroyed, its source half dropped, and becomes 'completed'.
A server whose host is still this host is never touched. Evacuations
still running when this host comes back are watched in the background
and cleaned up once they land.
"""
import threading
import time

from oslo_log import log as logging

from nova_moves import exception
from nova_moves import instance_actions

LOG = logging.getLogger(__name__)
wrap_instance_event = instance_actions.wrap_instance_event

POWER_RUNNING = 1
POWER_SHUTDOWN = 4
IN_FLIGHT = ('accepted', 'pre-migrating')
# How long a returning host watches evacuations still in flight.
WATCH_SECONDS = 600
WATCH_INTERVAL = 1.0


class EvacuateMixin:

    # -- destination ------------------------------------------------------
    @wrap_instance_event('compute')
    def rebuild_instance(self, ctxt, instance_uuid, migration_uuid,
                         allocations=None, recreate=True, stop_after=False):
        instance = self._instance(ctxt, instance_uuid)
        # 2.95 leaves it stopped; a server that was stopped stays stopped.
        stop_after = stop_after or instance['vm_state'] == 'stopped'
        try:
            self._update(ctxt, instance_uuid,
                         {'task_state': 'rebuild_spawning'},
                         expected_task_state=['rebuilding'])
            self.driver.spawn(instance_uuid, instance['flavor'],
                              operation='rebuild')
            power = POWER_RUNNING
            if stop_after:
                self.driver.set_power(instance_uuid, 'shutdown', 'power_off')
                power = POWER_SHUTDOWN
            self._update(ctxt, instance_uuid,
                         {'host': self.host, 'node': self.host,
                          'vm_state': 'stopped' if stop_after else 'active',
                          'task_state': None, 'power_state': power},
                         expected_task_state=['rebuild_spawning'])
        except Exception as exc:
            LOG.warning('Rebuild of %s on %s failed: %s', instance_uuid,
                        self.host, exc)
            self._rebuild_failed(ctxt, instance_uuid, migration_uuid, exc)
            raise
        # The server is here now; a source that came back meanwhile may
        # already have completed the migration (it saw the server here).
        try:
            self.conductor.migration_update(
                ctxt, migration_uuid, {'status': 'done'},
                expected_status=['pre-migrating'])
        except exception.Conflict as exc:
            LOG.info('Evacuation %s already settled: %s', migration_uuid,
                     exc)

    def _rebuild_failed(self, ctxt, instance_uuid, migration_uuid, exc):
        """Give the claim back and hand the source half back to the
        server, which stays on its (dead) source in ERROR."""
        try:
            if self.driver.has_guest(instance_uuid):
                self.driver.destroy(instance_uuid, operation='cleanup')
        except Exception:
            LOG.exception('Could not remove the partial copy of %s',
                          instance_uuid)
        self.conductor.allocations_delete(ctxt, instance_uuid)
        self.conductor.allocations_move(ctxt, migration_uuid, instance_uuid)
        # The fault and the migration first, the server's state last:
        # whoever sees ERROR must also see why and a settled migration.
        self._fault(ctxt, instance_uuid, exc)
        try:
            self.conductor.migration_update(ctxt, migration_uuid,
                                            {'status': 'failed'})
        except exception.NovaMovesException:
            LOG.exception('Could not mark migration %s failed',
                          migration_uuid)
        self._update(ctxt, instance_uuid,
                     {'vm_state': 'error', 'task_state': None})

    # -- source, when it comes back ---------------------------------------
    def _init_host_evacuate(self, ctxt):
        migrations = self.conductor.migration_get_all(
            ctxt, source_compute=self.host, migration_type='evacuation',
            status=['done'] + list(IN_FLIGHT))
        waiting = []
        for migration in migrations:
            if not self._clean_evacuated(ctxt, migration):
                waiting.append(migration['uuid'])
        if waiting:
            LOG.info('Evacuations from %s still running: %s; watching',
                     self.host, waiting)
            threading.Thread(target=self._watch_evacuations,
                             args=(ctxt, waiting), daemon=True,
                             name='evacuate-watch').start()

    def _watch_evacuations(self, ctxt, waiting, timeout=WATCH_SECONDS):
        """Clean up evacuations that were still running when this host
        came back, once they land ('done'); ones that failed leave the
        server here, which is then this host's own again."""
        deadline = time.monotonic() + timeout
        while waiting and time.monotonic() < deadline:
            time.sleep(WATCH_INTERVAL)
            for uuid in list(waiting):
                try:
                    migration = self.conductor.migration_get(ctxt, uuid)
                    if migration['status'] in IN_FLIGHT and \
                            not self._clean_evacuated(ctxt, migration):
                        continue
                    if migration['status'] == 'done':
                        self._clean_evacuated(ctxt, migration)
                    waiting.remove(uuid)
                except Exception:
                    LOG.exception('Watching evacuation %s failed', uuid)
        if waiting:
            LOG.warning('Evacuations %s from %s did not settle in %ss; '
                        'they are cleaned up on the next restart',
                        waiting, self.host, timeout)

    def _clean_evacuated(self, ctxt, migration):
        """Clean one evacuation away from this host; False when it is
        still in flight with the server not landed elsewhere yet."""
        instance_uuid = migration['instance_uuid']
        try:
            instance = self.conductor.instance_get(ctxt, instance_uuid,
                                                   read_deleted=True)
        except exception.InstanceNotFound:
            instance = None
        gone = instance is None or instance['vm_state'] == 'deleted'
        still_ours = not gone and instance['host'] == self.host
        if migration['status'] in IN_FLIGHT and (still_ours or not gone and
                                                 instance['host'] is None):
            return False
        if not still_ours and self.driver.has_guest(instance_uuid):
            LOG.info('Destroying local copy of %s, evacuated from %s to %s',
                     instance_uuid, self.host,
                     instance and instance['host'])
            self.driver.destroy(instance_uuid)
        # The migration holds only the source half (root, nested or
        # sharing providers of this host); the server's own is elsewhere.
        self.conductor.allocations_delete(ctxt, migration['uuid'])
        self.conductor.migration_update(
            ctxt, migration['id'], {'status': 'completed'},
            expected_status=['done'] + list(IN_FLIGHT))
        LOG.info('Evacuation %s of %s from %s completed', migration['uuid'],
                 instance_uuid, self.host)
        return True
