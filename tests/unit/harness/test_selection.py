"""Which servers a phase acts on (harness/selection.py)."""
import testtools

from nova_moves.harness import selection

SERVERS = [{'id': 'a', 'name': 'web-1'}, {'id': 'b', 'name': 'web-2'},
           {'id': 'c', 'name': 'db-1'}, {'id': 'd', 'name': 'web-3'}]
VIEWS = {'a': {'status': 'ACTIVE', 'OS-EXT-SRV-ATTR:host': 'h1'},
         'b': {'status': 'SHUTOFF', 'OS-EXT-SRV-ATTR:host': 'h1'},
         'c': {'status': 'ACTIVE', 'OS-EXT-SRV-ATTR:host': 'h2'},
         'd': {'status': 'DELETED'}}


def _ids(chosen):
    return [s['id'] for s in chosen]


class SelectTest(testtools.TestCase):

    def select(self, what):
        return _ids(selection.select(SERVERS, VIEWS.get, what))

    def test_all_but_the_deleted(self):
        self.assertEqual(['a', 'b', 'c'], self.select('all'))

    def test_every_key_must_match(self):
        self.assertEqual(['a', 'b'], self.select({'name': 'web'}))
        self.assertEqual(['a'], self.select({'name': 'web', 'host': 'h1',
                                             'status': 'ACTIVE'}))
        self.assertEqual(['c'], self.select({'host': 'h2'}))

    def test_first_n_after_the_filters(self):
        self.assertEqual(['b'], self.select({'status': 'SHUTOFF',
                                             'first': 1}))
        self.assertEqual(['a', 'b'], self.select({'first': 2}))

    def test_a_server_never_polled_matches_no_host(self):
        servers = SERVERS + [{'id': 'e', 'name': 'web-4'}]
        self.assertEqual(['a', 'b', 'e'], _ids(selection.select(
            servers, VIEWS.get, {'name': 'web'})))
        self.assertEqual(['a', 'b'], _ids(selection.select(
            servers, VIEWS.get, {'name': 'web', 'host': 'h1'})))
