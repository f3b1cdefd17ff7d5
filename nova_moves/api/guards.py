"""What an action checks before it claims the server, shared by the
action modules and the resources that change a server (a leaf: it
imports no handler module)."""
from nova_moves.api import request as api_req
from nova_moves import exception


class InstanceIsLocked(exception.Conflict):
    msg_fmt = 'Instance %(instance_uuid)s is locked'


def check_not_locked(instance):
    """409 when ``instance`` is locked and the caller is not admin."""
    if instance.get('locked_by') and not api_req.context().is_admin:
        raise InstanceIsLocked(instance_uuid=instance['uuid'])


class LifecycleNotSupported(exception.Conflict):
    msg_fmt = ('%(action)s needs every compute at RPC version 1.4 '
               '([upgrade_levels] compute caps below it).')


def require_host(name, instance):
    if not instance['host']:
        # Never scheduled (an ERROR from the build): no guest to act on.
        raise exception.InstanceInvalidState(
            method=name, instance_uuid=instance['uuid'], attr='host',
            state=None)
