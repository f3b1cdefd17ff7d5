"""Compute side of resize and cold migrate. Every hop is a cast; each
handler writes its state (task_state, migration status, allocations)
before it casts the next hop.

    dest   prep_resize           migration pre-migrating
    source resize_instance       task resize_migrating, migration migrating,
                                 power off + disks, then task
                                 resize_migrated, migration post-migrating,
                                 host = dest
    dest   finish_resize         task resize_finish, spawn, flavor = new,
                                 vm_state resized, migration finished
    source confirm_resize        old copy destroyed, migration allocation
                                 deleted, migration confirmed
    dest   revert_resize         new copy destroyed, dest claim dropped
    source finish_revert_resize  allocation handed back, old flavor and
                                 host, migration reverted

Fake hypervisor operations (names for fault injection): prep_resize,
migrate_disk_and_power_off, finish_migration, confirm_migration,
revert_migration, finish_revert_migration, power_on, power_off.
"""
import datetime
import threading

from oslo_log import log as logging

from nova_moves import conf
from nova_moves import context as nm_context
from nova_moves import exception
from nova_moves import instance_actions

CONF = conf.CONF
LOG = logging.getLogger(__name__)
wrap_instance_event = instance_actions.wrap_instance_event

POWER_RUNNING = 1
POWER_SHUTDOWN = 4


def _vm_state_before(instance):
    """A resized server remembers whether it was stopped through its
    power state (kept off through the move when it was)."""
    return 'stopped' if instance['power_state'] == POWER_SHUTDOWN \
        else 'active'


class ResizeMixin:

    # -- destination: prep_resize ------------------------------------------
    def prep_resize(self, ctxt, instance_uuid, migration_uuid, flavor,
                    request_spec, alternates):
        """The conductor already claimed this host for the server. Get
        ready; on failure drop the claim and ask the conductor (a call)
        for the next alternate. The event is closed before rescheduling
        so the next host's compute_prep_resize event is its own."""
        try:
            with instance_actions.event(self.event_backend, ctxt,
                                        instance_uuid, 'compute_prep_resize',
                                        host=self.host):
                self.driver.operate('prep_resize')
                migration = self.conductor.migration_get(ctxt,
                                                         migration_uuid)
                if migration['status'] != 'pre-migrating':
                    raise RuntimeError('migration %s is %s, not pre-migrating'
                                       % (migration_uuid,
                                          migration['status']))
        except Exception as exc:
            LOG.warning('prep_resize of %s failed on %s: %s', instance_uuid,
                        self.host, exc)
            self._reschedule_resize(ctxt, instance_uuid, migration_uuid,
                                    flavor, alternates)
            return
        self.compute_rpcapi.resize_instance(
            ctxt, migration['source_compute'], instance_uuid, migration_uuid)

    def _reschedule_resize(self, ctxt, instance_uuid, migration_uuid, flavor,
                           alternates):
        self.conductor.allocations_delete(ctxt, instance_uuid)
        try:
            # Synchronous (seed 000): the conductor claims the next
            # alternate, or rolls the whole move back and raises.
            self.compute_task_api.migrate_server(
                ctxt, instance_uuid, flavor=flavor,
                migration_uuid=migration_uuid, alternates=alternates or [],
                do_cast=False)
        except Exception as exc:
            LOG.warning('Reschedule of %s failed: %s', instance_uuid, exc)
            self._rollback_if_abandoned(ctxt, instance_uuid, migration_uuid,
                                        exc)

    def _rollback_if_abandoned(self, ctxt, instance_uuid, migration_uuid,
                               exc):
        """After a failed reschedule call the conductor has normally put
        the server back already (migration 'error'). If it did not answer
        (timeout, conductor gone) and nobody moved the migration on, this
        host rolls back itself so that nothing stays stuck."""
        try:
            migration = self.conductor.migration_get(ctxt, migration_uuid)
            if (migration['status'] != 'pre-migrating' or
                    migration['dest_compute'] != self.host):
                return
            self.conductor.migration_update(ctxt, migration_uuid,
                                            {'status': 'error'},
                                            expected_status=['pre-migrating'])
            self.conductor.allocations_move(ctxt, migration_uuid,
                                            instance_uuid)
            self._update(ctxt, instance_uuid,
                         {'task_state': None, 'old_flavor': None,
                          'new_flavor': None},
                         expected_task_state=['resize_prep'])
            self._fault(ctxt, instance_uuid, exc)
        except Exception:
            LOG.exception('Could not roll back migration %s of %s',
                          migration_uuid, instance_uuid)

    # -- source: resize_instance -------------------------------------------
    @wrap_instance_event('compute')
    def resize_instance(self, ctxt, instance_uuid, migration_uuid):
        migration = self.conductor.migration_get(ctxt, migration_uuid)
        powered_off = False
        try:
            self._update(ctxt, instance_uuid,
                         {'task_state': 'resize_migrating'},
                         expected_task_state=['resize_prep'])
            self.conductor.migration_update(
                ctxt, migration_uuid, {'status': 'migrating'},
                expected_status=['pre-migrating'])
            powered_off = True
            self.driver.set_power(instance_uuid, 'shutdown',
                                  'migrate_disk_and_power_off')
            self.conductor.migration_update(
                ctxt, migration_uuid, {'status': 'post-migrating'},
                expected_status=['migrating'])
            self._update(ctxt, instance_uuid,
                         {'task_state': 'resize_migrated',
                          'host': migration['dest_compute'],
                          'node': migration['dest_node']},
                         expected_task_state=['resize_migrating'])
        except Exception as exc:
            if powered_off:
                self._power_on_quietly(instance_uuid)
            self._resize_failed(ctxt, instance_uuid, migration, exc)
            raise
        self.compute_rpcapi.finish_resize(
            ctxt, migration['dest_compute'], instance_uuid, migration_uuid)

    # -- destination: finish_resize ----------------------------------------
    @wrap_instance_event('compute')
    def finish_resize(self, ctxt, instance_uuid, migration_uuid):
        migration = self.conductor.migration_get(ctxt, migration_uuid)
        instance = self._instance(ctxt, instance_uuid)
        stopped = instance['vm_state'] == 'stopped'
        spawned = False
        try:
            self._update(ctxt, instance_uuid, {'task_state': 'resize_finish'},
                         expected_task_state=['resize_migrated'])
            self.driver.spawn(instance_uuid, instance['new_flavor'],
                              operation='finish_migration')
            spawned = True
            if stopped:
                self.driver.set_power(instance_uuid, 'shutdown', 'power_off')
            self.conductor.migration_update(
                ctxt, migration_uuid, {'status': 'finished'},
                expected_status=['post-migrating'])
            self._update(ctxt, instance_uuid,
                         {'flavor': instance['new_flavor'],
                          'host': self.host, 'node': migration['dest_node'],
                          'vm_state': 'resized', 'task_state': None,
                          'power_state': POWER_SHUTDOWN if stopped
                          else POWER_RUNNING},
                         expected_task_state=['resize_finish'])
        except Exception as exc:
            if spawned and not self._same_host(migration):
                self._destroy_quietly(instance_uuid)
            self._resize_failed(ctxt, instance_uuid, migration, exc)
            if not self._same_host(migration):
                # The old copy was powered off by the source; it powers it
                # back on (finish_revert_resize of an 'error' migration).
                self.compute_rpcapi.finish_revert_resize(
                    ctxt, migration['source_compute'], instance_uuid,
                    migration_uuid)
            raise

    def _resize_failed(self, ctxt, instance_uuid, migration, exc):
        """Put the server back on its source as it was before the move:
        source allocation back (dropping any destination claim), host and
        flavor as before, migration 'error', a fault."""
        LOG.warning('Resize/migration %s of %s failed on %s: %s',
                    migration['uuid'], instance_uuid, self.host, exc)
        instance = self._instance(ctxt, instance_uuid)
        self.conductor.allocations_move(ctxt, migration['uuid'],
                                        instance_uuid)
        self.conductor.migration_update(ctxt, migration['uuid'],
                                        {'status': 'error'})
        values = {'task_state': None, 'host': migration['source_compute'],
                  'node': migration['source_node'],
                  'old_flavor': None, 'new_flavor': None}
        if instance['old_flavor']:
            values['flavor'] = instance['old_flavor']
        self._update(ctxt, instance_uuid, values)
        self._fault(ctxt, instance_uuid, exc)

    # -- source: confirm_resize --------------------------------------------
    @wrap_instance_event('compute')
    def confirm_resize(self, ctxt, instance_uuid, migration_uuid):
        migration = self.conductor.migration_get(ctxt, migration_uuid)
        if migration['status'] != 'confirming':
            # Finished already by this host's restart recovery.
            LOG.info('Migration %s is %s; nothing to confirm',
                     migration_uuid, migration['status'])
            return
        instance = self._instance(ctxt, instance_uuid)
        try:
            if self._same_host(migration):
                self.driver.operate('confirm_migration')
            else:
                self.driver.destroy(instance_uuid,
                                    operation='confirm_migration')
        except Exception as exc:
            # The server runs fine on the destination; only the old copy
            # may linger. Finish the confirm, record the fault.
            LOG.warning('Could not destroy the old copy of %s on %s: %s',
                        instance_uuid, self.host, exc)
            self._fault(ctxt, instance_uuid, exc)
            self._finish_confirm(ctxt, instance, migration, 'error')
            raise
        self._finish_confirm(ctxt, instance, migration, 'confirmed')

    def _finish_confirm(self, ctxt, instance, migration, status):
        self.conductor.allocations_delete(ctxt, migration['uuid'])
        self.conductor.migration_update(ctxt, migration['uuid'],
                                        {'status': status},
                                        expected_status=['confirming'])
        self._update(ctxt, instance['uuid'],
                     {'vm_state': _vm_state_before(instance),
                      'task_state': None, 'old_flavor': None,
                      'new_flavor': None},
                     expected_vm_state=['resized'])

    # -- destination: revert_resize ----------------------------------------
    @wrap_instance_event('compute')
    def revert_resize(self, ctxt, instance_uuid, migration_uuid):
        migration = self.conductor.migration_get(ctxt, migration_uuid)
        if migration['status'] != 'reverting':
            LOG.info('Migration %s is %s; nothing to revert',
                     migration_uuid, migration['status'])
            return
        if not self._same_host(migration):
            self.driver.destroy(instance_uuid, operation='revert_migration')
        else:
            self.driver.operate('revert_migration')
        # The server's claim here goes; the source re-takes the
        # migration's allocation in finish_revert_resize. Only this
        # host's part: if this runs twice (restart recovery and a queued
        # cast), the second must not drop what the source took back.
        self.conductor.allocations_delete(
            ctxt, instance_uuid,
            root_host=None if self._same_host(migration) else self.host)
        self.compute_rpcapi.finish_revert_resize(
            ctxt, migration['source_compute'], instance_uuid, migration_uuid)

    # -- source: finish_revert_resize --------------------------------------
    @wrap_instance_event('compute')
    def finish_revert_resize(self, ctxt, instance_uuid, migration_uuid):
        migration = self.conductor.migration_get(ctxt, migration_uuid)
        instance = self._instance(ctxt, instance_uuid)
        if migration['status'] == 'error':
            # A failed finish_resize: the database is already put back;
            # only the old copy has to run again.
            self._restore_power(ctxt, instance)
            return
        if migration['status'] != 'reverting':
            LOG.info('Migration %s is %s; revert already finished',
                     migration_uuid, migration['status'])
            return
        old_flavor = instance['old_flavor'] or instance['flavor']
        vm_state = _vm_state_before(instance)
        self.conductor.allocations_move(ctxt, migration_uuid, instance_uuid)
        self.driver.spawn(instance_uuid, old_flavor,
                          operation='finish_revert_migration')
        if vm_state == 'stopped':
            self.driver.set_power(instance_uuid, 'shutdown', 'power_off')
        self.conductor.migration_update(ctxt, migration_uuid,
                                        {'status': 'reverted'},
                                        expected_status=['reverting'])
        self._update(ctxt, instance_uuid,
                     {'host': migration['source_compute'],
                      'node': migration['source_node'],
                      'flavor': old_flavor, 'old_flavor': None,
                      'new_flavor': None, 'vm_state': vm_state,
                      'task_state': None,
                      'power_state': POWER_SHUTDOWN if vm_state == 'stopped'
                      else POWER_RUNNING},
                     expected_task_state=['resize_reverting'])

    # -- helpers -------------------------------------------------------------
    @staticmethod
    def _same_host(migration):
        return migration['source_compute'] == migration['dest_compute']

    def _restore_power(self, ctxt, instance):
        if instance['vm_state'] == 'stopped':
            return
        try:
            self.driver.set_power(instance['uuid'], 'running', 'power_on')
            self._update(ctxt, instance['uuid'],
                         {'power_state': POWER_RUNNING})
        except Exception as exc:
            self._fault(ctxt, instance['uuid'], exc)
            self._update(ctxt, instance['uuid'], {'vm_state': 'error'})

    def _power_on_quietly(self, instance_uuid):
        try:
            self.driver.set_power(instance_uuid, 'running', 'power_on')
        except Exception:
            LOG.exception('Could not power %s back on', instance_uuid)

    def _destroy_quietly(self, instance_uuid):
        try:
            self.driver.destroy(instance_uuid, operation='destroy')
        except Exception:
            LOG.exception('Could not destroy the new copy of %s',
                          instance_uuid)

    # -- restart and auto-confirm ------------------------------------------
    def _init_host_resize(self, ctxt):
        """Finish or roll back the resize steps this host was running
        when it stopped, then start the auto-confirm thread when [DEFAULT]
        resize_confirm_window is set."""
        self._recover_resizes(ctxt)
        if CONF.resize_confirm_window > 0:
            self._auto_confirm_stop = threading.Event()
            thread = threading.Thread(target=self._auto_confirm_loop,
                                      name='resize-auto-confirm',
                                      daemon=True)
            thread.start()

    # oslo.messaging acknowledged the cast before the handler ran, so a
    # step this host was running when it died is lost for good. Init_host
    # runs before the RPC server consumes, so nothing of ours is running;
    # a cast still queued for us may run the same step again afterwards,
    # which the handlers' status checks turn into a no-op.
    #
    #   status          task_state         host    on restart
    #   (pre-/post-)migrating
    #                   resize_migrating   source  roll back (old copy on)
    #   post-migrating, finished
    #                   resize_finish      dest    roll back (new copy gone)
    #   confirming      (vm resized)       source  finish the confirm
    #   reverting       resize_reverting   dest    redo the dest part
    #   reverting       resize_reverting   source  redo finish_revert, once
    #                                              the dest part is done
    #
    # Other combinations belong to a step on the other host, or to a cast
    # still queued for this one.
    def _recover_resizes(self, ctxt):
        for migration in self.conductor.migration_get_all(
                ctxt, host=self.host,
                status=['pre-migrating', 'migrating', 'post-migrating',
                        'finished', 'confirming', 'reverting']):
            if migration['migration_type'] not in ('resize', 'migration'):
                continue
            try:
                self._recover_resize(ctxt, migration)
            except Exception:
                LOG.exception('Could not recover migration %s of %s',
                              migration['uuid'], migration['instance_uuid'])

    def _recover_resize(self, ctxt, migration):
        instance_uuid = migration['instance_uuid']
        try:
            instance = self._instance(ctxt, instance_uuid)
        except Exception:
            return  # deleted meanwhile; the delete cleaned up
        status, task = migration['status'], instance['task_state']
        source = migration['source_compute'] == self.host
        dest = migration['dest_compute'] == self.host
        same_host = self._same_host(migration)
        if task == 'resize_migrating' and source and status in (
                'pre-migrating', 'migrating', 'post-migrating'):
            LOG.warning('Rolling back migration %s of %s: this host died '
                        'in resize_instance', migration['uuid'],
                        instance_uuid)
            if instance['vm_state'] != 'stopped':
                self._power_on_quietly(instance_uuid)
            self._resize_failed(ctxt, instance_uuid, migration,
                                self._interrupted(migration,
                                                  'resize_instance'))
        elif task == 'resize_finish' and dest and status in (
                'post-migrating', 'finished'):
            LOG.warning('Rolling back migration %s of %s: this host died '
                        'in finish_resize', migration['uuid'], instance_uuid)
            if not same_host:
                self._destroy_quietly(instance_uuid)
            self._resize_failed(ctxt, instance_uuid, migration,
                                self._interrupted(migration,
                                                  'finish_resize'))
            if same_host:
                if instance['vm_state'] != 'stopped':
                    self._power_on_quietly(instance_uuid)
            else:
                self.compute_rpcapi.finish_revert_resize(
                    ctxt, migration['source_compute'], instance_uuid,
                    migration['uuid'])
        elif status == 'confirming' and source and \
                instance['vm_state'] == 'resized':
            LOG.info('Finishing the confirm of migration %s of %s',
                     migration['uuid'], instance_uuid)
            self.confirm_resize(ctxt, instance_uuid=instance_uuid,
                                migration_uuid=migration['uuid'])
        elif status == 'reverting' and task == 'resize_reverting':
            holds_source_half = bool(self.conductor.allocations_get(
                ctxt, migration['uuid']))
            if dest and holds_source_half:
                LOG.info('Redoing the destination part of the revert of '
                         'migration %s of %s', migration['uuid'],
                         instance_uuid)
                self.revert_resize(ctxt, instance_uuid=instance_uuid,
                                   migration_uuid=migration['uuid'])
            elif source and not same_host and holds_source_half and \
                    not self.conductor.allocations_get(ctxt, instance_uuid):
                # The destination dropped its claim: its part is done and
                # the finish_revert_resize it cast was ours to run.
                LOG.info('Redoing finish_revert_resize of migration %s of '
                         '%s', migration['uuid'], instance_uuid)
                self.finish_revert_resize(ctxt, instance_uuid=instance_uuid,
                                          migration_uuid=migration['uuid'])

    def _interrupted(self, migration, step):
        return exception.MoveInterruptedByRestart(
            host=self.host, step=step, migration=migration['uuid'])

    def _auto_confirm_loop(self):
        interval = max(1, min(10, CONF.resize_confirm_window))
        while not self._auto_confirm_stop.wait(interval):
            try:
                self._confirm_expired_resizes(
                    nm_context.get_admin_context())
            except Exception:
                LOG.exception('Auto-confirm pass failed on %s', self.host)

    def _confirm_expired_resizes(self, ctxt):
        now = datetime.datetime.now(datetime.timezone.utc).replace(
            tzinfo=None)
        window = datetime.timedelta(seconds=CONF.resize_confirm_window)
        for migration in self.conductor.migration_get_all(
                ctxt, source_compute=self.host, status='finished'):
            if migration['migration_type'] not in ('resize', 'migration'):
                continue
            updated = datetime.datetime.fromisoformat(
                migration['updated_at'] or migration['created_at'])
            if now - updated < window:
                continue
            try:
                self.conductor.migration_update(
                    ctxt, migration['uuid'], {'status': 'confirming'},
                    expected_status=['finished'])
            except Exception:
                continue  # the user confirmed or reverted meanwhile
            LOG.info('Auto-confirming migration %s of %s',
                     migration['uuid'], migration['instance_uuid'])
            self.confirm_resize(ctxt, instance_uuid=migration[
                'instance_uuid'], migration_uuid=migration['uuid'])
