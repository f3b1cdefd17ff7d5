"""A boot whose instance action cannot be written (the database out of
connections between the server's row and its action) leaves no server
behind: before, it waited in BUILD/scheduling for a build never sent."""
from nova_moves.api import common
from tests.fixtures import inprocess


class CreateHalfMadeTest(inprocess.TestCase):

    def test_no_server_left_when_the_action_fails(self):
        flavor = self.flavor()

        def unavailable(instance, action):
            raise RuntimeError('database out of connections')
        self.patch(common, 'record_action', unavailable)
        response = self.admin.post('/servers', {'server': {
            'name': 'vm', 'flavorRef': flavor['id'], 'imageRef': 'fake',
            'networks': 'none'}}, expect=None)
        self.assertGreaterEqual(response.status_code, 500)
        self.assertEqual([], self.admin.get(
            '/servers/detail', expect=200).json()['servers'])
