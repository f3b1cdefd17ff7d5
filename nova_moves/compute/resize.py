"""Compute side of resize and cold migrate (the confirm and the revert:
compute/resize_settle.py). Every hop is a cast; each handler writes its
state (task_state, migration status, allocations) before it casts the
next hop.

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
from oslo_log import log as logging
import oslo_messaging as messaging

from nova_moves.compute import base
from nova_moves.compute import inflight
from nova_moves.compute import rpcapi as compute_rpcapi
from nova_moves import conf
from nova_moves import exception
from nova_moves import moves
from nova_moves.moves import cold
from nova_moves import notifications
from nova_moves import states
from nova_moves import timeutil

CONF = conf.CONF
LOG = logging.getLogger(__name__)
notify_action = notifications.notify_action



def _guard(step, phase='end'):
    """The step's guarded write, from the cold move's table."""
    return moves.guard_of(cold, step, phase)


def _fail_guard(step):
    """The undo's check of the step, from the cold move's table."""
    return moves.fail_guard(cold, step)


def _vm_state_before(instance):
    return states.vm_state_after_resize(instance['power_state'])


def _dest_part(source, dest):
    """Which of the server's claims revert_resize's end drops: the
    destination's tree's (None: all, a resize on one host, whose source
    half comes back from the migration's allocation)."""
    return None if source == dest else dest


def same_host(migration):
    return migration['source_compute'] == migration['dest_compute']


def power_on_quietly(driver, instance_uuid):
    try:
        driver.set_power(instance_uuid, 'running', 'power_on')
    except Exception:
        LOG.exception('Could not power %s back on', instance_uuid)


def destroy_quietly(driver, instance_uuid):
    try:
        driver.destroy(instance_uuid, operation='destroy')
    except Exception:
        LOG.exception('Could not destroy the new copy of %s', instance_uuid)


class ResizeEndpoint(base.Steps):
    """The steps of a cold move (its restart recovery and auto-confirm:
    compute/resize_recovery.py, which drives these handlers)."""
    target = messaging.Target(version=compute_rpcapi.ComputeAPI.VERSION)

    # Every handler starts with a guarded step (move_advance through the
    # conductor) that checks the migration and the server are still where
    # the message assumed; a stale or duplicate message is dropped there,
    # touching nothing. Each handler makes two conductor calls: its start
    # (with the event's start) and its end (state, allocations and the
    # event's result in one transaction). prep_resize changes nothing
    # before its end (the claim is the conductor's), so from conductor
    # RPC 1.3 its guard and its whole event are one call at its end.
    #
    # Chained (compute RPC 1.5, conductor 1.4, _chained): the next host
    # writes a step's end in its own step's first call, so prep_resize
    # makes no call (the source records its event and checks the
    # migration still names this destination) and resize_instance only
    # its start (finish_resize's start moves the server here and closes
    # its event). A stale chained message is still refused by the next
    # host's guard before it touches a guest. The revert chains the same
    # way from compute RPC 1.7: revert_resize makes only its start call
    # (its guard, before the new copy goes); finish_revert_resize's start
    # writes its end (event, destination claim dropped).

    def _chained(self):
        return (self.compute_rpcapi.can_chain_steps() and
                self.conductor.can_chain_steps())

    # -- destination: prep_resize ------------------------------------------
    @inflight.tracked
    @notify_action('resize_prep')
    def prep_resize(self, ctxt, instance_uuid, migration_uuid, flavor,
                    request_spec, alternates, source=None):
        """The conductor already claimed this host for the server. Get
        ready; on failure ask the conductor (a call) for the next
        alternate, which it claims in place of this host's claim.
        ``source`` (1.4): the source host, chained to without a call."""
        here = {'dest_compute': self.host}
        started = None
        chained = bool(source) and self._chained()
        if chained or self.conductor.can_record_whole_steps():
            started = timeutil.utcnow_iso()
        elif self._advance(ctxt, migration_uuid, 'compute_prep_resize',
                           expected_values=here,
                           **_guard('prep_resize', 'start')) is None:
            return
        try:
            self.driver.operate('prep_resize')
        except Exception as exc:
            LOG.warning('prep_resize of %s failed on %s: %s', instance_uuid,
                        self.host, exc)
            self._reschedule_resize(ctxt, instance_uuid, migration_uuid,
                                    flavor, alternates, exc, started)
            return
        if chained:
            self.notifier.flush_start(ctxt)  # its .start before the next
            self.compute_rpcapi.resize_instance(
                ctxt, source, instance_uuid, migration_uuid,
                prep={'dest': self.host, 'start_time': started})
            return
        rows = self._advance(ctxt, migration_uuid, 'compute_prep_resize',
                             'Success', start_time=started,
                             expected_values=here, **_guard('prep_resize'))
        if rows is None:
            return
        self.compute_rpcapi.resize_instance(
            ctxt, rows['migration']['source_compute'], instance_uuid,
            migration_uuid)

    def _reschedule_resize(self, ctxt, instance_uuid, migration_uuid, flavor,
                           alternates, exc, started=None):
        """Close the event (the next host's compute_prep_resize is its
        own), then ask the conductor to move the claim to an alternate.
        This host's claim is replaced by the conductor in the same
        transaction, only while the migration still names this host."""
        if self._advance(
                ctxt, migration_uuid, 'compute_prep_resize', 'Error',
                start_time=started,
                expected_values={'dest_compute': self.host},
                **_guard('prep_resize')) is None:
            return
        try:
            # Synchronous (Nova's "Make API always RPC cast to conductor
            # for resize/migrate" keeps this call): the conductor claims
            # the next alternate, or rolls the whole move back and raises.
            self.compute_task_api.migrate_server(
                ctxt, instance_uuid, flavor=flavor,
                migration_uuid=migration_uuid, alternates=alternates or [],
                do_cast=False, failed_host=self.host)
        except Exception as reschedule_exc:
            LOG.warning('Reschedule of %s failed: %s', instance_uuid,
                        reschedule_exc)
            # Normally the conductor rolled back already and this is a
            # no-op; if it did not answer, nobody else will.
            self._move_failed(ctxt, migration_uuid, exc,
                              expected_values={'dest_compute': self.host},
                              **moves.fail_guard(cold, 'prep_resize'))

    # -- source: resize_instance -------------------------------------------
    @inflight.tracked
    @notify_action('resize')
    def resize_instance(self, ctxt, instance_uuid, migration_uuid,
                        prep=None):
        name = 'compute_resize_instance'
        # Re-entrant: the stuck-move sweep re-sends a step whose host died
        # in it; a second delivery while the first still runs loses the
        # final compare-and-swap below and leaves the server alone.
        here, events = {'source_compute': self.host}, None
        if prep:  # chained: the destination's prep_resize ended well
            here['dest_compute'] = prep['dest']
            # Recorded whole: a chained prep_resize never started it.
            events = [{'name': 'compute_prep_resize', 'result': 'Success',
                       'host': prep['dest'], 'whole': True,
                       'start_time': prep.get('start_time')}]
        rows = self._advance(
            ctxt, migration_uuid, name, expected_values=here, events=events,
            **_guard('resize_instance', 'start'))
        if rows is None:
            return
        migration = rows['migration']
        try:
            # Marked as this move's copy: only its confirm destroys it.
            self.driver.set_power(instance_uuid, 'shutdown',
                                  'migrate_disk_and_power_off',
                                  left_by=migration_uuid)
        except Exception as exc:
            power_on_quietly(self.driver, instance_uuid)
            self._resize_failed(ctxt, migration, exc, name)
            return
        if self._chained():
            # The destination writes this step's end with its start.
            self.compute_rpcapi.finish_resize(
                ctxt, migration['dest_compute'], instance_uuid,
                migration_uuid, resized={'source': self.host,
                                         'node': migration['dest_node']})
            return
        if self._advance(
                ctxt, migration_uuid, name, 'Success',
                instance_values={'host': migration['dest_compute'],
                                 'node': migration['dest_node']},
                **_guard('resize_instance')) is None:
            # Rolled back while the disks were copied: the server is
            # this host's again, so is its power (not when another
            # delivery of this step won: it moved the server on).
            if rows['instance']['vm_state'] != states.STOPPED and \
                    self._rolled_back(ctxt, migration_uuid):
                power_on_quietly(self.driver, instance_uuid)
            return
        self.compute_rpcapi.finish_resize(
            ctxt, migration['dest_compute'], instance_uuid, migration_uuid)

    # -- destination: finish_resize ----------------------------------------
    @inflight.tracked
    @notify_action('resize_finish')
    def finish_resize(self, ctxt, instance_uuid, migration_uuid,
                      resized=None):
        name = 'compute_finish_resize'
        chained = {}
        if resized:  # the source's step ends here: the server moves here
            chained = {'events': [{'name': 'compute_resize_instance',
                                   'result': 'Success',
                                   'host': resized['source']}],
                       'instance_values': {'host': self.host,
                                           'node': resized['node']}}
        rows = self._advance(
            ctxt, migration_uuid, name,
            expected_values={'dest_compute': self.host},
            **_guard('finish_resize', 'start'), **chained)
        if rows is None:
            if resized and self._rolled_back(ctxt, migration_uuid):
                # Rolled back while the source copied: the source's copy,
                # powered off, runs again (as after a failed finish).
                self.compute_rpcapi.finish_revert_resize(
                    ctxt, resized['source'], instance_uuid, migration_uuid)
            return
        migration, instance = rows['migration'], rows['instance']
        stopped = instance['vm_state'] == states.STOPPED
        spawned = False
        try:
            disk_from = self._disk_from_source(ctxt, migration)
            # A stopped server's copy is never started (a real guest
            # would boot only to be powered off).
            self.driver.spawn(instance_uuid, instance['new_flavor'],
                              operation='finish_migration',
                              arrived_by=migration_uuid,
                              image_ref=instance.get('image_ref'),
                              disk_from=disk_from,
                              power='shutdown' if stopped else 'running')
            spawned = True
            if stopped:
                self.driver.set_power(instance_uuid, 'shutdown', 'power_off')
        except Exception as exc:
            if spawned and not same_host(migration):
                destroy_quietly(self.driver, instance_uuid)
            self._finish_failed(ctxt, migration, exc, name, stopped)
            return
        if self._advance(
                ctxt, migration_uuid, name, 'Success',
                **_guard('finish_resize'),
                instance_values={
                    'flavor': instance['new_flavor'], 'host': self.host,
                    'node': migration['dest_node'],
                    'vm_state': states.RESIZED,
                    'power_state': states.POWER_SHUTDOWN if stopped
                    else states.POWER_RUNNING}) is None:
            if not same_host(migration) and \
                    self._rolled_back(ctxt, migration_uuid):
                destroy_quietly(self.driver, instance_uuid)

    def _disk_from_source(self, ctxt, migration):
        """Where this host pulls the server's disk from (a driver whose
        disks travel, another host): the source's export of the copy
        the move left there."""
        if not self.driver.moves_disks or same_host(migration):
            return None
        disk = self.compute_rpcapi.export_disk(
            ctxt, migration['source_compute'], migration['instance_uuid'],
            migration['uuid'])
        if not disk:
            raise exception.DiskNotExported(
                instance_uuid=migration['instance_uuid'],
                host=migration['source_compute'])
        return disk

    # -- source: export_disk (1.9) -----------------------------------------
    def export_disk(self, ctxt, instance_uuid, migration_uuid):
        """Serve the copy ``migration_uuid`` left here (the hypervisor's
        mark is the guard: a stale call gets None, nothing served)."""
        return self.driver.export_disk(instance_uuid, migration_uuid)

    def _finish_failed(self, ctxt, migration, exc, event, stopped):
        if self._resize_failed(ctxt, migration, exc, event) is None:
            return  # settled by another path meanwhile
        if not same_host(migration):
            # The old copy was powered off by the source; it powers it
            # back on (finish_revert_resize of an 'error' migration).
            self.compute_rpcapi.finish_revert_resize(
                ctxt, migration['source_compute'], migration['instance_uuid'],
                migration['uuid'])
        elif not stopped:
            power_on_quietly(self.driver, migration['instance_uuid'])

    def _resize_failed(self, ctxt, migration, exc, event=None):
        """move_failed: the server back on its source as before the move
        (source allocation back, destination claim dropped, host and
        flavor as before), migration 'error', a fault, the Error event."""
        LOG.warning('Resize/migration %s of %s failed on %s: %s',
                    migration['uuid'], migration['instance_uuid'], self.host,
                    exc)
        return self._move_failed(ctxt, migration['uuid'], exc, event)

    # -- helpers -------------------------------------------------------------
    def _rolled_back(self, ctxt, migration_uuid):
        return self.conductor.migration_get(ctxt, migration_uuid)[
            'status'] in (states.M_ERROR, states.M_FAILED)
