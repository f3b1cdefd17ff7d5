"""Self-fencing ([compute] fence_after, fence_action).

A host that cannot report its heartbeat is soon shown down, and its
servers may then be evacuated while it still runs them. With fence_after
set, a host that has not got a report through for fence_after seconds
(less than service_down_time, so before anyone may take it for dead)
pauses or stops every running guest itself, and records which in
``$state_path/fence/<host>.json`` (a compute never opens the database;
the file also survives a restart while fenced).

Once a report goes through again (after the heartbeat has removed the
copies of servers evacuated meanwhile: compute/evacuate.py), and the
host is not forced down (an operator's word that it is down), each fenced
server still this host's own, with nothing in progress, is claimed
(task_state), given its guest back and released; one evacuated or moved
away is left to the evacuation's clean-up; one busy (an evacuation in
flight) stays fenced and is tried again. Every fenced server gets an
instance fault saying so, and the log one line per fence and restore.
"""
import os
import threading
import time

from oslo_log import log as logging

from nova_moves.compute import base
from nova_moves import conf
from nova_moves import exception
from nova_moves import moves
from nova_moves.moves import lifecycle
from nova_moves import statefile
from nova_moves import states

CONF = conf.CONF
LOG = logging.getLogger(__name__)

# How often the watch looks at the clock (and at the guests, while
# fenced); a restore waiting on a busy server is tried this often.
CHECK_INTERVAL = 0.5
RETRY_INTERVAL = 2.0
# fence_action -> (guest power when fenced, task_state its restore
# claims: the lifecycle table's)
ACTIONS = {action: (power, lifecycle.UNFENCE_CLAIM[action])
           for action, power in (('pause', 'paused'), ('stop', 'shutdown'))}
RUNNING_VM_STATES = lifecycle.UNFENCE_VM_STATES


class FenceConfigError(exception.NovaMovesException):
    msg_fmt = '%(reason)s'


class Fenced(exception.NovaMovesException):
    """The instance fault of a fenced server (not raised)."""
    # Its host is the fault's own field (masked in the message).
    msg_fmt = ('Self-fenced: its host could not report for '
               '%(silent)ss ([compute] fence_after %(fence_after)s), so its '
               'guest was %(did)s at %(at)s; %(outcome)s')
    code = 500


def check_config():
    """Refuse a fence that could come after the host may be shown down
    (it would protect nothing while the operator counts on it) or one
    that a normal gap between two heartbeats would trigger."""
    after = CONF.compute.fence_after
    if not after:
        return
    down = CONF.service_down_time
    if after <= CONF.report_interval:
        raise FenceConfigError(reason=(
            '[compute] fence_after (%ss) must be more than [DEFAULT] '
            'report_interval (%ss): every heartbeat gap would fence this '
            'host' % (after, CONF.report_interval)))
    budget, also = down, ''
    if CONF.compute.fence_action == 'stop' and CONF.compute.driver == 'qemu':
        # A clean power-down may take that long before the guest is off.
        budget = down - CONF.qemu.shutdown_timeout
        also = ' minus [qemu] shutdown_timeout (%ss)' % (
            CONF.qemu.shutdown_timeout)
    if after >= budget:
        raise FenceConfigError(reason=(
            '[compute] fence_after (%ss) must be less than [DEFAULT] '
            'service_down_time (%ss)%s: this host would be shown down, '
            'and its servers evacuated, before it fenced itself; set '
            'fence_after to about half of service_down_time, or 0 to '
            'disable self-fencing' % (after, down, also)))


class Fence(base.Steps):
    """One host's fence: its watch thread, its record, its restore."""

    def __init__(self, deps):
        super().__init__(deps)
        self._path = os.path.join(CONF.state_path, 'fence',
                                  '%s.json' % self.host)
        # {instance uuid: {'power': before, 'action': ..., 'at': ...,
        #                  'silent': seconds}}
        self._fenced = statefile.load(self._path)
        # The clock starts with the process: a compute restarted while
        # cut off fences too (its guests survived the restart).
        self._last_report = time.monotonic()
        self._reported = threading.Event()
        self._stopped = threading.Event()
        self._forced_down = False
        self._held_logged = False
        self._thread = None
        self._next_restore = 0.0

    # -- the record -----------------------------------------------------------
    def _save(self):
        if not self._fenced:
            try:
                os.unlink(self._path)
            except FileNotFoundError:
                pass
            return
        os.makedirs(os.path.dirname(self._path), exist_ok=True)
        statefile.save(self._path, self._fenced)

    def fenced(self):
        return dict(self._fenced)

    # -- the watch ------------------------------------------------------------
    def start(self):
        """Once (init_host is retried until a conductor answers)."""
        if not CONF.compute.fence_after and not self._fenced:
            return None
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._loop, daemon=True, name='fence-%s' % self.host)
            self._thread.start()
        return self._thread

    def stop(self):
        """The agent stops (its heartbeat with it): no fence after this;
        guests fenced already stay so, recorded for the next start."""
        self._stopped.set()
        self._reported.set()  # wake the watch now

    def reported(self, forced_down=False):
        """The heartbeat's: a report went through (counted).
        ``forced_down``: the operator says this host is down (and may
        evacuate any of its servers at any time): what is fenced stays
        fenced until that is lifted."""
        self._forced_down = forced_down
        self._last_report = time.monotonic()
        self._reported.set()

    def _loop(self):
        from nova_moves import context as nm_context
        while True:
            self._reported.wait(CHECK_INTERVAL)
            if self._stopped.is_set():
                return
            try:
                self.tick(nm_context.get_admin_context())
            except Exception:
                LOG.exception('Self-fencing watch of %s failed', self.host)
                time.sleep(CHECK_INTERVAL)

    def tick(self, ctxt):
        """Fence when silent too long; restore once reported again."""
        silent = time.monotonic() - self._last_report
        after = CONF.compute.fence_after
        if after and silent > after:
            self._reported.clear()
            self.fence(silent)
            return
        if self._reported.is_set() or (
                self._fenced and time.monotonic() >= self._next_restore):
            self._reported.clear()
            if self._fenced:
                self.restore(ctxt)

    # -- fence ----------------------------------------------------------------
    def fence(self, silent):
        """Every running guest not fenced yet (a guest that began running
        while silent too): recorded first, then paused or stopped."""
        action = CONF.compute.fence_action
        power = ACTIONS[action][0]
        running = [uuid for uuid, guest in self.driver.guests().items()
                   if guest.get('power') == 'running']
        if not running:
            return
        LOG.warning('Self-fencing %s: no report got through for %.1fs '
                    '([compute] fence_after %ss); %s %d running guests: %s',
                    self.host, silent, CONF.compute.fence_after,
                    'pausing' if action == 'pause' else 'stopping',
                    len(running), ', '.join(running))
        at = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())
        for uuid in running:
            self._fenced[uuid] = {'power': 'running', 'action': action,
                                  'at': at, 'silent': round(silent, 1)}
            self._save()
            try:
                self.driver.set_power(uuid, power, 'fence')
            except Exception:
                LOG.exception('Could not fence %s on %s', uuid, self.host)

    # -- restore --------------------------------------------------------------
    def restore(self, ctxt):
        """After a report went through: settle every fenced server."""
        self._next_restore = time.monotonic() + RETRY_INTERVAL
        evacuating = {m['instance_uuid'] for m in
                      self.conductor.migration_get_all(
                          ctxt, source_compute=self.host,
                          migration_type=states.EVACUATION,
                          status=sorted(moves.EVACUATING))}
        outcomes = {}
        for uuid, entry in list(self._fenced.items()):
            if uuid in evacuating:
                continue  # its evacuation's clean-up decides
            outcome = self._settle(ctxt, uuid, entry)
            if outcome is None:
                continue  # busy: tried again
            outcomes[uuid] = outcome
            del self._fenced[uuid]
            self._save()
        held = self._forced_down and list(self._fenced)
        if held and not self._held_logged:
            LOG.warning('%s is forced down: its fenced guests stay fenced '
                        'until it is not: %s', self.host, ', '.join(held))
        self._held_logged = bool(held)
        if outcomes:
            LOG.warning('Self-fencing of %s over, reported again: %s%s',
                        self.host, '; '.join(
                            '%s %s' % item for item in outcomes.items()),
                        ('; still fenced (busy): %s' % ', '.join(
                            self._fenced)) if self._fenced else '')

    def _settle(self, ctxt, uuid, entry):
        """What became of one fenced server: None while it is busy."""
        try:
            instance = self.conductor.instance_get(ctxt, uuid)
        except exception.InstanceNotFound:
            return 'deleted meanwhile, its guest left as it is'
        if instance['task_state'] is not None:
            return None  # a move or an action settles it first
        if instance['host'] != self.host:
            # Evacuated (the clean-up removed the copy) or moved.
            return self._faulted(ctxt, uuid, entry, 'not restored: the '
                                 'server is on %s now' % instance['host'])
        if instance['vm_state'] not in RUNNING_VM_STATES:
            return self._keep_fenced(ctxt, uuid, entry, instance)
        if self._forced_down:
            return None  # any server of it may be evacuated any time
        return self._unfence(ctxt, uuid, entry)

    def _unfence(self, ctxt, uuid, entry):
        """Claim the server as a start or unpause would, so that no
        evacuation or action is accepted while its guest comes back."""
        claim = ACTIONS[entry['action']][1]
        expected = dict(expected_task_state=[None],
                        expected_vm_state=list(RUNNING_VM_STATES),
                        expected_host=self.host)
        try:
            self._update(ctxt, uuid, {'task_state': claim}, **expected)
        except (exception.Conflict, exception.InstanceNotFound) as exc:
            LOG.info('Not restoring %s on %s yet: %s', uuid, self.host, exc)
            return None
        try:
            self.driver.set_power(uuid, 'running', 'unfence')
        except Exception as exc:
            LOG.exception('Could not restore %s on %s', uuid, self.host)
            self._fault(ctxt, uuid, exc)
            self._claim_cas(ctxt, uuid, {
                'task_state': None,
                'power_state': self.driver.power_state(uuid)}, [claim])
            return self._faulted(ctxt, uuid, entry, 'restoring it failed')
        self._claim_cas(ctxt, uuid, {'task_state': None,
                                     'power_state': states.POWER_RUNNING},
                        [claim])
        return self._faulted(ctxt, uuid, entry, 'restored')

    def _keep_fenced(self, ctxt, uuid, entry, instance):
        """Not running any more (a failed evacuation left it in ERROR, an
        operator reset it): its guest stays as fenced, its row says so."""
        try:
            self._update(ctxt, uuid,
                         {'power_state': self.driver.power_state(uuid)},
                         expected_task_state=[None],
                         expected_host=self.host)
        except (exception.Conflict, exception.InstanceNotFound):
            return None
        return self._faulted(ctxt, uuid, entry, 'not restored: the server '
                             'is %s now' % instance['vm_state'])

    def _faulted(self, ctxt, uuid, entry, outcome):
        did = 'paused' if entry['action'] == 'pause' else 'stopped'
        self._fault(ctxt, uuid, Fenced(
            silent=entry['silent'],
            fence_after=CONF.compute.fence_after, did=did, at=entry['at'],
            outcome=outcome))
        return outcome
