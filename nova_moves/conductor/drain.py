"""Host drains (os-host-drains), run by the conductors.

Every pass (the recovery thread, every ``[conductor] queue_poll_interval``)
a conductor claims the active drains that are free, its own, or whose
owner's heartbeat is older than service_down_time (a dead conductor's),
and moves each one on from what the database says:

- first pass: the host's compute service is disabled (with a
  disabled_reason naming the drain) and its servers listed, ``pending``;
- a pending server is started like the API starts a move (db move_start:
  task_state, instance action, migration) and handed to the concurrency
  gate, at most twice ``max_outbound_migrations_per_host`` at a time:
  live migration for ACTIVE/PAUSED, cold migration for SHUTOFF
  (``auto``), or as ``mode`` says; evacuation when the host is down and
  ``force_down_if_dead`` was asked (the service is forced down first);
  when the host went down after the drain began, without that flag,
  the server stays pending with a reason saying it waits for the host,
  and moves when the host is back, up to ``[conductor]
  drain_host_down_wait`` seconds of silence (a host already down at the
  start fails its servers at once: drain it with force_down_if_dead);
- a moving server is ``done`` once its migration completed (a cold
  migration is confirmed first), else retried up to
  ``[conductor] drain_max_attempts`` times and then ``failed`` with the
  server's fault;
- the drain is ``completed`` when no server is pending or moving; a
  cancelled drain (DELETE) starts nothing more and ends ``cancelled`` once
  the moves under way finished. The host stays disabled either way.
"""
import datetime
import uuid as uuidlib

from oslo_log import log as logging

from nova_moves import conf
from nova_moves.conductor import admission
from nova_moves import context as nm_context
from nova_moves.db import api as db_api
from nova_moves.db import drains as d
from nova_moves import drain_plan
from nova_moves import exception
from nova_moves import liveness
from nova_moves import states
from nova_moves import timeutil

CONF = conf.CONF
LOG = logging.getLogger(__name__)
COMPUTE_BINARY = 'nova-moves-compute'

# A drain's move, by kind: task_state, allowed vm_states, action name.
STARTS = {
    admission.LIVE: (states.MIGRATING, drain_plan.LIVE_VM_STATES,
                     'live-migration'),
    admission.COLD: (states.RESIZE_PREP, drain_plan.COLD_VM_STATES,
                     'migrate'),
    admission.EVACUATE: (states.REBUILDING, drain_plan.EVACUATE_VM_STATES,
                         'evacuate'),
}
# Migration statuses that end a drain's move well, by kind.
SUCCESS = {admission.LIVE: (states.M_COMPLETED,),
           admission.COLD: (states.M_CONFIRMED,),
           admission.EVACUATE: (states.M_DONE, states.M_COMPLETED)}
FAILURE = (states.M_ERROR, states.M_FAILED, states.M_CANCELLED,
           states.M_REVERTED)


def disabled_reason(drain):
    return 'Drained by nova-moves (host drain %s)' % drain['uuid']


class DrainRunner:

    def __init__(self, gate, start_move, compute_rpcapi, service_group):
        """``start_move(kind, ctxt, instance_uuid, migration_uuid,
        kwargs)`` runs a started move's conductor flow (through the
        gate)."""
        self.gate = gate
        self.start_move = start_move
        self.compute_rpcapi = compute_rpcapi
        self.servicegroup = service_group

    def tick(self):
        stale = timeutil.utcnow() - datetime.timedelta(
            seconds=CONF.service_down_time)
        for drain in db_api.drain_get_all(status=d.ACTIVE):
            if not db_api.drain_claim(drain['uuid'], CONF.host, stale):
                continue
            if drain['owner'] not in (None, CONF.host):
                LOG.warning('Taking over host drain %s of %s from %s',
                            drain['uuid'], drain['host'], drain['owner'])
            try:
                self._step(db_api.drain_get(drain['uuid']))
            except Exception:
                LOG.exception('Host drain %s: pass failed', drain['uuid'])

    # -- one pass ---------------------------------------------------------
    def _step(self, drain):
        if not drain['started_at']:
            drain = self._begin(drain)
        ctxt = self._context(drain)
        for server in drain['servers']:
            if server['state'] == d.MOVING:
                self._follow(ctxt, drain, server)
        drain = db_api.drain_get(drain['uuid'])
        moving = [s for s in drain['servers'] if s['state'] == d.MOVING]
        if drain['status'] == d.CANCELLING:
            if not moving:
                self._finish(drain, d.CANCELLED)
            return
        service = self._service(drain)
        # Twice the host's limit in flight: enough to keep its slots busy
        # (a few wait in queued), few enough that a cancel leaves the
        # rest where they are.
        room = 2 * CONF.conductor.max_outbound_migrations_per_host - len(
            moving)
        for server in drain['servers']:
            if room <= 0:
                break
            if server['state'] == d.PENDING and self._start(
                    ctxt, drain, server, service):
                room -= 1
        drain = db_api.drain_get(drain['uuid'])
        if all(s['state'] in (d.DONE, d.FAILED) for s in drain['servers']):
            self._finish(drain, d.COMPLETED)

    def _context(self, drain):
        return nm_context.RequestContext(
            user_id=drain['user_id'], project_id=drain['project_id'],
            is_admin=True, roles=['admin'], overwrite=False)

    def _service(self, drain):
        return db_api.service_get_by_host_and_binary(drain['host'],
                                                     COMPUTE_BINARY)

    def _begin(self, drain):
        service = self._service(drain)
        if service is not None:
            values = {'disabled': True,
                      'disabled_reason': disabled_reason(drain)}
            if drain['force_down_if_dead'] and \
                    self.servicegroup.state(service) == liveness.DOWN:
                # Fenced by the operator's word: evacuation needs it.
                values['forced_down'] = True
            db_api.service_update(service['id'], values)
        servers = sorted(db_api.instance_get_all(host=drain['host']),
                         key=lambda s: s['created_at'])
        db_api.drain_servers_add(drain['uuid'],
                                 [s['uuid'] for s in servers])
        LOG.info('Host drain %s: %d servers to move off %s (mode %s)',
                 drain['uuid'], len(servers), drain['host'], drain['mode'])
        db_api.drain_update(drain['uuid'],
                            {'started_at': timeutil.utcnow()})
        return db_api.drain_get(drain['uuid'])

    def _finish(self, drain, status):
        try:
            db_api.drain_update(drain['uuid'], {
                'status': status, 'finished_at': timeutil.utcnow()},
                expected_status=d.ACTIVE)
        except exception.Conflict:
            return
        LOG.info('Host drain %s of %s %s', drain['uuid'], drain['host'],
                 status)

    # -- pending -> moving ------------------------------------------------
    def _wait_for_host(self, drain, server, service):
        """The host went down after the drain began (a restart, a
        blink): keep the server pending with the reason (the drain's
        report shows it) while the host has been silent for less than
        drain_host_down_wait. False (fail now, as before) for a host
        already down when the drain began, or silent too long."""
        last = db_api._parse_time(service['last_seen_up'])
        started = db_api._parse_time(drain['started_at'])
        if last is None or started is None or last < started:
            return False
        down_for = (timeutil.utcnow() - last).total_seconds()
        limit = CONF.conductor.drain_host_down_wait
        if down_for > limit:
            return False
        reason = ('waiting: host %s is down (silent %ds); the server moves '
                  'when it is back, or fails after %ds silent'
                  % (drain['host'], down_for, limit))
        if server['reason'] != reason:
            db_api.drain_server_update(
                drain['uuid'], server['instance_uuid'], {'reason': reason},
                expected_state=d.PENDING)
        return True

    def _wait_unknown(self, drain, server):
        reason = ('waiting: host %s has not reported since heartbeats '
                  'could be seen again (liveness unknown)' % drain['host'])
        if server['reason'] != reason:
            db_api.drain_server_update(
                drain['uuid'], server['instance_uuid'], {'reason': reason},
                expected_state=d.PENDING)
        return None

    def _kind(self, drain, instance, service):
        """(kind, None) or (None, why the server cannot move): the same
        rule a drain plan states (drain_plan.move_kind)."""
        kind, why = drain_plan.move_kind(
            drain['mode'], drain['force_down_if_dead'],
            service is not None and db_api.service_is_up(service),
            instance['vm_state'], drain['host'])
        if kind == admission.EVACUATE and service is not None and \
                not service['forced_down']:
            # Down after the drain began: fence it before evacuating (as
            # the first pass does), so it cannot come back running the
            # servers moved away.
            db_api.service_update(service['id'], {'forced_down': True})
        return kind, why

    def _fail(self, drain, server, reason, expected=d.PENDING):
        LOG.warning('Host drain %s: server %s failed: %s', drain['uuid'],
                    server['instance_uuid'], reason)
        db_api.drain_server_update(drain['uuid'], server['instance_uuid'],
                                   {'state': d.FAILED, 'reason': reason},
                                   expected_state=expected)

    def _start(self, ctxt, drain, server, service):
        """True when a move was started."""
        try:
            instance = db_api.instance_get(server['instance_uuid'])
        except exception.InstanceNotFound:
            return self._done(drain, server, 'deleted', d.PENDING)
        if instance['host'] != drain['host'] and not instance['task_state']:
            return self._done(drain, server, 'moved off by someone else',
                              d.PENDING)
        if service is not None and \
                self.servicegroup.state(service) == liveness.UNKNOWN:
            # Silent only because heartbeats could not be seen (a broker
            # outage): neither evacuate it nor fail it yet.
            return self._wait_unknown(drain, server)
        kind, why = self._kind(drain, instance, service)
        if kind is None:
            host_down = service is not None and \
                not db_api.service_is_up(service)
            if host_down and self._wait_for_host(drain, server, service):
                return None
            return self._fail(drain, server, why)
        if instance['task_state']:
            started = db_api._parse_time(drain['started_at'])
            if (timeutil.utcnow() - started).total_seconds() > \
                    CONF.conductor.drain_busy_timeout:
                self._fail(drain, server, 'busy with task_state %s'
                           % instance['task_state'])
            return None  # another task first; try again next pass
        task_state, vm_states, action = STARTS[kind]
        ctxt = self._context(drain)
        ctxt.request_id = 'req-%s' % uuidlib.uuid4()
        migration_uuid = str(uuidlib.uuid4())
        migration = None
        if kind != admission.COLD:
            flavor_id = (instance['flavor'].get('id') if kind ==
                         admission.LIVE else
                         instance['flavor'].get('flavorid', ''))
            migration = {
                'uuid': migration_uuid,
                'migration_type': (states.LIVE_MIGRATION if kind ==
                                   admission.LIVE else states.EVACUATION),
                'status': states.M_ACCEPTED,
                'source_compute': instance['host'],
                'source_node': instance['node'],
                'old_flavor_id': str(flavor_id),
                'new_flavor_id': str(flavor_id),
                'user_id': ctxt.user_id, 'project_id': ctxt.project_id}
        try:
            db_api.move_start(instance['uuid'], task_state, vm_states,
                              action, ctxt.request_id, ctxt.user_id,
                              ctxt.project_id, migration=migration,
                              expected_host=drain['host'])
        except exception.NovaMovesException as exc:
            LOG.info('Host drain %s: %s not started yet: %s', drain['uuid'],
                     instance['uuid'], exc)
            return None
        db_api.drain_server_update(
            drain['uuid'], instance['uuid'],
            {'state': d.MOVING, 'action': kind,
             'migration_uuid': migration_uuid,
             'attempts': server['attempts'] + 1, 'reason': None},
            expected_state=d.PENDING)
        kwargs = {'host': None, 'force': False,
                  'target_hosts': drain['target_hosts']}
        if kind == admission.LIVE:
            kwargs['block_migration'] = 'auto'
        elif kind == admission.EVACUATE:
            kwargs['stop_after'] = instance['vm_state'] == states.STOPPED
        else:
            kwargs['flavor'] = None
        # Through the gate, in the gate's pool: a pass never waits for a
        # scheduler or a pre-check.
        self.gate.submit(self.start_move, kind, ctxt, instance['uuid'],
                         migration_uuid, kwargs)
        return True

    # -- moving -> done / pending / failed --------------------------------
    def _done(self, drain, server, reason=None, expected=d.MOVING):
        db_api.drain_server_update(drain['uuid'], server['instance_uuid'],
                                   {'state': d.DONE, 'reason': reason},
                                   expected_state=expected)

    def _follow(self, ctxt, drain, server):
        try:
            instance = db_api.instance_get(server['instance_uuid'])
        except exception.InstanceNotFound:
            return self._done(drain, server, 'deleted')
        try:
            migration = db_api.migration_get(server['migration_uuid'])
        except exception.MigrationNotFound:
            migration = None
        if migration is None:
            # A cold move whose conductor has not made its migration yet,
            # or died before it did (the sweep clears the task_state).
            if instance['task_state'] is None:
                return self._retry_or_fail(drain, server, instance)
            return None
        status = migration['status']
        kind = server['action']
        if status in SUCCESS[kind]:
            return self._done(drain, server)
        if kind == admission.COLD and status == states.M_FINISHED:
            return self._confirm(ctxt, drain, migration)
        if status in FAILURE:
            return self._retry_or_fail(drain, server, instance)
        return None

    def _confirm(self, ctxt, drain, migration):
        """The drain wants the server off the host: confirm its cold
        migration as a user would (the source drops its copy)."""
        try:
            # The one start of a confirm (as the API's), with the facts
            # its cast carries.
            migration, facts = db_api.settle_start(
                'confirm_resize', migration_uuid=migration['uuid'])
        except exception.Conflict:
            return  # confirmed or reverted by someone else meanwhile
        self.compute_rpcapi.confirm_resize(
            ctxt, migration['source_compute'], migration['instance_uuid'],
            migration['uuid'], confirm=facts)

    def _retry_or_fail(self, drain, server, instance):
        fault = db_api.instance_fault_get_latest(instance['uuid'])
        reason = (fault or {}).get('message') or 'move failed'
        if instance['host'] != drain['host'] and not instance['task_state']:
            return self._done(drain, server)
        if instance['task_state']:
            return None  # still rolling back
        if server['attempts'] < CONF.conductor.drain_max_attempts and \
                instance['vm_state'] != states.ERROR and \
                drain['status'] == d.RUNNING:
            LOG.info('Host drain %s: retrying %s (%s)', drain['uuid'],
                     instance['uuid'], reason)
            db_api.drain_server_update(
                drain['uuid'], instance['uuid'],
                {'state': d.PENDING, 'reason': reason},
                expected_state=d.MOVING)
            return None
        return self._fail(drain, server, reason, expected=d.MOVING)
