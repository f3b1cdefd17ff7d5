"""What the API's move actions read of a server (instance_get_brief):
its INSTANCE_BRIEF columns, as instance_get has them, and a deleted
server not found; a move's start from the API reads nothing back."""
import testtools

from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import states
from tests.unit import fixtures as nm_fixtures


class BriefReadTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.Database())
        self.uuid = db_api.instance_create({
            'display_name': 'vm', 'project_id': 'p', 'user_id': 'u',
            'host': 'h1', 'node': 'h1', 'vm_state': states.ACTIVE,
            'flavor': {'flavorid': 's', 'vcpus': 1}})['uuid']

    def test_brief_is_the_rows_columns(self):
        whole = db_api.instance_get(self.uuid)
        brief = db_api.instance_get_brief(self.uuid)
        self.assertEqual(set(db_api.INSTANCE_BRIEF), set(brief))
        self.assertEqual({k: whole[k] for k in db_api.INSTANCE_BRIEF},
                         brief)

    def test_deleted_is_not_found(self):
        db_api.instance_update(self.uuid, {'deleted': 1})
        self.assertRaises(exception.InstanceNotFound,
                          db_api.instance_get_brief, self.uuid)
        self.assertRaises(exception.InstanceNotFound,
                          db_api.instance_get_brief, 'no-such-server')

    def test_move_start_without_read_back(self):
        rows = db_api.move_start(self.uuid, states.RESIZE_PREP,
                                 [states.ACTIVE], 'migrate', 'req-1', 'u',
                                 'p', read_back=False)
        self.assertEqual({'instance': None, 'migration': None}, rows)
        self.assertEqual(states.RESIZE_PREP,
                         db_api.instance_get(self.uuid)['task_state'])
