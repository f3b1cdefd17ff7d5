"""Nova's versioned notifications, sent by the compute agents.

With ``[notifications] notification_format = versioned`` a compute sends
``instance.<action>.start`` / ``.end`` (and ``.error`` when the step
failed) through oslo.messaging's notifier, on the topics of
``[notifications] versioned_notifications_topics`` (queue
``versioned_notifications.info`` / ``.error`` on the control exchange
``nova_moves``), publisher ``nova-compute:<host>``. The payload is Nova's
``nova_object`` envelope (name, namespace ``nova``, version, data) around
a subset of Nova's InstanceActionPayload fields (``payload_data``);
resize_prep adds ``new_flavor``, an error adds ``fault``
(ExceptionPayload). doc/notifications.md lists what is sent when.

Off (the default), nothing is built and nothing is read. On, a
notification costs one publish; the server's state comes from the rows
the handler's guarded steps already returned, or from one conductor call
when the handler made none.
A failure to notify is logged and never fails the operation.
"""
import functools
import threading
import traceback

from oslo_log import log as logging
import oslo_messaging as messaging

from nova_moves import conf
from nova_moves import rpc
from nova_moves import timeutil

LOG = logging.getLogger(__name__)
CONF = conf.CONF

# Nova's object versions of the payloads as of its 2024.1 release.
VERSIONS = {'InstanceActionPayload': '1.8',
            'InstanceActionResizePrepPayload': '1.8',
            'InstanceActionRebuildPayload': '1.10',
            'FlavorPayload': '1.4', 'ExceptionPayload': '1.1'}
# The actions whose payload class is not InstanceActionPayload.
PAYLOAD_CLASS = {'resize_prep': 'InstanceActionResizePrepPayload',
                 'rebuild': 'InstanceActionRebuildPayload'}
# Cleanups: the move_failed they run is their job, not their failure.
NO_ERROR_FROM_MOVE_FAILED = ('live_migration_rollback',
                             'live_migration_rollback_dest',
                             'live_migration_abort')
# Handlers whose first write is a guarded step (move_advance, which
# returns the server): their .start goes out with it, without a read.
STARTS_WITH_A_GUARD = ('resize_prep', 'resize', 'resize_finish',
                       'resize_confirm', 'resize_revert', 'rebuild',
                       'live_migration_pre', 'live_migration_post_dest')
POWER_STATES = {0: 'pending', 1: 'running', 3: 'paused', 4: 'shutdown',
                6: 'crashed', 7: 'suspended'}


def envelope(name, data):
    return {'nova_object.name': name, 'nova_object.namespace': 'nova',
            'nova_object.version': VERSIONS[name], 'nova_object.data': data}


def _time(value):
    return timeutil.api_time_z(value) if value else None


def flavor_payload(flavor):
    return envelope('FlavorPayload', {
        'flavorid': flavor.get('flavorid'), 'name': flavor.get('name'),
        'memory_mb': flavor.get('memory_mb'), 'vcpus': flavor.get('vcpus'),
        'root_gb': flavor.get('root_gb'),
        'ephemeral_gb': flavor.get('ephemeral_gb') or 0,
        'swap': flavor.get('swap') or 0,
        'rxtx_factor': flavor.get('rxtx_factor') or 1.0,
        'is_public': flavor.get('is_public', True),
        'disabled': bool(flavor.get('disabled')),
        'description': flavor.get('description'), 'extra_specs': {},
        'projects': None})


def exception_payload(exc):
    frames = traceback.extract_tb(exc.__traceback__)
    frame = frames[-1] if frames else None
    return envelope('ExceptionPayload', {
        'module_name': type(exc).__module__,
        'function_name': frame.name if frame else '',
        'exception': type(exc).__name__,
        'exception_message': str(exc),
        'traceback': ''.join(traceback.format_exception(
            type(exc), exc, exc.__traceback__))})


def payload_data(ctxt, instance, action, exc=None):
    """The InstanceActionPayload fields nova_moves fills (Nova's names)."""
    data = {
        'uuid': instance['uuid'], 'display_name': instance['display_name'],
        'host_name': instance['display_name'], 'host': instance['host'],
        'node': instance['node'], 'tenant_id': instance['project_id'],
        'user_id': instance['user_id'],
        'availability_zone': instance.get('availability_zone'),
        'image_uuid': instance.get('image_ref'),
        'flavor': flavor_payload(instance['flavor']),
        'state': instance['vm_state'], 'task_state': instance['task_state'],
        'power_state': POWER_STATES.get(instance['power_state'], 'pending'),
        'progress': instance.get('progress') or 0,
        'created_at': _time(instance.get('created_at')),
        'launched_at': _time(instance.get('launched_at')),
        'updated_at': _time(instance.get('updated_at')),
        'terminated_at': _time(instance.get('terminated_at')),
        'request_id': getattr(ctxt, 'request_id', None),
        'action_initiator_user': getattr(ctxt, 'user_id', None),
        'action_initiator_project': getattr(ctxt, 'project_id', None),
        'fault': exception_payload(exc) if exc is not None else None,
    }
    if action == 'resize_prep' and instance.get('new_flavor'):
        data['new_flavor'] = flavor_payload(instance['new_flavor'])
    return data


class Notifier:
    """One per compute agent. ``fetch(ctxt, instance_uuid)`` reads the
    server (through the conductor: agents never open the database)."""

    def __init__(self, host, fetch, binary='nova-compute'):
        self.host = host
        self.fetch = fetch
        self.publisher_id = '%s:%s' % (binary, host)
        self._notifier = None
        self._lock = threading.Lock()
        # The _Run of the handler running in this thread.
        self._local = threading.local()

    @staticmethod
    def enabled():
        return CONF.notifications.notification_format == 'versioned'

    def _get(self):
        with self._lock:
            if self._notifier is None:
                # The same control exchange as the RPC messages.
                messaging.set_transport_defaults(
                    control_exchange=rpc.EXCHANGE)
                self._notifier = messaging.Notifier(
                    messaging.get_notification_transport(CONF),
                    publisher_id=self.publisher_id,
                    driver=CONF.notifications.driver,
                    topics=CONF.notifications.versioned_notifications_topics,
                    serializer=rpc.RequestContextSerializer())
            return self._notifier

    def instance_action(self, ctxt, instance_uuid, action, phase, exc=None,
                        instance=None):
        """Send instance.<action>.<phase> with ``instance`` as it is now
        (read through the conductor when not given); never raises."""
        if not self.enabled():
            return
        try:
            if instance is None:
                instance = self.fetch(ctxt, instance_uuid)
            name = PAYLOAD_CLASS.get(action, 'InstanceActionPayload')
            payload = envelope(name, payload_data(ctxt, instance, action,
                                                  exc))
            notifier = self._get()
            send = notifier.error if phase == 'error' else notifier.info
            send(ctxt, 'instance.%s.%s' % (action, phase), payload)
        except Exception:
            LOG.exception('Could not send instance.%s.%s for %s', action,
                          phase, instance_uuid)

    def _run_of(self, instance_uuid):
        run = getattr(self._local, 'run', None)
        return run if run is not None and run.uuid == instance_uuid else None

    def saw(self, ctxt, rows):
        """A write of the running handler returned ``rows``: a guarded
        step's {'instance', 'migration'} or an instance: the server as
        it is now, so the handler's notifications need no read of their
        own. A guarded handler's .start goes out with its first step
        (after the guard that drops stale messages)."""
        if not isinstance(rows, dict):
            return
        guarded = 'instance' in rows
        instance = rows['instance'] if guarded else rows
        run = self._run_of((instance or {}).get('uuid'))
        if run is None:
            return
        run.instance = instance
        if run.start_pending and guarded:
            run.start_pending = False
            self.instance_action(ctxt, run.uuid, run.action, 'start',
                                 instance=instance)

    def step_failed(self, ctxt, instance_uuid, exc, instance=None):
        """A handler's failure path (move_failed) reports its .error now;
        the handler's decorator then sends no .end."""
        run = self._run_of(instance_uuid)
        if run is None or run.action in NO_ERROR_FROM_MOVE_FAILED or \
                run.errored:
            return
        self._flush_start(ctxt, run)
        run.errored = True
        self.instance_action(ctxt, instance_uuid, run.action, 'error', exc,
                             instance=instance)

    def flush_start(self, ctxt):
        """Send the running handler's pending .start now: a guarded step
        that casts its next hop before any call of its own (a chained
        prep_resize) must not let the next host's notifications go first."""
        run = getattr(self._local, 'run', None)
        if run is not None:
            self._flush_start(ctxt, run)

    def _flush_start(self, ctxt, run):
        if run.start_pending:
            run.start_pending = False
            self.instance_action(ctxt, run.uuid, run.action, 'start',
                                 instance=run.instance)

    def run(self, ctxt, instance_uuid, action, fn, start=True, end=True):
        """fn() between instance.<action>.start and .end (.error if it
        raises, or if its failure path reported one)."""
        if not self.enabled():
            return fn()
        outer = getattr(self._local, 'run', None)
        run = self._local.run = _Run(action, instance_uuid, start)
        if start and action not in STARTS_WITH_A_GUARD:
            run.start_pending = False
            self.instance_action(ctxt, instance_uuid, action, 'start')
        try:
            try:
                result = fn()
            except Exception as exc:
                if not run.errored:
                    self._flush_start(ctxt, run)
                    run.errored = True
                    self.instance_action(ctxt, instance_uuid, action,
                                         'error', exc)
                raise
            self._flush_start(ctxt, run)
            if end and not run.errored:
                # The last step's rows are the server after the handler,
                # unless something else wrote after them: read it then.
                self.instance_action(ctxt, instance_uuid, action, 'end',
                                     instance=run.instance)
            return result
        finally:
            self._local.run = outer


class _Run:
    """What one notifying handler has sent and seen so far."""

    def __init__(self, action, uuid, start):
        self.action, self.uuid = action, uuid
        self.start_pending = start
        self.errored = False
        self.instance = None


class _Off:
    """The notifier of a move mixin used without a compute manager (the
    manager sets its own Notifier)."""

    def run(self, ctxt, instance_uuid, action, fn, start=True, end=True):
        return fn()

    def instance_action(self, *args, **kwargs):
        pass

    def step_failed(self, *args, **kwargs):
        pass

    def saw(self, *args, **kwargs):
        pass

    def flush_start(self, *args, **kwargs):
        pass


OFF = _Off()


def notify_action(action, start=True, end=True):
    """Decorate a compute handler (ctxt, instance_uuid, ...) so that it
    sends instance.<action>.start/.end/.error."""
    def decorator(fn):
        @functools.wraps(fn)
        def wrapper(self, ctxt, *args, **kwargs):
            instance_uuid = kwargs.get('instance_uuid') or args[0]
            return self.notifier.run(
                ctxt, instance_uuid, action,
                lambda: fn(self, ctxt, *args, **kwargs), start=start,
                end=end)
        return wrapper
    return decorator
