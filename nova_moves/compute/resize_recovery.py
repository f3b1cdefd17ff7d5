"""Compute side of resize and cold migrate, after a restart and over
time: restart recovery (what a restart does with each step is its row's
``restart`` in nova_moves/moves/cold.py) and the auto-confirm of
[DEFAULT] resize_confirm_window. Not an RPC endpoint: the manager runs it
at start-up; it drives the cold move's endpoint (compute/resize.py),
given explicitly, whose handlers it re-runs and whose undo it shares."""
import datetime
import threading

from oslo_log import log as logging

from nova_moves.compute import base
from nova_moves.compute import resize
from nova_moves import conf
from nova_moves import context as nm_context
from nova_moves import exception
from nova_moves import moves
from nova_moves.moves import cold
from nova_moves import states

CONF = conf.CONF
LOG = logging.getLogger(__name__)


class ResizeRecovery(base.Steps):

    def __init__(self, deps, steps, settle):
        super().__init__(deps)
        self.steps = steps  # the ResizeEndpoint of this host
        self.settle = settle  # its ResizeSettleEndpoint (confirm, revert)
        self._auto_confirm_stop = threading.Event()

    def run(self, ctxt):
        """Finish or roll back the resize steps this host was running
        when it stopped, then start the auto-confirm thread when [DEFAULT]
        resize_confirm_window is set."""
        self._recover_resizes(ctxt)
        if CONF.resize_confirm_window > 0:
            thread = threading.Thread(target=self._auto_confirm_loop,
                                      name='resize-auto-confirm',
                                      daemon=True)
            thread.start()

    # oslo.messaging acknowledged the cast before the handler ran, so a
    # step this host was running when it died is lost for good. Init_host
    # runs before the RPC server consumes, so nothing of ours is running;
    # a cast still queued for us may run the same step again afterwards,
    # which the handlers' guards turn into a no-op. What a restart does
    # with each step is its row's ``restart`` in nova_moves/moves/cold.py:
    # undo a step that started here and cannot be resumed, redo one that
    # is re-entrant.
    def _recover_resizes(self, ctxt):
        for migration in self.conductor.migration_get_all(
                ctxt, host=self.host, status=sorted(moves.restart_statuses(
                    cold))):
            if migration['migration_type'] not in states.COLD_MIGRATION_TYPES \
                    or migration.get('cross_cell_move'):
                # A cross-cell move's steps are its conductor's to run
                # and to undo (the sweep: conductor/tasks/cross_cell.py).
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
        roles = {role for role, host in (
            (moves.SOURCE, migration['source_compute']),
            (moves.DEST, migration['dest_compute'])) if host == self.host}
        same_host = resize.same_host(migration)

        def done(name):
            if name == 'conductor':
                return bool(migration['dest_node'])
            # The revert's destination half dropped the server's claim.
            return not same_host and not self.conductor.allocations_get(
                ctxt, instance_uuid)

        row = moves.restart_step(migration['migration_type'],
                                 migration['status'], instance['task_state'],
                                 roles, done)
        if row is None:
            return  # another host's step, or a cast still queued for us
        if row.restart == moves.RESTART_REDO:
            LOG.info('Redoing %s of migration %s of %s after a restart',
                     row.name, migration['uuid'], instance_uuid)
            handler = getattr(self.settle, row.name, None) or \
                getattr(self.steps, row.name)
            handler(ctxt, instance_uuid=instance_uuid,
                    migration_uuid=migration['uuid'])
            return
        LOG.warning('Rolling back migration %s of %s: this host died in %s',
                    migration['uuid'], instance_uuid, row.name)
        # The row names its undo (a RESTART_UNDO row without one fails
        # tests/unit/test_move_tables.py).
        getattr(self, row.undo)(ctxt, migration, instance,
                                self._interrupted(migration, row.name))

    def _undo_resize_instance(self, ctxt, migration, instance, exc):
        """The source died copying: its old copy runs again."""
        if instance['vm_state'] != states.STOPPED:
            resize.power_on_quietly(self.driver, migration['instance_uuid'])
        self.steps._resize_failed(ctxt, migration, exc)

    def _undo_finish_resize(self, ctxt, migration, instance, exc):
        """The destination died finishing: the new copy goes, the old
        one runs again."""
        if not resize.same_host(migration):
            resize.destroy_quietly(self.driver, migration['instance_uuid'])
        self.steps._finish_failed(ctxt, migration, exc, None,
                                  instance['vm_state'] == states.STOPPED)

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
                ctxt, source_compute=self.host, status=states.M_FINISHED):
            if migration['migration_type'] not in states.COLD_MIGRATION_TYPES \
                    or migration.get('cross_cell_move'):
                # Not auto-confirmed: its source is in another cell than
                # the server's (doc/cells.md "Cross-cell resize").
                continue
            updated = datetime.datetime.fromisoformat(
                migration['updated_at'] or migration['created_at'])
            if now - updated < window:
                continue
            try:
                # The one start of a confirm (as the API's and a drain's).
                migration, facts = self.conductor.settle_start(
                    ctxt, 'confirm_resize', migration['uuid'])
            except Exception:
                continue  # the user confirmed or reverted meanwhile
            LOG.info('Auto-confirming migration %s of %s',
                     migration['uuid'], migration['instance_uuid'])
            self.settle.confirm_resize(ctxt, instance_uuid=migration[
                'instance_uuid'], migration_uuid=migration['uuid'],
                confirm=facts)
