"""The in-process compute the lifecycle tests drive: a compute manager
whose conductor is the conductor's own database proxy (what the RPC
would reach), on SQLite, with an instant fake hypervisor, and servers
on it in any state."""
import testtools

from nova_moves.compute import manager as compute_manager
from nova_moves.conductor import db_proxy
from nova_moves import context as nm_context
from nova_moves.db import api as db_api
from tests.fixtures import rpc as fake_rpc
from tests.unit.compute import served
from tests.unit import fixtures as nm_fixtures


class DirectConductor(db_proxy.ComputeDBProxy):
    """The proxy with the client's calling convention (keywords)."""

    def instance_update(self, ctxt, instance_uuid, values, **expected):
        return super().instance_update(ctxt, instance_uuid, values,
                                       expected=expected)

    def migration_get_all(self, ctxt, **filters):
        return super().migration_get_all(ctxt, filters)


class LifecycleComputeTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.Database())
        self.useFixture(nm_fixtures.FakeHosts())
        self.useFixture(fake_rpc.FakeTransport())
        nm_fixtures.compute('h1')
        self.manager = compute_manager.ComputeManager(
            'h1', conductor=DirectConductor())
        self.compute = served.Served(self.manager)
        self.ctxt = nm_context.get_admin_context()
        self.flavor = nm_fixtures.flavor()

    def server(self, vm_state, task_state, power='running'):
        """A server on h1 (its guest ``power``; None: no guest)."""
        instance = db_api.instance_create({
            'display_name': 'vm', 'user_id': 'u', 'project_id': 'p',
            'vm_state': vm_state, 'task_state': task_state, 'host': 'h1',
            'node': 'h1', 'power_state': 1, 'flavor': self.flavor,
            'image_ref': 'fake'})
        if power:
            self.compute.driver.spawn(instance['uuid'], self.flavor,
                                      power=power)
        return instance['uuid']
