"""The compute's RPC surface is its endpoints' public methods
(oslo.messaging dispatches a message to the first endpoint having the
method's name and a compatible target version; never a name starting
with ``_``). One endpoint class per move kind must serve exactly what
compute/rpcapi.py sends, each name from one endpoint, at the version the
client sends."""
import inspect

import oslo_messaging as messaging
import testtools

from nova_moves.compute import cross_cell_rpcapi
from nova_moves.compute import manager as compute_manager
from nova_moves.compute import rpcapi as compute_rpcapi
from nova_moves import conf

CONF = conf.CONF


def _public_methods(cls):
    return {name for name, _ in inspect.getmembers(cls, inspect.isfunction)
            if not name.startswith('_')}


# Served though no client sends it (as before the split): the heartbeat's
# hook, a control of nova_moves/moves/evacuate.py.
NOT_SENT = {'before_reporting_up'}


def _sent_by_the_client():
    """The methods compute/rpcapi.py sends: its public methods, less its
    local capability checks (can_*); and the cross-cell resize's, which
    the conductor sends with its own client (compute/cross_cell_rpcapi)."""
    return {name for name in _public_methods(compute_rpcapi.ComputeAPI)
            if not name.startswith('can_')} | _public_methods(
        cross_cell_rpcapi.CrossCellComputeAPI)


class EndpointsTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        CONF([], project='nova_moves', default_config_files=[])
        self.endpoints = compute_manager.ComputeManager('h1').endpoints()

    def test_served_names_are_what_the_client_sends(self):
        served = set()
        for endpoint in self.endpoints:
            served |= _public_methods(type(endpoint))
        self.assertEqual(_sent_by_the_client() | NOT_SENT, served)

    def test_no_name_is_served_by_two_endpoints(self):
        seen = {}
        for endpoint in self.endpoints:
            for name in _public_methods(type(endpoint)):
                self.assertNotIn(name, seen, '%s served by %s and %s' % (
                    name, seen.get(name), type(endpoint).__name__))
                seen[name] = type(endpoint).__name__

    def test_one_class_per_kind_each_at_the_served_version(self):
        classes = [type(e) for e in self.endpoints]
        self.assertEqual(len(classes), len(set(classes)))
        for cls in classes:
            # Its own target, not one inherited from a shared base.
            self.assertIn('target', vars(cls), cls.__name__)
            self.assertIsInstance(cls.target, messaging.Target)
            self.assertEqual(compute_rpcapi.ComputeAPI.VERSION,
                             cls.target.version, cls.__name__)

    def test_the_manager_is_not_an_endpoint(self):
        # Its process hooks (init_host, report, ...) are not RPC methods.
        self.assertFalse(any(isinstance(e, compute_manager.ComputeManager)
                             for e in self.endpoints))

    def test_endpoints_share_one_host_and_in_flight_tracker(self):
        trackers = {id(e.in_flight) for e in self.endpoints}
        self.assertEqual(1, len(trackers))
        self.assertEqual({'h1'}, {e.host for e in self.endpoints})
