"""Errors. Each carries the HTTP code the API answers with when it reaches
the user, so handlers need no mapping table."""


class NovaMovesException(Exception):
    msg_fmt = 'An unknown error occurred.'
    code = 500

    def __init__(self, message=None, **kwargs):
        self.kwargs = kwargs
        if message is None:
            try:
                message = self.msg_fmt % kwargs
            except (KeyError, TypeError):
                message = self.msg_fmt
        self.message = message
        super().__init__(message)


class Invalid(NovaMovesException):
    msg_fmt = 'Invalid request: %(reason)s'
    code = 400


class ValidationError(Invalid):
    msg_fmt = '%(detail)s'


class MarkerNotFound(Invalid):
    """A paging marker naming nothing in the list: 400, as Nova."""
    msg_fmt = 'Marker %(marker)s could not be found.'


class UnsupportedMediaType(NovaMovesException):
    msg_fmt = ('Unsupported Content-Type %(content_type)s: send '
               'application/json.')
    code = 415


class NotFound(NovaMovesException):
    msg_fmt = 'Resource could not be found.'
    code = 404


class Conflict(NovaMovesException):
    msg_fmt = 'Conflict: %(reason)s'
    code = 409


class Forbidden(NovaMovesException):
    msg_fmt = 'Policy does not allow %(action)s to be performed.'
    code = 403


class TestHooksDisabled(Forbidden):
    msg_fmt = ('Fault injection is not served by %(host)s: its [api] '
               'enable_test_hooks is off.')


class InstanceNotFound(NotFound):
    msg_fmt = 'Instance %(instance_id)s could not be found.'


class FlavorNotFound(NotFound):
    msg_fmt = 'Flavor %(flavor_id)s could not be found.'


class MigrationNotFound(NotFound):
    msg_fmt = 'Migration %(migration_id)s could not be found.'


class ComputeHostNotFound(NotFound):
    msg_fmt = 'Compute host %(host)s could not be found.'


class ServiceNotFound(NotFound):
    msg_fmt = 'Service %(service_id)s could not be found.'


class ActionNotFound(NotFound):
    msg_fmt = 'Action for request_id %(request_id)s on instance ' \
              '%(instance_uuid)s not found'


class ResourceProviderNotFound(NotFound):
    msg_fmt = 'Resource provider %(uuid)s could not be found.'


class InstanceInvalidState(Conflict):
    msg_fmt = ('Cannot \'%(method)s\' instance %(instance_uuid)s while it is '
               'in %(attr)s %(state)s')


class UnexpectedTaskState(Conflict):
    msg_fmt = ('Instance %(instance_uuid)s is busy: expected task_state '
               '%(expected)s, found %(actual)s')


class ConcurrentUpdate(Conflict):
    msg_fmt = 'Resource provider %(uuid)s changed while updating; retry.'


class ConsumerGenerationConflict(Conflict):
    msg_fmt = ('Consumer %(consumer)s changed since it was read (generation '
               '%(expected)s, now %(actual)s): the move this write belongs '
               'to has been rolled back or moved on.')


class MoveConflict(Conflict):
    msg_fmt = ('Migration %(migration)s of %(instance_uuid)s moved on: '
               '%(reason)s')


class NoValidHost(NovaMovesException):
    msg_fmt = 'No valid host was found. %(reason)s'
    code = 400


class HostsUnknown(NoValidHost):
    """Every host that fits is "unknown" (nova_moves.liveness): its
    heartbeat could not be seen lately. The conductor waits and asks
    again instead of failing the move."""
    msg_fmt = ('No valid host was found. The hosts that fit (%(hosts)s) '
               'have not reported since the service could see heartbeats '
               'again; their liveness is unknown.')


class MaxRetriesExceeded(NoValidHost):
    msg_fmt = 'Exceeded maximum number of retries. %(reason)s'


class AllocationFailed(NovaMovesException):
    msg_fmt = 'Unable to allocate %(consumer)s: %(reason)s'
    code = 409


class MigrationPreCheckError(Invalid):
    msg_fmt = 'Migration pre-check error: %(reason)s'


class InstanceBuildInterrupted(NovaMovesException):
    msg_fmt = ('The build of %(instance_uuid)s was interrupted: the compute '
               'service on %(host)s restarted while it spawned.')
    code = 500


class MoveInterruptedByRestart(NovaMovesException):
    msg_fmt = ('The compute service on %(host)s restarted during '
               '%(step)s of migration %(migration)s; the move was rolled '
               'back.')


class HypervisorOperationFailed(NovaMovesException):
    msg_fmt = 'Fake hypervisor operation %(operation)s failed on %(host)s ' \
              '(injected failure).'


class DiskNotExported(NovaMovesException):
    msg_fmt = ('The source %(host)s has no disk of %(instance_uuid)s to '
               'serve for this move (its copy is gone, or the source is too '
               'old to export disks).')
    code = 409


class GuestInvalidPower(NovaMovesException):
    msg_fmt = ('Cannot %(operation)s the guest of %(instance_uuid)s on '
               '%(host)s: its power is %(power)s')
    code = 409


# What a server shows (its console, its diagnostics): asked of its host.
class InstanceNotReady(Conflict):
    msg_fmt = 'Instance %(instance_id)s is not ready: %(reason)s'


class GuestNotHere(Conflict):
    # The database names a host the guest is not on: a move or a delete
    # got there first. 409 (try again), not 404: the server exists.
    msg_fmt = ('Server %(instance_uuid)s is not running on %(host)s (it is '
               'being moved or deleted); try again.')


class ComputeRPCTooOld(Conflict):
    msg_fmt = ('%(method)s needs every compute at RPC version %(version)s '
               '([upgrade_levels] compute caps below it).')


class ComputeNotResponding(NovaMovesException):
    msg_fmt = ('The compute host %(host)s did not answer %(method)s within '
               '%(timeout)s seconds; retry later.')
    code = 503


class CellUnavailable(NovaMovesException):
    """Another cell's database could not be written or read for a
    request that must reach it (an aggregate's mirror)."""
    msg_fmt = ('The database of cell %(cell)s cannot be reached; nothing '
               'was changed, retry when it is back.')
    code = 503


class FeatureNotSupported(NovaMovesException):
    msg_fmt = '%(feature)s is not supported by the hypervisor of %(host)s.'
    code = 501


# The local image store (image_store.py).
class ImageNotFound(NotFound):
    msg_fmt = 'Image %(image_id)s could not be found.'


class ImageExists(Conflict):
    msg_fmt = 'Image %(image_id)s already exists in the image store.'


class ImageInvalid(Invalid, ValueError):
    """An import's input is unusable: a missing, unreadable or empty file,
    a disk qemu-img cannot read. A ValueError too, so code outside the API
    (the manage command, a driver) can catch it without knowing ours."""
    msg_fmt = 'Invalid image: %(reason)s'


class ImageCorrupt(NovaMovesException):
    """A listed image whose files are missing or whose disk qemu-img
    finds damaged: what the driver checks before it boots one."""
    msg_fmt = 'Image %(image_id)s is unusable: %(reason)s'


class ImageStoreError(NovaMovesException):
    """qemu-img itself failed (absent, timed out) on input it accepted."""
    msg_fmt = 'Image store: %(reason)s'


class CellMappingNotFound(NotFound):
    msg_fmt = 'Cell %(uuid)s has no mapping.'


class HostMappingExists(Conflict):
    msg_fmt = 'Host \'%(name)s\' mapping already exists'


class CellNotResponding(NovaMovesException):
    """A list met a cell that did not answer, and [api]
    list_records_by_skipping_down_cells is False: 500, as Nova."""
    msg_fmt = ('Cell %(cell_uuid)s is not responding but configuration '
               'indicates that we should fail.')
