"""Microversion negotiation: headers, latest, bounds, comparisons."""
import testtools

from nova_moves.api import microversion
from nova_moves import exception


class MicroversionTest(testtools.TestCase):

    def parse(self, headers):
        return str(microversion.from_headers(headers))

    def test_default_is_the_minimum(self):
        self.assertEqual('2.1', self.parse({}))

    def test_new_and_legacy_headers(self):
        self.assertEqual('2.60', self.parse(
            {'OpenStack-API-Version': 'compute 2.60'}))
        self.assertEqual('2.53', self.parse(
            {'X-OpenStack-Nova-API-Version': '2.53'}))
        # The new header wins; other services' entries are ignored.
        self.assertEqual('2.11', self.parse(
            {'OpenStack-API-Version': 'volume 3.5, compute 2.11',
             'X-OpenStack-Nova-API-Version': '2.90'}))
        self.assertEqual('2.90', self.parse(
            {'OpenStack-API-Version': 'volume 3.5',
             'X-OpenStack-Nova-API-Version': '2.90'}))

    def test_latest(self):
        self.assertEqual(microversion.MAX_VERSION, self.parse(
            {'OpenStack-API-Version': 'compute latest'}))
        self.assertEqual(microversion.MAX_VERSION, self.parse(
            {'X-OpenStack-Nova-API-Version': 'LATEST'}))

    def test_out_of_range_is_406(self):
        for text in ('2.105', '3.0', '2.0', '1.1'):
            exc = self.assertRaises(
                microversion.NotAcceptableVersion, microversion.from_headers,
                {'OpenStack-API-Version': 'compute %s' % text})
            self.assertEqual(406, exc.code)
            self.assertIn('2.104', exc.message)

    def test_malformed_is_400(self):
        for text in ('2.x', '2', '2.01', 'v2.1', '2.1.1', ''):
            exc = self.assertRaises(
                exception.Invalid, microversion.APIVersion, text)
            self.assertEqual(400, exc.code)

    def test_comparisons_are_numeric(self):
        version = microversion.APIVersion('2.9')
        self.assertTrue(version < '2.10')
        self.assertTrue(version >= '2.9')
        self.assertTrue(microversion.APIVersion('2.100') > '2.95')
        self.assertEqual(microversion.APIVersion('2.34'), '2.34')
        self.assertEqual(len({microversion.APIVersion('2.1'),
                              microversion.APIVersion('2.1')}), 1)

    def test_history_has_one_line_per_version(self):
        versions = [line.split()[0] for line in
                    microversion.HISTORY.strip().splitlines()]
        self.assertEqual(len(versions), len(set(versions)))
        self.assertEqual(microversion.MAX_VERSION, versions[-1])
        parsed = [microversion.APIVersion(v) for v in versions]
        self.assertEqual(sorted(parsed), parsed)
