"""nova_moves.kombu_autoretry: kombu's Connection.autoretry without a
class per call, with kombu's behaviour (the result and the channel it
ran on, a reconnect's new channel used for the retry), installed only
over the kombu function it was copied from."""
import gc
from unittest import mock

import kombu
import testtools

from nova_moves import kombu_autoretry


class AutoretryTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.conn = kombu.Connection('memory://')
        self.addCleanup(self.conn.release)

    def test_the_pinned_kombu_is_the_known_one(self):
        # Fails when a kombu upgrade changes autoretry: read its new
        # version and the copy in nova_moves/kombu_autoretry.py again.
        self.assertTrue(kombu_autoretry.known())

    def test_install_replaces_autoretry(self):
        self.addCleanup(setattr, kombu.Connection, 'autoretry',
                        kombu.Connection.autoretry)
        self.assertTrue(kombu_autoretry.install())
        self.assertIs(kombu_autoretry.autoretry, kombu.Connection.autoretry)
        self.assertTrue(kombu_autoretry.install())

    def test_not_installed_over_an_unknown_kombu(self):
        self.addCleanup(setattr, kombu.Connection, 'autoretry',
                        kombu.Connection.autoretry)
        # As kombu has it (a transport built earlier installed ours).
        kombu.Connection.autoretry = kombu_autoretry._ORIGINAL
        with mock.patch.object(kombu_autoretry, 'known', return_value=False):
            self.assertFalse(kombu_autoretry.install())

    def test_result_and_channel(self):
        channel = object()

        def publish(body, channel=None):
            return body, channel
        ret, used = kombu_autoretry.autoretry(
            self.conn, publish, channel=channel)('hello')
        self.assertEqual(('hello', channel), ret)
        self.assertIs(channel, used)

    def test_a_reconnect_retries_on_the_new_channel(self):
        old, seen = object(), []

        def publish(channel=None):
            seen.append(channel)
            if len(seen) == 1:
                raise OSError('gone')
            return 'sent'
        revived = []
        errors = self.conn.recoverable_connection_errors
        with mock.patch.object(self.conn, 'recoverable_connection_errors',
                               errors + (OSError,)):
            ret, used = kombu_autoretry.autoretry(
                self.conn, publish, channel=old, max_retries=2,
                on_revive=revived.append)()
        self.assertEqual('sent', ret)
        self.assertIs(old, seen[0])
        self.assertIsNot(old, seen[1])
        self.assertIs(seen[1], used)
        self.assertEqual([used], revived)

    def test_no_channel_is_kombus_own_path(self):
        with mock.patch.object(kombu_autoretry, '_ORIGINAL',
                               return_value='kombu') as original:
            self.assertEqual('kombu', kombu_autoretry.autoretry(
                self.conn, len, max_retries=1))
        original.assert_called_once_with(self.conn, len, channel=None,
                                         max_retries=1)

    def test_no_garbage_for_the_collector(self):
        channel = object()

        def publish(channel=None):
            return None
        gc.collect()
        gc.disable()
        self.addCleanup(gc.enable)
        for _ in range(50):
            kombu_autoretry.autoretry(self.conn, publish, channel=channel)()
        # kombu's own builds a class (a reference cycle) per call.
        self.assertEqual(0, gc.collect())
