"""A guest that stops on its own (its QEMU process died, the guest
powered itself off) while nothing was asked of it: the server is shown
SHUTOFF with a fault saying why, instead of ACTIVE on a host where it
no longer runs (Nova's power state sync, without its 10 minute wait:
the look is local, only a crash costs a conductor call)."""
import threading

from oslo_log import log as logging

from nova_moves.compute import base
from nova_moves import conf
from nova_moves import exception
from nova_moves.moves import lifecycle as lc_table

CONF = conf.CONF
LOG = logging.getLogger(__name__)


class GuestStopped(exception.NovaMovesException):
    msg_fmt = 'The guest of %(instance_uuid)s stopped on %(host)s: %(why)s'
    code = 500


class GuestWatch(base.Steps):

    def start(self):
        interval = CONF.qemu.watch_interval
        if not interval or not self.driver.moves_disks:
            return None  # nothing real to watch (the fake)
        thread = threading.Thread(target=self._loop, args=(interval,),
                                  daemon=True,
                                  name='guest-watch-%s' % self.host)
        thread.start()
        return thread

    def _loop(self, interval):
        from nova_moves import context as nm_context
        stop = threading.Event()
        while not stop.wait(interval):
            try:
                self.check(nm_context.get_admin_context())
            except Exception:
                LOG.exception('Watching the guests of %s failed', self.host)

    def check(self, ctxt):
        for instance_uuid, why in self.driver.crashed():
            self._stopped(ctxt, instance_uuid, why)

    def _stopped(self, ctxt, instance_uuid, why):
        try:
            instance = self._instance(ctxt, instance_uuid)
        except exception.InstanceNotFound:
            return
        # Something is being done to it (a move, a power action): that
        # flow sees the guest gone and settles the server itself.
        row = lc_table.GUEST_STOPPED
        if instance['host'] != self.host or \
                instance['task_state'] != row.task or \
                instance['vm_state'] not in row.vm_states:
            return
        LOG.warning('%s stopped on %s without being asked: %s',
                    instance_uuid, self.host, why)
        exc = GuestStopped(instance_uuid=instance_uuid, host=self.host,
                           why=why)
        self._fault(ctxt, instance_uuid, exc)
        try:
            self._update(ctxt, instance_uuid,
                         {'vm_state': row.vm_state,
                          'power_state': row.power_state},
                         expected_task_state=[row.task],
                         expected_vm_state=list(row.vm_states))
        except (exception.UnexpectedTaskState,
                exception.InstanceInvalidState):
            pass  # an action took it over meanwhile: it settles it
