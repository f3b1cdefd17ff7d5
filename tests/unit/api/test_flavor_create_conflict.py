"""A flavor that already exists (by id or name) is Nova's 409, never a
500."""
from tests.unit.api import test_flavor_extras as base


class FlavorConflictTest(base._Base):

    def test_duplicate_id_and_name_are_409(self):
        for body in ({'name': 'other', 'id': 'f1'}, {'name': 'f1'}):
            body.update(ram=64, vcpus=1, disk=1)
            reply = self.call('post', '/flavors', 409,
                              json={'flavor': body})
            self.assertIn('already exists', reply['conflictingRequest'][
                'message'])
        self.assertEqual(1, len(self.call('get', '/flavors', 200)[
            'flavors']))
