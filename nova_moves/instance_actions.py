"""Instance action events: start, finish, result and traceback of each
step of a flow, named like Nova's (conductor_migrate_server,
compute_prep_resize, ...). The API records the action itself before any
RPC; these record the events under it, keyed by the request id."""
import contextlib
import datetime
import functools
import traceback as tb

from oslo_log import log as logging

from nova_moves import faultinfo

LOG = logging.getLogger(__name__)

# The request id that names a server's newest action (a service's own
# flow closing the event of an action it finishes: a restarted host).
NEWEST = 'newest'


class Recording:
    """What event() yields. A whole event can be taken by the block
    (``take()``) to be written as a value of the block's own step
    transaction (db move_advance's ``event``): event() then writes
    nothing more for it, unless the block fails after taking it."""

    def __init__(self, name, host, started_at):
        self.name, self.host, self.started_at = name, host, started_at
        self.taken = False

    def take(self):
        """The event as a step's value (Success, now), or None when it is
        not recorded whole (it already has its start row)."""
        if self.started_at is None:
            return None
        self.taken = True
        return {'name': self.name, 'result': 'Success', 'host': self.host,
                'start_time': self.started_at, 'whole': True}


@contextlib.contextmanager
def event(backend, ctxt, instance_uuid, name, host=None, whole=False):
    """Record ``name`` around a block. ``backend`` has action_event_start
    and action_event_finish with the conductor DB API signatures. The
    exception still propagates: recording never swallows a failure.
    Yields a Recording.

    ``whole``: a short step (a pre-check) is recorded in one call at its
    end, with the time it started, when the backend can (conductor RPC
    1.2): nobody watches a step of milliseconds start, and it saves a
    round trip. A step whose start others wait for is not whole."""
    request_id = ctxt.request_id
    if whole and getattr(backend, 'can_record_whole_events',
                         lambda: False)():
        started_at = datetime.datetime.now(
            datetime.timezone.utc).replace(tzinfo=None).isoformat()
        recording = Recording(name, host, started_at)
        try:
            yield recording
        except Exception as exc:
            _safe(backend.action_event_finish, ctxt, instance_uuid,
                  request_id, name, 'Error', traceback=_format(exc),
                  details=faultinfo.message(exc), host=host,
                  start_time=started_at)
            raise
        if not recording.taken:
            _safe(backend.action_event_finish, ctxt, instance_uuid,
                  request_id, name, 'Success', host=host,
                  start_time=started_at)
        return
    started = _safe(backend.action_event_start, ctxt, instance_uuid,
                    request_id, name, host=host)
    try:
        yield Recording(name, host, None)
    except Exception as exc:
        if started:
            _safe(backend.action_event_finish, ctxt, instance_uuid,
                  request_id, name, 'Error', traceback=_format(exc),
                  details=faultinfo.message(exc))
        raise
    else:
        if started:
            _safe(backend.action_event_finish, ctxt, instance_uuid,
                  request_id, name, 'Success')


def _format(exc):
    text = ''.join(tb.format_exception(type(exc), exc, exc.__traceback__))
    return text or repr(exc)


def _safe(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
        return True
    except Exception as exc:
        # No action for this request id (an internal or periodic flow): the
        # step still runs, it is just not recorded.
        LOG.debug('Instance event not recorded: %s', exc)
        return False


def wrap_instance_event(prefix, whole=False):
    """Decorate a manager method taking (self, ctxt, instance_uuid=...);
    the manager provides ``event_backend`` and ``host``. ``whole``: see
    event()."""
    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(self, ctxt, *args, **kwargs):
            instance_uuid = kwargs.get('instance_uuid') or args[0]
            name = '%s_%s' % (prefix, fn.__name__)
            with event(self.event_backend, ctxt, instance_uuid, name,
                       host=getattr(self, 'host', None), whole=whole):
                return fn(self, ctxt, *args, **kwargs)
        return wrapper
    return decorator
