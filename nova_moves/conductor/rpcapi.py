"""Clients of the conductor.

ComputeTaskAPI: the long flows (build, migrate, live migrate, evacuate).
The API casts them; migrate_server keeps ``do_cast`` because a compute's
reschedule calls it synchronously and handles its failure, and the
pre-2.34 live migration calls it so that a failed check is a 400.

ConductorDBAPI: the database for compute agents, which never open it.
"""
import oslo_messaging as messaging

from nova_moves.conductor import compat
from nova_moves import conf
from nova_moves import exception
from nova_moves import moves
from nova_moves.moves import cold
from nova_moves import rpc

TOPIC = 'conductor'


class ComputeTaskAPI:
    """1.0 - build_instances, migrate_server, live_migrate_instance,
          rebuild_instance
    1.1 - migrate_server takes failed_host: a reschedule only moves the
          claim while the migration still names that host
    1.2 - unshelve_instance (a SHELVED_OFFLOADED server is placed again)
    1.3 - migrate_server takes ``cross_cell`` (the API's
          compute:servers:resize:cross_cell allowed another cell);
          confirm_snapshot_based_resize, revert_snapshot_based_resize
          (a cross-cell resize's confirm and revert, cast to the
          conductor of the server's cell)

    [upgrade_levels] conductor caps what is sent (rolling upgrades).
    """
    VERSION = '1.3'

    def __init__(self):
        self.client = rpc.get_client(
            messaging.Target(topic=TOPIC, namespace='compute_task',
                             version='1.0'),
            version_cap=conf.CONF.upgrade_levels.conductor)

    def _start_client(self, version=None):
        """For the API's cast of a move's start: it waits for an
        unreachable broker as a move step's cast does (rpc.cast_waiting),
        not forever, and the API undoes the move when it gives up; else
        each request sent while a cell's broker is away holds an API
        thread until it returns."""
        options = {'version': version} if version else {}
        return self.client.prepare(
            retry=conf.CONF.move_step_cast_retries, **options)

    def build_instances(self, ctxt, instance_uuids, request_spec):
        self.client.prepare().cast(ctxt, 'build_instances',
                                   instance_uuids=instance_uuids,
                                   request_spec=request_spec)

    def migrate_server(self, ctxt, instance_uuid, live=False, flavor=None,
                       host=None, force=False, block_migration=None,
                       migration_uuid=None, alternates=None, do_cast=True,
                       timeout=None, failed_host=None, cross_cell=False):
        """Resize/cold migrate (live=False) or the blocking pre-2.34 live
        migration (live=True). ``migration_uuid`` and ``alternates`` are
        set on a compute's reschedule, which passes do_cast=False."""
        kwargs = dict(instance_uuid=instance_uuid, live=live, flavor=flavor,
                      host=host, force=force, block_migration=block_migration,
                      migration_uuid=migration_uuid, alternates=alternates)
        version = '1.0'
        if failed_host and self.client.can_send_version('1.1'):
            kwargs['failed_host'] = failed_host
            version = '1.1'
        if cross_cell and self.client.can_send_version('1.3'):
            # An older conductor keeps the move in its cell.
            kwargs['cross_cell'] = True
            version = '1.3'
        if do_cast:
            rpc.cast_waiting(self._start_client(version), ctxt,
                             'migrate_server', **kwargs)
            return None
        return self.client.prepare(timeout=timeout, version=version).call(
            ctxt, 'migrate_server', **kwargs)

    def _settle_cross_cell(self, ctxt, method, instance_uuid,
                           migration_uuid, do_cast=True):
        if do_cast:
            # Its sender puts the migration back when the cast fails
            # (db settle_abandon): waited for as a start's, not forever.
            return rpc.cast_waiting(
                self._start_client('1.3'), ctxt, method,
                instance_uuid=instance_uuid, migration_uuid=migration_uuid)
        return self.client.prepare(version='1.3').call(
            ctxt, method, instance_uuid=instance_uuid,
            migration_uuid=migration_uuid)

    def confirm_snapshot_based_resize(self, ctxt, instance_uuid,
                                      migration_uuid, do_cast=True):
        """``do_cast=False``: the delete of a server in VERIFY_RESIZE
        waits for it (Nova's _confirm_resize_on_deleting)."""
        return self._settle_cross_cell(
            ctxt, 'confirm_snapshot_based_resize', instance_uuid,
            migration_uuid, do_cast)

    def revert_snapshot_based_resize(self, ctxt, instance_uuid,
                                     migration_uuid):
        self._settle_cross_cell(ctxt, 'revert_snapshot_based_resize',
                                instance_uuid, migration_uuid)

    def live_migrate_instance(self, ctxt, instance_uuid, migration_uuid,
                              host=None, force=False, block_migration=None):
        """2.34+: the checks run in the background, reported as events."""
        rpc.cast_waiting(
            self._start_client(),
            ctxt, 'live_migrate_instance', instance_uuid=instance_uuid,
            migration_uuid=migration_uuid, host=host, force=force,
            block_migration=block_migration)

    def rebuild_instance(self, ctxt, instance_uuid, migration_uuid,
                         host=None, force=False, stop_after=False):
        """Evacuate: schedule away from the failed source and rebuild."""
        rpc.cast_waiting(
            self._start_client(),
            ctxt, 'rebuild_instance', instance_uuid=instance_uuid,
            migration_uuid=migration_uuid, host=host, force=force,
            stop_after=stop_after)


    def can_unshelve(self):
        """False while [upgrade_levels] conductor caps below 1.2."""
        return self.client.can_send_version('1.2')

    def unshelve_instance(self, ctxt, instance_uuid, host=None):
        """Place a SHELVED_OFFLOADED server (scheduler, claim) and cast
        its new compute; ``host`` is the one asked at 2.91."""
        rpc.cast_waiting(self._start_client('1.2'), ctxt,
                         'unshelve_instance', instance_uuid=instance_uuid,
                         host=host)


class ConductorDBAPI:
    """The database as compute agents see it: blocking calls, one per
    db/api.py function they may use.

    1.0 - service_report, compute_node_sync, instance_*, migration_*,
          allocations_*, action_event_*
    1.1 - move_advance, move_failed: one guarded transaction per move
          step (a stale step raises MoveConflict and changes nothing)
    1.2 - action_event_finish takes host and start_time: a short step's
          event recorded whole at its end, one call instead of two
    1.3 - the event of move_advance and move_failed may carry start_time:
          a guarded step whose only call is at its end (prep_resize, which
          changes nothing a stale message could harm) records its event
          whole there
    1.4 - move_advance takes ``events``: the previous step's end event
          recorded in a chained step's one transaction (compute 1.5; the
          revert's from compute 1.7)
    1.5 - service_report takes ``settled``: a compute shown down is told
          to settle (remove evacuated copies) before its report counts
    1.6 - move_advance takes ``passed_phases`` (a status the move went
          through without a write of its own: a chained live migration's
          'preparing', compute 1.6)
    1.7 - settle_start: the one start of a confirm or a revert (the
          source's auto-confirm), with the facts its cast carries
    1.8 - the conductor also takes these calls on 'conductor_calls'
          (classic queues: nova_moves/rpc.py CALLS_SUFFIX)

    Capped by [upgrade_levels] conductor; below 1.1 the two are made of
    1.0 calls (conductor/compat.py); below 1.2 events take a start and a
    finish call; below 1.3 prep_resize makes its start call and a step's
    event with a start time is recorded as started at its end; below 1.6
    the live migration's steps are not chained; below 1.7 settle_start is
    made of migration_update (its guard still the table's), without the
    facts.
    """
    VERSION = '1.8'
    # From this version on, calls go to the calls queues (rpc.py).
    CALLS_VERSION = '1.8'

    def __init__(self):
        self.client = rpc.get_client(
            messaging.Target(topic=TOPIC, namespace='compute_db',
                             version='1.0'),
            version_cap=conf.CONF.upgrade_levels.conductor,
            calls_version=self.CALLS_VERSION)

    def _call(self, ctxt, method, timeout=None, **kwargs):
        return self.client.prepare(timeout=timeout).call(ctxt, method,
                                                         **kwargs)

    def service_report(self, ctxt, host, binary, topic,
                       availability_zone=None, timeout=None, server=None,
                       settled=None):
        """To any conductor, or to the one named ``server``. Returns
        {'conductors': [hosts up], 'forced_down': bool} (None from an
        older conductor; no forced_down before self-fencing), or
        {'settle_first': True} (1.5, ``settled`` False, the host shown
        down). Below 1.5 ``settled`` is not sent: the report counts."""
        kwargs = dict(host=host, binary=binary, topic=topic,
                      availability_zone=availability_zone)
        version = '1.0'
        if settled is not None and self.client.can_send_version('1.5'):
            kwargs['settled'] = settled
            version = '1.5'
        return self.client.prepare(timeout=timeout, server=server,
                                   version=version).call(
            ctxt, 'service_report', **kwargs)

    def compute_node_sync(self, ctxt, node, timeout=None):
        return self._call(ctxt, 'compute_node_sync', timeout=timeout,
                          node=node)

    def instance_get(self, ctxt, instance_uuid, read_deleted=False):
        return self._call(ctxt, 'instance_get', instance_uuid=instance_uuid,
                          read_deleted=read_deleted)

    def instance_get_all_by_host(self, ctxt, host):
        return self._call(ctxt, 'instance_get_all_by_host', host=host)

    def instance_update(self, ctxt, instance_uuid, values, **expected):
        """``expected`` may hold expected_task_state, expected_vm_state,
        expected_host: the compare-and-swap of db_api.instance_update."""
        return self._call(ctxt, 'instance_update',
                          instance_uuid=instance_uuid, values=values,
                          expected=expected)

    def instance_fault_create(self, ctxt, instance_uuid, code, message,
                              details=None, host=None):
        return self._call(ctxt, 'instance_fault_create',
                          instance_uuid=instance_uuid, code=code,
                          message=message, details=details, host=host)

    def migration_get(self, ctxt, migration_id):
        return self._call(ctxt, 'migration_get', migration_id=migration_id)

    def migration_get_all(self, ctxt, **filters):
        return self._call(ctxt, 'migration_get_all', filters=filters)

    def settle_start(self, ctxt, step, migration_uuid):
        """``step`` ('confirm_resize', 'revert_resize') starts on the
        finished migration (its cold table row's 'request' guard):
        (migration, facts of the step's cast; None below 1.7). Conflict
        when another request moved it on first."""
        if self.client.can_send_version('1.7'):
            migration, facts = self.client.prepare(version='1.7').call(
                ctxt, 'settle_start', step=step,
                migration_uuid=migration_uuid)
            return migration, facts
        before, after = moves.guard_of(cold, step, 'request')['status']
        return self.migration_update(ctxt, migration_uuid,
                                     {'status': after},
                                     expected_status=[before]), None

    def migration_update(self, ctxt, migration_id, values,
                         expected_status=None):
        return self._call(ctxt, 'migration_update', migration_id=migration_id,
                          values=values, expected_status=expected_status)

    def allocations_get(self, ctxt, consumer_id):
        return self._call(ctxt, 'allocations_get', consumer_id=consumer_id)

    def allocations_replace(self, ctxt, consumer_id, allocations,
                            from_consumer=None):
        return self._call(ctxt, 'allocations_replace',
                          consumer_id=consumer_id, allocations=allocations,
                          from_consumer=from_consumer)

    def allocations_move(self, ctxt, from_consumer, to_consumer):
        return self._call(ctxt, 'allocations_move',
                          from_consumer=from_consumer,
                          to_consumer=to_consumer)

    def allocations_delete(self, ctxt, consumer_id, root_host=None):
        return self._call(ctxt, 'allocations_delete', consumer_id=consumer_id,
                          root_host=root_host)

    def action_event_start(self, ctxt, instance_uuid, request_id, event,
                           host=None):
        return self._call(ctxt, 'action_event_start',
                          instance_uuid=instance_uuid, request_id=request_id,
                          event=event, host=host)

    def action_event_finish(self, ctxt, instance_uuid, request_id, event,
                            result, traceback=None, details=None, host=None,
                            start_time=None):
        kwargs = dict(instance_uuid=instance_uuid, request_id=request_id,
                      event=event, result=result, traceback=traceback,
                      details=details)
        if start_time is None:
            return self._call(ctxt, 'action_event_finish', **kwargs)
        # 1.2 only: callers ask can_record_whole_events() first.
        return self.client.prepare(version='1.2').call(
            ctxt, 'action_event_finish', host=host, start_time=start_time,
            **kwargs)

    def can_record_whole_events(self):
        return self.client.can_send_version('1.2')

    def can_record_whole_steps(self):
        return self.client.can_send_version('1.3')

    def can_chain_steps(self):
        return self.client.can_send_version('1.4')

    def can_chain_live_steps(self):
        return self.client.can_send_version('1.6')

    def _step_version(self, kwargs):
        # 1.3 for an event with its start time; capped below, the event
        # is recorded as started when it ended (a step whose only call
        # is at its end: a live migration's abort or force-complete).
        event = kwargs.get('event') or {}
        if not event.get('start_time'):
            return '1.1'
        if self.can_record_whole_steps():
            return '1.3'
        kwargs['event'] = {k: v for k, v in event.items()
                           if k != 'start_time'}
        return '1.1'

    # -- 1.1 ---------------------------------------------------------------
    def move_advance(self, ctxt, migration_id, events=None,
                     passed_phases=None, **kwargs):
        """db_api.move_advance: one step, both rows compare-and-swapped;
        returns {'instance', 'migration'}; MoveConflict when stale.
        ``events`` (1.4: more events in the step's transaction, a chained
        step's previous end) are recorded after it below 1.4.
        ``passed_phases`` (1.6) are dropped below 1.6: callers that need
        them ask can_chain_live_steps() first and write them otherwise."""
        if passed_phases and self.can_chain_live_steps():
            return self.client.prepare(version='1.6').call(
                ctxt, 'move_advance', migration_id=migration_id,
                events=events, passed_phases=passed_phases, **kwargs)
        if events and self.can_chain_steps():
            return self.client.prepare(version='1.4').call(
                ctxt, 'move_advance', migration_id=migration_id,
                events=events, **kwargs)
        if not self.client.can_send_version('1.1'):
            rows = compat.move_advance(self, ctxt, migration_id, **kwargs)
        else:
            rows = self.client.prepare(
                version=self._step_version(kwargs)).call(
                    ctxt, 'move_advance', migration_id=migration_id,
                    **kwargs)
        for event in events or ():
            self._record_after(ctxt, rows, event)
        return rows

    def _record_after(self, ctxt, rows, event):
        """An event a 1.4 conductor records in the step's transaction,
        recorded after it (older conductors)."""
        server = rows['migration']['instance_uuid']
        try:
            if not event.get('result'):  # an event's start
                self.action_event_start(ctxt, server, ctxt.request_id,
                                        event['name'],
                                        host=event.get('host'))
                return
            self.action_event_finish(
                ctxt, server, ctxt.request_id, event['name'],
                event['result'], host=event.get('host'),
                start_time=(event.get('start_time')
                            if self.can_record_whole_events() else None))
        except exception.ActionNotFound:
            pass

    def move_failed(self, ctxt, migration_id=None, **kwargs):
        """db_api.move_failed: the one undo of a move."""
        if not self.client.can_send_version('1.1'):
            return compat.move_failed(self, ctxt, migration_id, **kwargs)
        return self.client.prepare(version=self._step_version(kwargs)).call(
            ctxt, 'move_failed', migration_id=migration_id, **kwargs)
