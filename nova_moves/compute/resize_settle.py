"""Compute side of a cold move's end: confirm_resize on the source,
revert_resize on the destination and finish_revert_resize on the source
(the steps after VERIFY_RESIZE; compute/resize.py has the forward ones).

From compute RPC 1.8 the caller that set the migration confirming or
reverting sends what these need (``confirm``, ``revert``): the guard
before a copy is destroyed or restarted is then the hypervisor's mark of
the move that left or spawned it, and each of confirm and revert is one
conductor call in all.
"""
from oslo_log import log as logging
import oslo_messaging as messaging

from nova_moves.compute import base
from nova_moves.compute import inflight
from nova_moves.compute import resize
from nova_moves.compute import rpcapi as compute_rpcapi
from nova_moves import faultinfo
from nova_moves import notifications
from nova_moves import states
from nova_moves import timeutil

LOG = logging.getLogger(__name__)
notify_action = notifications.notify_action
_guard = resize._guard
_fail_guard = resize._fail_guard
_vm_state_before = resize._vm_state_before
_dest_part = resize._dest_part
same_host = resize.same_host


def _reverted(host, node, flavor, vm_state):
    """The server as a revert leaves it: back on its source."""
    return {'host': host, 'node': node, 'flavor': flavor,
            'old_flavor': None, 'new_flavor': None, 'vm_state': vm_state,
            'power_state': (states.POWER_SHUTDOWN if vm_state == states.STOPPED
                            else states.POWER_RUNNING)}


class ResizeSettleEndpoint(base.Steps):
    """Confirm and revert of a cold move (one endpoint class; the cold
    move's forward steps are resize.ResizeEndpoint's)."""
    target = messaging.Target(version=compute_rpcapi.ComputeAPI.VERSION)

    def _chained(self):
        return (self.compute_rpcapi.can_chain_steps() and
                self.conductor.can_chain_steps())

    def _chained_revert(self):
        return (self.compute_rpcapi.can_chain_revert() and
                self.conductor.can_chain_steps())

    # -- source: confirm_resize --------------------------------------------
    @inflight.tracked
    @notify_action('resize_confirm')
    def confirm_resize(self, ctxt, instance_uuid, migration_uuid,
                       confirm=None):
        """``confirm`` (1.8: {dest, vm_state}, read by the caller that set
        the migration confirming): one conductor call. The guard before
        the old copy goes is then the hypervisor's: only the copy this
        move left here is destroyed (a late or repeated confirm finds
        none, or a later move's guest, and destroys nothing), and the
        end's compare-and-swap refuses a stale confirm."""
        if confirm and self._chained() and \
                self.driver.left_by(instance_uuid) != '':
            return self._confirm_in_one(ctxt, instance_uuid, migration_uuid,
                                        confirm)
        name = 'compute_confirm_resize'
        rows = self._advance(ctxt, migration_uuid, name,
                             expected_values={'source_compute': self.host},
                             **_guard('confirm_resize', 'start'))
        if rows is None:
            return  # confirmed already (restart recovery, a duplicate)
        migration, instance = rows['migration'], rows['instance']
        self._confirm_end(ctxt, instance_uuid, migration_uuid,
                          same_host(migration), _vm_state_before(instance))

    def _confirm_in_one(self, ctxt, instance_uuid, migration_uuid, confirm):
        self._confirm_end(ctxt, instance_uuid, migration_uuid,
                          confirm['dest'] == self.host, confirm['vm_state'],
                          started=timeutil.utcnow_iso(), left=True)

    def _confirm_end(self, ctxt, instance_uuid, migration_uuid, on_one_host,
                     vm_state, started=None, left=False):
        name = 'compute_confirm_resize'
        phase, result, fault = 'end', 'Success', None
        try:
            if on_one_host:
                self.driver.operate('confirm_migration')
            elif left:
                self.driver.destroy_left(instance_uuid, migration_uuid,
                                         operation='confirm_migration')
            elif self.driver.has_guest(instance_uuid):  # not re-sent twice
                self.driver.destroy(instance_uuid,
                                    operation='confirm_migration')
        except Exception as exc:
            # The server runs fine on the destination; only the old copy
            # may linger. Finish the confirm, record the fault.
            LOG.warning('Could not destroy the old copy of %s on %s: %s',
                        instance_uuid, self.host, exc)
            phase, result = 'end_left_behind', 'Error'
            fault = faultinfo.from_exc(exc, self.host)
        self._advance(ctxt, migration_uuid, name, result, start_time=started,
                      expected_values={'source_compute': self.host},
                      instance_values={
                          'vm_state': vm_state,
                          'old_flavor': None, 'new_flavor': None},
                      fault=fault, **_guard('confirm_resize', phase))

    # -- destination: revert_resize ----------------------------------------
    @inflight.tracked
    @notify_action('resize_revert', end=False)
    def revert_resize(self, ctxt, instance_uuid, migration_uuid,
                      revert=None):
        """``revert`` (1.8: {source, source_node, flavor, vm_state}, read
        by the caller that set the migration reverting): no conductor
        call here. The guard before the new copy goes is then the
        hypervisor's (only the copy spawned for this move is destroyed)
        and finish_revert_resize writes this step's end with its own."""
        name = 'compute_revert_resize'
        if revert and self._chained_revert() and \
                self.driver.left_by(instance_uuid, 'arrived_by') != '':
            started = timeutil.utcnow_iso()
            if revert['source'] == self.host:
                self.driver.operate('revert_migration')
            else:
                self.driver.destroy_left(instance_uuid, migration_uuid,
                                         operation='revert_migration',
                                         mark='arrived_by')
            self.compute_rpcapi.finish_revert_resize(
                ctxt, revert['source'], instance_uuid, migration_uuid,
                reverted={'dest': self.host, 'start_time': started,
                          'revert': revert})
            return
        here = {'dest_compute': self.host}
        rows = self._advance(ctxt, migration_uuid, name, expected_values=here,
                             **_guard('revert_resize', 'start'))
        if rows is None:
            return
        migration = rows['migration']
        if not same_host(migration):
            if self.driver.has_guest(instance_uuid):
                self.driver.destroy(instance_uuid,
                                    operation='revert_migration')
        else:
            self.driver.operate('revert_migration')
        # The server's claim here goes; the source re-takes the
        # migration's allocation in finish_revert_resize. Only this
        # host's part: if this runs twice (restart recovery and a queued
        # cast), the second must not drop what the source took back.
        if self._chained_revert():
            # The source writes this step's end with its start.
            self.compute_rpcapi.finish_revert_resize(
                ctxt, migration['source_compute'], instance_uuid,
                migration_uuid, reverted={'dest': self.host})
            return
        end = _guard('revert_resize')
        end['allocations']['host'] = _dest_part(migration['source_compute'],
                                                self.host)
        if self._advance(ctxt, migration_uuid, name, 'Success',
                         expected_values=here, **end) is None:
            return
        self.compute_rpcapi.finish_revert_resize(
            ctxt, migration['source_compute'], instance_uuid, migration_uuid)

    # -- source: finish_revert_resize --------------------------------------
    @inflight.tracked
    @notify_action('resize_revert', start=False)
    def finish_revert_resize(self, ctxt, instance_uuid, migration_uuid,
                             reverted=None):
        name = 'compute_finish_revert_resize'
        if reverted and reverted.get('revert') and \
                self.driver.left_by(instance_uuid) != '':
            return self._finish_revert_in_one(ctxt, instance_uuid,
                                              migration_uuid, reverted)
        here, chained = {'source_compute': self.host}, {}
        if reverted:  # the destination's step ends here (RPC 1.7)
            chained = {'events': [{'name': 'compute_revert_resize',
                                   'result': 'Success',
                                   'host': reverted['dest']}],
                       'allocations': {'op': 'drop_dest',
                                       'host': _dest_part(
                                           self.host, reverted['dest'])}}
            here = dict(here, dest_compute=reverted['dest'])
        rows = self._advance(ctxt, migration_uuid, name, expected_values=here,
                             **_guard('finish_revert_resize', 'start'),
                             **chained)
        if rows is None:
            migration = self.conductor.migration_get(ctxt, migration_uuid)
            if migration['status'] == states.M_ERROR and \
                    migration['source_compute'] == self.host:
                # A failed finish_resize: the database is already put
                # back; only the old copy has to run again.
                self._restore_power(ctxt, self._instance(ctxt,
                                                         instance_uuid))
            return
        migration, instance = rows['migration'], rows['instance']
        old_flavor = instance['old_flavor'] or instance['flavor']
        vm_state = _vm_state_before(instance)
        if not self._restart_old_copy(ctxt, instance_uuid, migration_uuid,
                                      old_flavor, vm_state):
            return
        self._advance(
            ctxt, migration_uuid, name, 'Success',
            expected_values={'source_compute': self.host},
            **_guard('finish_revert_resize'),
            instance_values=_reverted(migration['source_compute'],
                                      migration['source_node'], old_flavor,
                                      vm_state))

    def _restart_old_copy(self, ctxt, instance_uuid, migration_uuid, flavor,
                          vm_state):
        """The old copy runs again (stopped when the server was); False
        when it could not, and the move was undone."""
        try:
            self.driver.spawn(instance_uuid, flavor,
                              operation='finish_revert_migration',
                              power='shutdown' if vm_state == states.STOPPED
                              else 'running')
            if vm_state == states.STOPPED:
                self.driver.set_power(instance_uuid, 'shutdown',
                                      'power_off')
        except Exception as exc:
            self._move_failed(ctxt, migration_uuid, exc,
                              'compute_finish_revert_resize',
                              instance_values={'vm_state': states.ERROR},
                              **_fail_guard('finish_revert_resize'))
            return False
        return True

    def _finish_revert_in_one(self, ctxt, instance_uuid, migration_uuid,
                              reverted):
        """1.8: both steps' ends in one guarded call, after the old copy
        runs again: only the copy this move left here is restarted (a
        repeated delivery finds it running already and only writes, and
        the write refuses a stale one)."""
        name = 'compute_finish_revert_resize'
        revert, started = reverted['revert'], timeutil.utcnow_iso()
        vm_state = revert['vm_state']
        on_one_host = reverted['dest'] == self.host
        if (self.driver.left_by(instance_uuid) == migration_uuid or (
                on_one_host and self.driver.left_by(
                    instance_uuid, 'arrived_by') == migration_uuid)) and \
                not self._restart_old_copy(ctxt, instance_uuid,
                                           migration_uuid, revert['flavor'],
                                           vm_state):
            return
        self._advance(
            ctxt, migration_uuid, name, 'Success', start_time=started,
            expected_values={'source_compute': self.host,
                             'dest_compute': reverted['dest']},
            events=[{'name': 'compute_revert_resize', 'result': 'Success',
                     'host': reverted['dest'], 'whole': True,
                     'start_time': reverted['start_time']}],
            **_guard('finish_revert_resize'),
            instance_values=_reverted(self.host, revert['source_node'],
                                      revert['flavor'], vm_state))

    # -- helpers -------------------------------------------------------------
    def _restore_power(self, ctxt, instance):
        if instance['vm_state'] == states.STOPPED:
            return
        try:
            self.driver.set_power(instance['uuid'], 'running', 'power_on')
            self._update(ctxt, instance['uuid'],
                         {'power_state': states.POWER_RUNNING})
        except Exception as exc:
            self._fault(ctxt, instance['uuid'], exc)
            self._update(ctxt, instance['uuid'], {'vm_state': states.ERROR})
