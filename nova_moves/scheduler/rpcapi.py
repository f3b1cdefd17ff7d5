"""Client of the scheduler. Every method is a blocking call: the caller
needs the answer to go on."""
import oslo_messaging as messaging

from nova_moves import conf
from nova_moves import rpc

TOPIC = 'scheduler'


class SchedulerAPI:
    """1.0 - select_destinations, check_destination (a request_spec with
          consumer_generation makes the claim fail once the move it is
          for has been rolled back; an older scheduler ignores it)
    1.1 - plan_destinations (where each server would go now, nothing
          claimed: host drain plans)
    1.2 - the scheduler also takes calls on 'scheduler_calls' (classic
          queues: nova_moves/rpc.py CALLS_SUFFIX)

    [upgrade_levels] scheduler caps what is sent (rolling upgrades).
    """
    VERSION = '1.2'
    # From this version on, calls go to the calls queues (rpc.py).
    CALLS_VERSION = '1.2'

    def __init__(self):
        # Messages default to 1.0 (what every scheduler since the first
        # release handles); a newer method prepares its own version, so a
        # [upgrade_levels] scheduler = 1.0 cap still lets 1.0 calls through.
        self.client = rpc.get_client(
            messaging.Target(topic=TOPIC, version='1.0'),
            version_cap=conf.CONF.upgrade_levels.scheduler,
            calls_version=self.CALLS_VERSION)

    def select_destinations(self, ctxt, request_spec, instance_uuids,
                            return_alternates=True):
        """Claim a host for each instance; returns one list of selections
        per instance, the claimed host first, unclaimed alternates after.
        A selection is {host, nodename, compute_node_uuid,
        allocation_request}. Raises NoValidHost."""
        return self.client.prepare().call(
            ctxt, 'select_destinations', request_spec=request_spec,
            instance_uuids=instance_uuids,
            return_alternates=return_alternates)

    def can_plan(self):
        return self.client.can_send_version('1.1')

    def plan_destinations(self, ctxt, request_specs):
        """Where the scheduler would put each server now, in order,
        claiming nothing: {instance_uuid: {'host': host or None,
        'reasons': [str]}}. Servers earlier in the list count in their
        planned host for the server group filters of the later ones."""
        return self.client.prepare(version='1.1').call(
            ctxt, 'plan_destinations', request_specs=request_specs)

    def check_destination(self, ctxt, request_spec, host):
        """Would ``host`` pass every filter and fit the request (Nova
        blueprint "Check the destination host when migrating")? Returns
        {'valid': bool, 'reasons': [str]}; changes nothing."""
        return self.client.prepare().call(
            ctxt, 'check_destination', request_spec=request_spec, host=host)
