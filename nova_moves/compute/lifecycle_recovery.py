"""A restarted compute finishes the lifecycle actions it was running when
it stopped (pausing, rebooting, powering-off, shelving, unshelving, a
same-host rebuild, ...): oslo.messaging acknowledged their casts before
the handlers ran, so they are lost with the process, and the server
would keep its task_state until an operator reset it.

What is done with each is its row's ``recovery`` in
nova_moves/moves/lifecycle.py: REDO runs the action again through its
guarded handler (re-entrant: it accepts the task_state the API set or
the one its own start wrote); SETTLE gives the task_state back with the
vm_state of the guest's real power (Nova's _init_instance clears a
pausing/unpausing server's task_state the same way); UNDO (a boot
found spawning) is ERROR with a fault, as Nova's. The action's
compute event, left open by the dead process, is closed on the server's
newest action. Not an RPC endpoint: the manager runs the redos at
start-up, before the RPC server consumes (a cast still queued for us
then finds the claim gone and changes nothing), and the settles and
undos once it serves, for what no queued cast took up."""
import datetime

from oslo_log import log as logging

from nova_moves.compute import base
from nova_moves import exception
from nova_moves import instance_actions
from nova_moves import moves
from nova_moves.moves import lifecycle as lc_table
from nova_moves import states
from nova_moves import timeutil

LOG = logging.getLogger(__name__)

class LifecycleRecovery(base.Steps):

    def __init__(self, deps, lifecycle, shelve):
        super().__init__(deps)
        # A claim written after this process started is a request its
        # RPC server has yet to consume (a boot sent while the host,
        # back in its membership group, still ran init_host), not one a
        # dead process left: its own cast runs it.
        self.started = timeutil.utcnow()
        # Settles and undos (a pause, a boot found under way): decided
        # once the RPC server serves. One claimed for this host while it
        # was down or restarting has its cast queued for us, and that
        # cast may only run then; redos go through the guarded handlers
        # at once (a queued duplicate then finds its claim gone).
        self._deferred = []
        # Which guarded handler redoes each row.
        self._redo = {
            'reboot:SOFT': lambda c, u: lifecycle._reboot(
                c, u, 'reboot:SOFT', hard=True),
            'reboot:HARD': lambda c, u: lifecycle._reboot(
                c, u, 'reboot:HARD', hard=True),
            'os-start': lambda c, u: lifecycle._guarded(
                c, u, 'os-start', lifecycle._set_power('os-start')),
            'os-stop': lambda c, u: lifecycle._guarded(
                c, u, 'os-stop', lifecycle._set_power('os-stop')),
            'rebuild': lifecycle._rebuild,
            'shelve': shelve._shelve,
            'shelveOffload': shelve._offload,
            'unshelve': shelve._unshelve,
            'rescue': lifecycle._rescue,
            'unrescue': lifecycle._unrescue,
        }

    def run(self, ctxt):
        for instance in self.conductor.instance_get_all_by_host(ctxt,
                                                                self.host):
            if instance['task_state'] not in lc_table.TASK_STATES:
                continue
            if self._claimed_since_start(instance):
                LOG.info('%s: %s since %s started; its own message runs '
                         'it', instance['uuid'], instance['task_state'],
                         self.host)
                continue
            if lc_table.recovery_of(instance['task_state'])[1] in (
                    lc_table.UNDO, lc_table.SETTLE):
                self._deferred.append(instance)
                continue
            try:
                self.recover(ctxt, instance)
            except Exception:
                LOG.exception('Could not recover %s of %s after a restart',
                              instance['task_state'], instance['uuid'])

    def run_deferred(self, ctxt):
        """Once serving (and its queued casts consumed): settle or undo
        what was found under way that no handler of ours took up since
        and that nothing else changed."""
        deferred, self._deferred = self._deferred, []
        for seen in deferred:
            uuid = seen['uuid']
            try:
                instance = self._instance(ctxt, uuid)
            except exception.InstanceNotFound:
                continue
            if instance is None or uuid in self.in_flight or \
                    instance['host'] != self.host or \
                    instance['task_state'] != seen['task_state'] or \
                    instance['updated_at'] != seen['updated_at']:
                continue
            try:
                self.recover(ctxt, instance)
            except Exception:
                LOG.exception('Could not recover %s of %s after a restart',
                              instance['task_state'], uuid)

    def _claimed_since_start(self, instance):
        stamp = instance.get('updated_at') or instance.get('created_at')
        if isinstance(stamp, str):
            stamp = datetime.datetime.fromisoformat(stamp)
        if stamp is None:
            return False
        if stamp.tzinfo is not None:
            stamp = stamp.astimezone(datetime.timezone.utc).replace(
                tzinfo=None)
        return stamp >= self.started

    def _evacuating(self, ctxt, instance):
        """A rebuilding server with an evacuation under way is the
        evacuation's (compute/evacuate.py), not a same-host rebuild."""
        return any(
            m['migration_type'] == states.EVACUATION and
            m['status'] in moves.EVACUATING
            for m in self.conductor.migration_get_all(
                ctxt, instance_uuid=instance['uuid']))

    def recover(self, ctxt, instance):
        """What the row of ``instance``'s task_state says; True when the
        server settled here."""
        row, what = lc_table.recovery_of(instance['task_state'])
        uuid = instance['uuid']
        if row.name == 'rebuild' and self._evacuating(ctxt, instance):
            return False
        LOG.warning('%s was %s when %s stopped: %s', uuid,
                    instance['task_state'], self.host, what)
        event = 'compute_' + row.method
        if what == lc_table.SETTLE:
            done = self._claim_cas(ctxt, uuid, lc_table.settle_values(
                self.driver.power_state(uuid), instance['vm_state']),
                lc_table.accepts(row.name))
            self._close(ctxt, uuid, event, done, 'Error',
                        '%s was interrupted by a restart of %s; the server '
                        'is as its guest is' % (row.name, self.host))
            return done is not None
        if what == lc_table.UNDO:
            # A boot: its request is gone; ERROR with why (Nova's).
            exc = exception.InstanceBuildInterrupted(instance_uuid=uuid,
                                                     host=self.host)
            self._fault(ctxt, uuid, exc)
            done = self._claim_cas(ctxt, uuid, lc_table.failed_values(
                row.name, self.driver.power_state(uuid)),
                lc_table.accepts(row.name))
            self._close(ctxt, uuid, event, done, 'Error', exc.message)
            return done is not None
        try:
            done = self._redo[row.name](ctxt, uuid)
        except Exception as exc:
            # The handler wrote the row's failure (and its fault).
            self._close(ctxt, uuid, event, True, 'Error',
                        '%s, redone after a restart of %s, failed: %s' % (
                            row.name, self.host, exc))
            raise
        self._close(ctxt, uuid, event, done, 'Success',
                    '%s redone after a restart of %s' % (row.name,
                                                          self.host))
        return done is not None

    def _close(self, ctxt, uuid, event, done, result, details):
        if done is None:
            return  # another path settled it, and its event
        try:
            self.conductor.action_event_finish(
                ctxt, uuid, instance_actions.NEWEST, event, result,
                details=details if result == 'Error' else None)
        except Exception as exc:
            # An older conductor, or no action (an ActionNotFound, wrapped
            # as RPC returns it): the server settled anyway.
            LOG.info('Event %s of %s not closed: %s', event, uuid, exc)
