"""Body schemas of resize/confirmResize/revertResize/migrate per
microversion (what OSC and novaclient send must pass)."""
import testtools

from nova_moves.api import migrate
from nova_moves.api import validation
from nova_moves import exception


def schema(name, version):
    from nova_moves.api import microversion
    return validation.schema_for(migrate.ACTIONS[name],
                                 microversion.APIVersion(version))


class SchemaTest(testtools.TestCase):

    def ok(self, name, version, value):
        validation.validate({name: value}, schema(name, version))

    def bad(self, name, version, value, word):
        exc = self.assertRaises(exception.ValidationError, validation.validate,
                                {name: value}, schema(name, version))
        self.assertIn(word, exc.message)

    def test_resize(self):
        self.ok('resize', '2.1', {'flavorRef': '2'})
        self.ok('resize', '2.95', {'flavorRef': 2,
                                   'OS-DCF:diskConfig': 'AUTO'})
        self.bad('resize', '2.1', {}, 'flavorRef')
        self.bad('resize', '2.1', {'flavorRef': '2', 'x': 1}, 'x')
        self.bad('resize', '2.1', {'flavorRef': '2',
                                   'OS-DCF:diskConfig': 'BOTH'},
                 'OS-DCF:diskConfig')

    def test_migrate_before_and_from_256(self):
        self.ok('migrate', '2.1', None)
        self.ok('migrate', '2.55', {})
        self.bad('migrate', '2.55', {'host': 'h'}, 'host')
        self.ok('migrate', '2.56', None)
        self.ok('migrate', '2.56', {'host': 'h'})
        self.ok('migrate', '2.56', {'host': None})
        self.ok('migrate', '2.56', {'host': 'h', 'force': True})
        self.ok('migrate', '2.56', {'host': 'h', 'force': None})
        self.ok('migrate', '2.95', {'host': 'h', 'check': 'true'})
        self.bad('migrate', '2.56', {'host': 'h', 'force': 'maybe'}, 'force')
        self.bad('migrate', '2.56', {'host': 'bad host!'}, 'host')
        self.bad('migrate', '2.56', {'bogus': 1}, 'bogus')

    def test_confirm_and_revert_take_nothing(self):
        for name in ('confirmResize', 'revertResize'):
            self.ok(name, '2.1', None)
            self.bad(name, '2.1', {'x': 1}, 'x')
