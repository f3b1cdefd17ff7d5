"""JSON-schema validation: every bad body is a 400 naming the field."""
import testtools

from nova_moves.api import flavors
from nova_moves.api import microversion
from nova_moves.api import servers
from nova_moves.api import services
from nova_moves.api import validation
from nova_moves import exception


class ValidationTest(testtools.TestCase):

    def message(self, body, schema):
        exc = self.assertRaises(exception.ValidationError,
                                validation.validate, body, schema)
        self.assertEqual(400, exc.code)
        return exc.message

    def test_missing_field_is_named(self):
        self.assertEqual("'flavorRef' is a required property", self.message(
            {'server': {'name': 'x'}}, servers.CREATE_SCHEMA))

    def test_unknown_field_is_named(self):
        message = self.message({'server': {'name': 'x', 'flavorRef': '1',
                                           'bogus': 1}},
                               servers.CREATE_SCHEMA)
        self.assertIn('bogus', message)
        self.assertIn('Additional properties are not allowed', message)

    def test_bad_value_names_the_path(self):
        message = self.message({'server': {'name': '', 'flavorRef': '1'}},
                               servers.CREATE_SCHEMA)
        self.assertIn("field 'server/name'", message)
        message = self.message({'status': 'sleeping'},
                               services.UPDATE_SCHEMA)
        self.assertIn("field 'status'", message)
        self.assertIn('sleeping', message)

    def test_empty_and_non_object_bodies(self):
        self.assertIn('JSON object', self.message(None,
                                                  servers.CREATE_SCHEMA))
        self.assertIn('is not of type', self.message([], {'type': 'object'}))

    def test_schema_per_microversion(self):
        body = {'flavor': {'name': 'f', 'ram': 1, 'vcpus': 1, 'disk': 0,
                           'description': 'd'}}
        old = flavors._create_schema(microversion.APIVersion('2.54'))
        new = flavors._create_schema(microversion.APIVersion('2.55'))
        self.assertIn('description', self.message(body, old))
        self.assertEqual(body, validation.validate(body, new))

    def test_booleans_accept_nova_spellings(self):
        schema = {'type': 'object', 'properties': {
            'b': validation.BOOLEAN}}
        for value in (True, 'true', 'Yes', '1', 'off', False):
            validation.validate({'b': value}, schema)
        self.assertIn("field 'b'", self.message({'b': 'maybe'}, schema))
        self.assertTrue(validation.to_bool('ON'))
        self.assertFalse(validation.to_bool('no'))
