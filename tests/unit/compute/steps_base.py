"""What the compute step tests (test_prep_resize_step, test_chained_steps,
test_live_chain) share: a fresh SQLite database and fake hosts, a
request context, a server on h1 to move to h2, and the conductor's
compute_db endpoint object in-process."""
import oslo_messaging as messaging
import testtools

from nova_moves.conductor import db_proxy
from nova_moves import context as nm_context
from nova_moves.db import api as db_api
from nova_moves import states
from tests.unit import fixtures as nm_fixtures


class StepTestCase(testtools.TestCase):
    """``self.server``: an ACTIVE server on h1 of ``self.flavor``."""

    # The server's task_state as the test starts (None: no move yet).
    TASK_STATE = None

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.Database())
        self.useFixture(nm_fixtures.FakeHosts())
        self.ctxt = nm_context.RequestContext(user_id='u', project_id='p')
        self.flavor = nm_fixtures.flavor()
        values = {'display_name': 'vm', 'project_id': 'p', 'user_id': 'u',
                  'host': 'h1', 'node': 'h1', 'flavor': self.flavor,
                  'vm_state': states.ACTIVE, 'power_state': 1}
        if self.TASK_STATE is not None:
            values['task_state'] = self.TASK_STATE
        self.server = db_api.instance_create(values)['uuid']


class ColdStepTestCase(StepTestCase):
    """A cold migration of ``self.server`` to h2 as the conductor leaves
    it for prep_resize: its action (``self.action``) started, the
    migration (``self.migration``) pre-migrating."""

    TASK_STATE = states.RESIZE_PREP

    def setUp(self):
        super().setUp()
        self.action = db_api.action_start(self.server, 'migrate',
                                          self.ctxt.request_id, 'u', 'p')
        self.migration = db_api.migration_start(self.server, {
            'instance_uuid': self.server, 'migration_type': 'migration',
            'status': states.M_PRE_MIGRATING, 'source_compute': 'h1',
            'source_node': 'h1', 'dest_compute': 'h2', 'dest_node': 'h2',
            'old_flavor_id': '1', 'new_flavor_id': '1'}, self.flavor,
            self.flavor)

    def _events(self):
        return [(e['event'], e['result'], e['host'])
                for e in db_api.action_events_get(self.action['id'])]


class RecordingConductor:
    """The conductor's endpoint object, capped at RPC 1.3 or below it."""

    def __init__(self, whole_steps):
        self.proxy = db_proxy.ComputeDBProxy()
        self.whole_steps = whole_steps
        self.advances = []

    def can_record_whole_steps(self):
        return self.whole_steps

    def move_advance(self, ctxt, migration_id, **kwargs):
        self.advances.append(kwargs.get('event'))
        try:
            return self.proxy.move_advance(ctxt, migration_id, **kwargs)
        except messaging.ExpectedException as exc:
            # What the RPC layer would raise at the caller.
            raise exc.exc_info[1]

    def __getattr__(self, name):
        return getattr(self.proxy, name)
