"""What a server shows, asked of the host it runs on (compute RPC 1.9,
calls from the API): its serial console's output and Nova's server
diagnostics. Read-only: nothing is recorded, no task_state is claimed,
so neither waits for nor disturbs a move.

The API sends to the host the database names; a move or a delete may
have taken the guest away since, so each method first checks the guest
is here (409: try again) rather than letting the driver fail on a
guest it does not have."""
import oslo_messaging as messaging

from nova_moves.compute import base
from nova_moves.compute import rpcapi as compute_rpcapi
from nova_moves import exception
from nova_moves import states

# Nova's power state names, for the 409 of diagnostics.
_POWER_NAMES = {states.POWER_NOSTATE: 'pending',
                states.POWER_RUNNING: 'running',
                states.POWER_PAUSED: 'paused',
                states.POWER_SHUTDOWN: 'shutdown',
                states.POWER_CRASHED: 'crashed',
                states.POWER_SUSPENDED: 'suspended'}


def tail(text, length):
    """Nova's tail of a console log (its manager's ``_tail_log``): the
    last ``length`` pieces between newlines, so a final newline counts
    as one and ``length=3`` is always three pieces or fewer (tempest
    checks exactly that)."""
    if length is None:
        return text
    length = int(length)
    return '\n'.join(text.split('\n')[-length:]) if length > 0 else ''


class ConsoleEndpoint(base.Steps):
    target = messaging.Target(version=compute_rpcapi.ComputeAPI.VERSION)

    def _require_guest(self, instance_uuid):
        if not self.driver.has_guest(instance_uuid):
            raise exception.GuestNotHere(instance_uuid=instance_uuid,
                                         host=self.host)

    # -- 1.9 ------------------------------------------------------------------
    # The user's 409s, not this host's errors: not logged as failures.
    @messaging.expected_exceptions(exception.GuestNotHere)
    def get_console_output(self, ctxt, instance_uuid, tail_length=None):
        """The last ``tail_length`` lines (None: all; the API turns -1
        into None), counted as Nova's compute manager does."""
        self._require_guest(instance_uuid)
        return tail(self.driver.console_output(instance_uuid), tail_length)

    @messaging.expected_exceptions(exception.GuestNotHere,
                                   exception.InstanceInvalidState)
    def get_diagnostics(self, ctxt, instance_uuid):
        """The driver's 2.48 diagnostics. As Nova's manager: of a running
        guest only (a stopped or paused one is a 409)."""
        self._require_guest(instance_uuid)
        power = self.driver.power_state(instance_uuid)
        if power != states.POWER_RUNNING:
            raise exception.InstanceInvalidState(
                method='get_diagnostics', instance_uuid=instance_uuid,
                attr='power state', state=_POWER_NAMES.get(power, power))
        return self.driver.diagnostics(instance_uuid)
