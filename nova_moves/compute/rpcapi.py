"""Client of the compute agents, addressed by host. Casts unless the
caller must know the outcome before going on (the live migration checks
and the two live migration steps on the destination)."""
import oslo_messaging as messaging

from nova_moves import conf
from nova_moves import exception
from nova_moves import rpc

TOPIC = 'compute'
# Seconds the API waits for a host to show a server's console or
# diagnostics: a user is waiting on the answer, and a host that does not
# answer in this long is down or stuck, not slow.
SHOW_TIMEOUT = 30


class ComputeAPI:
    """1.0 - boot, resize/cold migrate, live migration, evacuate, hooks
    1.1 - live_migration_status: does the source still run a live
          migration (the stuck-move sweep asks before deciding)
    1.2 - start_instance, stop_instance (os-start / os-stop)
    1.3 - move_step_status: does this host still run a step of the move
          (any kind; the sweep asks before re-sending or rolling back)
    1.4 - pause_instance, unpause_instance, suspend_instance,
          resume_instance, reboot_instance, rebuild_instance_same_host,
          shelve_instance, shelve_offload_instance, unshelve_instance
          (the lifecycle actions, compute/lifecycle.py and shelve.py)
    1.5 - prep_resize takes ``source``, resize_instance ``prep`` and
          finish_resize ``resized``: a cold move's steps chain, the next
          host writing the previous step's end (its event, its status) in
          its own step's one conductor call (one call per step, not two)
    1.6 - the live migration's steps chain: check_can_live_migrate_*
          take ``report_events`` (the checks' events come back as values
          and the conductor records them with its own step), the
          destination's check ``facts`` (the server, its host's memory),
          live_migration ``chained``, pre_live_migration ``source`` and
          ``progress`` (the destination writes the source's start with
          its own end), post_live_migration_at_destination ``source``
          and ``transferred`` (the transfer's end written with its
          start): the source makes no conductor call on the way
    1.7 - finish_revert_resize takes ``reverted``: the revert chains like
          the forward steps, the source writing revert_resize's end (its
          event, the destination claim dropped) in its step's first call
    1.8 - confirm_resize takes ``confirm`` ({dest, vm_state}: what the
          caller read when it set the migration confirming): the source
          destroys only the copy the move left behind (the hypervisor's
          mark, not a conductor call) and confirms in one call;
          revert_resize takes ``revert`` ({source, source_node, flavor,
          vm_state}): the destination destroys only the copy spawned for
          the move and makes no call, and finish_revert_resize (its
          ``reverted`` carrying ``revert``) writes both steps' ends in
          its one call
    1.9 - export_disk: the destination of a cold move asks the source
          (a call) to serve the disk the move left there, for a driver
          whose disks travel (QEMU: over NBD); the fake's do not;
          get_console_output, get_diagnostics: what a server shows, a
          short call to its host (the API's os-getConsoleOutput and
          GET /servers/{id}/diagnostics, compute/console.py)
    1.10 - rescue_instance (``rescue_image_ref``: None for the server's
          own image), unrescue_instance (compute/lifecycle.py)
    1.11 - the compute also takes calls on 'compute_calls' (classic
          queues: nova_moves/rpc.py CALLS_SUFFIX); nothing else changed
    1.12 - the cross-cell resize's hypervisor steps (calls from the
          conductor that runs the flow: compute/cross_cell.py, the
          client in compute/cross_cell_rpcapi.py)

    [upgrade_levels] compute caps what is sent (rolling upgrades). The
    casts that carry a move step are published with the mandatory flag
    and a bounded retry: a step that cannot be delivered is an error the
    sender sees (and the stuck-move sweep re-sends it), not silence.
    """
    VERSION = '1.12'
    # From this version on, calls go to the calls queues (rpc.py).
    CALLS_VERSION = '1.11'

    def __init__(self):
        target = messaging.Target(topic=TOPIC, version='1.0')
        cap = conf.CONF.upgrade_levels.compute
        self.client = rpc.get_client(target, version_cap=cap,
                                     calls_version=self.CALLS_VERSION)
        self.step_client = rpc.get_client(target, version_cap=cap,
                                          mandatory=True)

    def _cast(self, ctxt, host, method, **kwargs):
        self.client.prepare(server=host).cast(ctxt, method, **kwargs)

    def _action(self, ctxt, host, method, version=None, **kwargs):
        """Cast a server action whose sender undoes its claim when the
        cast fails (the API's lifecycle, power and rescue actions, a live
        migration's abort and force-complete): an unreachable broker is
        waited for as a move step's cast waits (rpc.cast_waiting), not
        forever, so a cell's broker outage does not hold the API's
        request threads; the API then answers 503."""
        options = {'version': version} if version else {}
        rpc.cast_waiting(self.client.prepare(
            server=host, retry=conf.CONF.move_step_cast_retries,
            **options), ctxt, method, **kwargs)

    def _step(self, ctxt, host, method, version=None, **kwargs):
        """Cast a move step. An unreachable broker (killed, restarting)
        is waited for up to [DEFAULT] move_step_cast_wait: a step given
        up on fails its move (the conductor's task rolls it back), and a
        broker restart takes longer than the transport's own retries. A
        step no queue takes (MessageUndeliverable) fails at once."""
        options = {'version': version} if version else {}
        client = self.step_client.prepare(
            server=host, retry=conf.CONF.move_step_cast_retries, **options)
        return rpc.cast_waiting(client, ctxt, method, **kwargs)

    def can_chain_steps(self):
        """1.5: may the cold move's steps carry the previous step's end
        to the next host (every compute upgraded)?"""
        return self.client.can_send_version('1.5')

    def can_chain_revert(self):
        """1.7: may revert_resize hand its end to finish_revert_resize?
        Capped below it, the destination writes its end itself."""
        return self.client.can_send_version('1.7')

    def can_chain_live_steps(self):
        """1.6: may a live migration's steps chain (every compute
        upgraded)?"""
        return self.client.can_send_version('1.6')

    def _call(self, ctxt, host, method, timeout=None, **kwargs):
        return self.client.prepare(server=host, timeout=timeout).call(
            ctxt, method, **kwargs)

    # -- boot and delete ---------------------------------------------------
    def build_and_run_instance(self, ctxt, host, instance_uuid, request_spec,
                               alternates):
        self._cast(ctxt, host, 'build_and_run_instance',
                   instance_uuid=instance_uuid, request_spec=request_spec,
                   alternates=alternates)

    def terminate_instance(self, ctxt, host, instance_uuid):
        self._cast(ctxt, host, 'terminate_instance',
                   instance_uuid=instance_uuid)

    # -- resize and cold migrate -------------------------------------------
    def prep_resize(self, ctxt, host, instance_uuid, migration_uuid, flavor,
                    request_spec, alternates, source=None):
        """To the destination: claim and get ready; on failure it asks the
        conductor (a call) to try the next alternate. 1.5: ``source``
        (the source host) lets it cast resize_instance without a call."""
        extra = {}
        if source and self.can_chain_steps():
            extra = {'version': '1.5', 'source': source}
        self._step(ctxt, host, 'prep_resize', instance_uuid=instance_uuid,
                   migration_uuid=migration_uuid, flavor=flavor,
                   request_spec=request_spec, alternates=alternates, **extra)

    def resize_instance(self, ctxt, host, instance_uuid, migration_uuid,
                        prep=None):
        """To the source: power off and send the disks. 1.5: ``prep``
        ({dest, start_time}) is the destination's prep_resize, whose end
        the source records in its step's transaction."""
        extra = {'version': '1.5', 'prep': prep} if prep else {}
        self._step(ctxt, host, 'resize_instance', instance_uuid=instance_uuid,
                   migration_uuid=migration_uuid, **extra)

    def finish_resize(self, ctxt, host, instance_uuid, migration_uuid,
                      resized=None):
        """To the destination: start the server there -> VERIFY_RESIZE.
        1.5: ``resized`` ({source}): the source did not write its step's
        end; the destination writes it in its step's first transaction."""
        extra = {'version': '1.5', 'resized': resized} if resized else {}
        self._step(ctxt, host, 'finish_resize', instance_uuid=instance_uuid,
                   migration_uuid=migration_uuid, **extra)

    def export_disk(self, ctxt, host, instance_uuid, migration_uuid):
        """1.9, a call to the source: where to pull the disk from (None:
        no copy of this move there). A source capped below 1.9 serves
        none: the move fails and is rolled back."""
        if not self.client.can_send_version('1.9'):
            return None
        return self.client.prepare(server=host, version='1.9').call(
            ctxt, 'export_disk', instance_uuid=instance_uuid,
            migration_uuid=migration_uuid)

    def confirm_resize(self, ctxt, host, instance_uuid, migration_uuid,
                       confirm=None):
        """To the source: drop the old copy and the migration's claim.
        1.8: ``confirm`` ({dest, vm_state}) lets it do so in one
        conductor call."""
        extra = ({'version': '1.8', 'confirm': confirm}
                 if confirm and self.client.can_send_version('1.8') else {})
        self._step(ctxt, host, 'confirm_resize', instance_uuid=instance_uuid,
                   migration_uuid=migration_uuid, **extra)

    def revert_resize(self, ctxt, host, instance_uuid, migration_uuid,
                      revert=None):
        """To the destination: drop the new copy, then hand back. 1.8:
        ``revert`` lets the revert make one conductor call in all."""
        extra = ({'version': '1.8', 'revert': revert}
                 if revert and self.client.can_send_version('1.8') else {})
        self._step(ctxt, host, 'revert_resize', instance_uuid=instance_uuid,
                   migration_uuid=migration_uuid, **extra)

    def finish_revert_resize(self, ctxt, host, instance_uuid,
                             migration_uuid, reverted=None):
        """To the source: restart the old copy with the old flavor. 1.7:
        ``reverted`` ({dest}): the destination did not write
        its step's end; the source writes it in its step's first call."""
        extra = {'version': '1.8' if 'revert' in reverted else '1.7',
                 'reverted': reverted} if reverted else {}
        self._step(ctxt, host, 'finish_revert_resize',
                   instance_uuid=instance_uuid, migration_uuid=migration_uuid,
                   **extra)

    # -- live migration ------------------------------------------------------
    def _live_call(self, ctxt, host, method, chained, **kwargs):
        """A live migration call; ``chained`` (the 1.6 arguments) only
        when every compute takes them."""
        if chained and self.can_chain_live_steps():
            return self.client.prepare(server=host, version='1.6').call(
                ctxt, method, **kwargs, **chained)
        return self._call(ctxt, host, method, **kwargs)

    def check_can_live_migrate_destination(self, ctxt, host, instance_uuid,
                                           block_migration, migration_uuid,
                                           facts=None):
        """Call to the destination, which calls the source's check. 1.6:
        the two checks' events come back under '_events' in the answer
        (the caller records them in its next step's transaction), and
        ``facts`` ({instance, memory_mb_used}: what the check reads from
        the database) go with the call."""
        chained = {'report_events': True}
        if facts is not None:
            chained['facts'] = facts
        return self._live_call(
            ctxt, host, 'check_can_live_migrate_destination',
            chained, instance_uuid=instance_uuid,
            block_migration=block_migration, migration_uuid=migration_uuid)

    def check_can_live_migrate_source(self, ctxt, host, instance_uuid,
                                      dest_check_data, report_events=False):
        return self._live_call(
            ctxt, host, 'check_can_live_migrate_source',
            {'report_events': True} if report_events else None,
            instance_uuid=instance_uuid, dest_check_data=dest_check_data)

    def live_migration(self, ctxt, host, instance_uuid, dest, migration_uuid,
                       migrate_data):
        """Cast to the source: run the transfer. 1.6: ``chained``, the
        source makes no conductor call on the way."""
        extra = {}
        if self.can_chain_live_steps():
            extra = {'version': '1.6', 'chained': True}
        self._step(ctxt, host, 'live_migration', instance_uuid=instance_uuid,
                   dest=dest, migration_uuid=migration_uuid,
                   migrate_data=migrate_data, **extra)

    def pre_live_migration(self, ctxt, host, instance_uuid, migration_uuid,
                           migrate_data, source=None, progress=None):
        """1.6: ``source`` and ``progress`` (the transfer's totals): the
        destination writes the source's start (running) with its end."""
        return self._live_call(
            ctxt, host, 'pre_live_migration',
            source and {'source': source, 'progress': progress},
            instance_uuid=instance_uuid, migration_uuid=migration_uuid,
            migrate_data=migrate_data)

    def post_live_migration_at_destination(self, ctxt, host, instance_uuid,
                                           migration_uuid, source=None,
                                           transferred=None):
        """1.6: ``source`` and ``transferred`` (the final progress): the
        destination writes the transfer's end with its start, and closes
        the source's event with its own end."""
        return self._live_call(
            ctxt, host, 'post_live_migration_at_destination',
            source and {'source': source, 'transferred': transferred},
            instance_uuid=instance_uuid, migration_uuid=migration_uuid)

    def rollback_live_migration_at_destination(self, ctxt, host,
                                               instance_uuid, migration_uuid):
        self._cast(ctxt, host, 'rollback_live_migration_at_destination',
                   instance_uuid=instance_uuid, migration_uuid=migration_uuid)

    def live_migration_abort(self, ctxt, host, instance_uuid, migration_id):
        self._action(ctxt, host, 'live_migration_abort',
                   instance_uuid=instance_uuid, migration_id=migration_id)

    def live_migration_force_complete(self, ctxt, host, instance_uuid,
                                      migration_id):
        self._action(ctxt, host, 'live_migration_force_complete',
                   instance_uuid=instance_uuid, migration_id=migration_id)

    # -- evacuate -----------------------------------------------------------
    def rebuild_instance(self, ctxt, host, instance_uuid, migration_uuid,
                         allocations, recreate=True, stop_after=False):
        """To the destination of an evacuation: claim and rebuild there."""
        self._step(ctxt, host, 'rebuild_instance',
                   instance_uuid=instance_uuid, migration_uuid=migration_uuid,
                   allocations=allocations, recreate=recreate,
                   stop_after=stop_after)

    # -- test hook ------------------------------------------------------------
    def set_fault_injection(self, ctxt, host, fail_operations,
                            operation_seconds=None):
        """Admin test hook: which fake hypervisor operations raise on this
        host, and optional new simulated durations."""
        return self._call(ctxt, host, 'set_fault_injection',
                          fail_operations=fail_operations,
                          operation_seconds=operation_seconds)

    # -- 1.2 ------------------------------------------------------------------
    def can_power(self):
        """False while [upgrade_levels] compute caps below 1.2."""
        return self.client.can_send_version('1.2')

    def start_instance(self, ctxt, host, instance_uuid):
        self._action(ctxt, host, 'start_instance', version='1.2',
                     instance_uuid=instance_uuid)

    def stop_instance(self, ctxt, host, instance_uuid):
        self._action(ctxt, host, 'stop_instance', version='1.2',
                     instance_uuid=instance_uuid)

    # -- 1.1, 1.3: asked by the stuck-move sweep ------------------------------
    def _ask(self, ctxt, host, version, method, timeout, **kwargs):
        """A short call: its answer, or None when the host cannot be
        asked (capped below ``version``, or no answer in time)."""
        if not self.client.can_send_version(version):
            return None
        try:
            return self.client.prepare(
                server=host, version=version, timeout=timeout).call(
                    ctxt, method, **kwargs)
        except messaging.MessagingTimeout:
            return None

    def live_migration_status(self, ctxt, host, migration_uuid, timeout=5):
        """Ask the source (a short call) whether it is running the live
        migration: True / False, or None when it cannot be asked (capped
        below 1.1, or no answer)."""
        return self._ask(ctxt, host, '1.1', 'live_migration_status',
                         timeout, migration_uuid=migration_uuid)

    def move_step_status(self, ctxt, host, migration_uuid, timeout=5):
        """Ask ``host`` (a short call) whether it still runs a step of the
        move: True / False, or None when it cannot be asked (capped below
        1.3, or no answer)."""
        return self._ask(ctxt, host, '1.3', 'move_step_status', timeout,
                         migration_uuid=migration_uuid)

    # -- 1.4: the lifecycle actions -------------------------------------------
    def can_lifecycle(self):
        """False while [upgrade_levels] compute caps below 1.4."""
        return self.client.can_send_version('1.4')

    def _cast_14(self, ctxt, host, method, **kwargs):
        self._action(ctxt, host, method, version='1.4', **kwargs)

    def pause_instance(self, ctxt, host, instance_uuid):
        self._cast_14(ctxt, host, 'pause_instance',
                      instance_uuid=instance_uuid)

    def unpause_instance(self, ctxt, host, instance_uuid):
        self._cast_14(ctxt, host, 'unpause_instance',
                      instance_uuid=instance_uuid)

    def suspend_instance(self, ctxt, host, instance_uuid):
        self._cast_14(ctxt, host, 'suspend_instance',
                      instance_uuid=instance_uuid)

    def resume_instance(self, ctxt, host, instance_uuid):
        self._cast_14(ctxt, host, 'resume_instance',
                      instance_uuid=instance_uuid)

    def reboot_instance(self, ctxt, host, instance_uuid, reboot_type):
        self._cast_14(ctxt, host, 'reboot_instance',
                      instance_uuid=instance_uuid, reboot_type=reboot_type)

    def rebuild_instance_same_host(self, ctxt, host, instance_uuid,
                                   image_ref):
        self._cast_14(ctxt, host, 'rebuild_instance_same_host',
                      instance_uuid=instance_uuid, image_ref=image_ref)

    def shelve_instance(self, ctxt, host, instance_uuid):
        self._cast_14(ctxt, host, 'shelve_instance',
                      instance_uuid=instance_uuid)

    def shelve_offload_instance(self, ctxt, host, instance_uuid):
        self._cast_14(ctxt, host, 'shelve_offload_instance',
                      instance_uuid=instance_uuid)

    def unshelve_instance(self, ctxt, host, instance_uuid):
        self._cast_14(ctxt, host, 'unshelve_instance',
                      instance_uuid=instance_uuid)

    # -- 1.9: what a server shows -------------------------------------------
    def _show(self, ctxt, host, method, **kwargs):
        """A short call to ``host``; a clear error, not a hang, when the
        host is capped below 1.9 or does not answer."""
        if not self.client.can_send_version('1.9'):
            raise exception.ComputeRPCTooOld(method=method, version='1.9')
        try:
            return self.client.prepare(
                server=host, version='1.9', timeout=SHOW_TIMEOUT).call(
                    ctxt, method, **kwargs)
        except messaging.MessagingTimeout:
            raise exception.ComputeNotResponding(
                host=host, method=method, timeout=SHOW_TIMEOUT)

    def get_console_output(self, ctxt, host, instance_uuid, tail_length):
        """The serial console's last ``tail_length`` lines (None: all)."""
        return self._show(ctxt, host, 'get_console_output',
                          instance_uuid=instance_uuid,
                          tail_length=tail_length)

    def get_diagnostics(self, ctxt, host, instance_uuid):
        """Nova's 2.48 diagnostics of a running server."""
        return self._show(ctxt, host, 'get_diagnostics',
                          instance_uuid=instance_uuid)

    # -- 1.10: rescue -------------------------------------------------------
    def can_rescue(self):
        """False while [upgrade_levels] compute caps below 1.10."""
        return self.client.can_send_version('1.10')

    def rescue_instance(self, ctxt, host, instance_uuid,
                        rescue_image_ref=None):
        self._action(ctxt, host, 'rescue_instance', version='1.10',
                     instance_uuid=instance_uuid,
                     rescue_image_ref=rescue_image_ref)

    def unrescue_instance(self, ctxt, host, instance_uuid):
        self._action(ctxt, host, 'unrescue_instance', version='1.10',
                     instance_uuid=instance_uuid)
