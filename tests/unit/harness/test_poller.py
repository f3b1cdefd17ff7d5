"""The harness's status poller: a server's history starts with what the
request that created it said, even when it left that state before the
first poll saw it."""
import time

import testtools

from nova_moves.harness import poller as nm_poller


class _Client:
    """GET /servers/detail answering ``servers`` (one page)."""

    def __init__(self, servers):
        self.servers = servers

    def get(self, path, version=None, params=None, expect=None):
        return self

    def json(self):
        return {'servers': self.servers}


def _server(server_id, status):
    return {'id': server_id, 'status': status,
            'OS-EXT-STS:task_state': None, 'OS-EXT-SRV-ATTR:host': 'h1'}


class StatusPollerTest(testtools.TestCase):

    def test_a_build_finished_before_the_first_poll_still_starts_in_build(
            self):
        client = _Client([_server('a', 'ACTIVE')])
        poller = nm_poller.StatusPoller(client, time.monotonic())
        poller.track(['a'], status='BUILD')
        poller.poll_once()
        self.assertEqual(['BUILD', 'ACTIVE'],
                         [status for _t, status in poller.history['a']])

    def test_without_a_known_status_the_history_starts_at_the_first_poll(
            self):
        client = _Client([_server('a', 'ACTIVE')])
        poller = nm_poller.StatusPoller(client, time.monotonic())
        poller.track(['a'])
        poller.poll_once()
        poller.poll_once()
        self.assertEqual(['ACTIVE'],
                         [status for _t, status in poller.history['a']])

    def test_a_poll_that_saw_it_first_is_kept(self):
        client = _Client([_server('a', 'BUILD')])
        poller = nm_poller.StatusPoller(client, time.monotonic())
        poller.track(['a'])
        poller.poll_once()
        first = list(poller.history['a'])
        # Tracked again with a status: the history already there stays.
        poller.track(['a'], status='BUILD')
        self.assertEqual(first, poller.history['a'])
