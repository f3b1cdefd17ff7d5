"""harness run --endpoint/--attach: keystoneauth credentials, noauth only
when asked, a clear refusal otherwise."""
import os

import fixtures
import testtools

from nova_moves.harness import cli


class AttachAuthTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        for key in list(os.environ):
            if key.startswith('OS_'):
                self.useFixture(fixtures.EnvironmentVariable(key))

    def parse(self, *argv):
        return cli._parser().parse_args(['run', 'quickstart'] + list(argv))

    def test_own_stack_needs_no_credentials(self):
        args = self.parse()
        self.assertIsNone(cli._attach_auth(args))
        self.assertIsNone(args.endpoint)

    def test_endpoint_without_credentials_is_refused(self):
        args = self.parse('--endpoint', 'http://127.0.0.1:8774/v2.1')
        self.assertIn('No credentials', cli._attach_auth(args))
        self.assertEqual(2, cli.main(['run', 'quickstart', '--endpoint',
                                      'http://127.0.0.1:8774/v2.1']))

    def test_noauth_when_asked(self):
        args = self.parse('--endpoint', 'http://127.0.0.1:8774/v2.1/',
                          '--os-auth-type', 'none', '--token', 'u:p')
        self.assertIsNone(cli._attach_auth(args))
        self.assertEqual('http://127.0.0.1:8774/v2.1', args.endpoint)
        self.assertEqual('u:p', args.token())
