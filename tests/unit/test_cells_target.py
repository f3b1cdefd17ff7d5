"""cells.target routes a thread's database transactions and the RPC
clients built inside it to the targeted cell, and nothing else: the
other threads, and the block's end, see this process's own cell."""
import os
import threading

import oslo_messaging as messaging
import testtools

from nova_moves import cells
from nova_moves import conf
from nova_moves.db import migration
from nova_moves.db import services
from nova_moves.db import session
from nova_moves import rpc
from tests.fixtures import rpc as rpc_fixture
from tests.unit import fixtures as nm_fixtures

CONF = conf.CONF


class CellTargetTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.db = self.useFixture(nm_fixtures.Database())
        here = os.path.dirname(self.db.url[len('sqlite:///'):])
        self.url2 = 'sqlite:///%s' % os.path.join(here, 'cell2.sqlite')
        migration.db_sync_url(self.url2)
        self.addCleanup(session.dispose_engines)
        self.cell2 = cells.Cell(uuid='c2', name='cell2',
                                database_connection=self.url2,
                                transport_url='fake:///cell2')

    def test_database_work_goes_to_the_target(self):
        services.service_report('own-host', 'nova-moves-compute', 'compute')
        with cells.target(self.cell2):
            services.service_report('h2', 'nova-moves-compute', 'compute')
            self.assertEqual(['h2'], [s['host'] for s in
                                      services.service_get_all()])
        self.assertEqual(['own-host'], [s['host'] for s in
                                        services.service_get_all()])

    def test_own_cell_target_uses_the_own_engine(self):
        own = cells.Cell('c1', 'cell1', CONF.database.connection, '')
        with cells.target(own):
            self.assertIs(session.get_engine(), session._MAIN.get(
                CONF.database.connection))

    def test_other_threads_keep_their_cell(self):
        seen = []
        entered, done = threading.Event(), threading.Event()

        def other():
            entered.wait(5)
            seen.append(session.get_engine().url.database)
            done.set()

        thread = threading.Thread(target=other)
        thread.start()
        with cells.target(self.cell2):
            entered.set()
            done.wait(5)
            mine = session.get_engine().url.database
        thread.join()
        self.assertEqual([self.db.url[len('sqlite:///'):]], seen)
        self.assertEqual(self.url2[len('sqlite:///'):], mine)

    def test_rpc_transport_follows_the_target(self):
        self.useFixture(rpc_fixture.FakeTransport())
        own = rpc.get_transport()
        with cells.target(self.cell2):
            theirs = rpc.get_transport()
            calls = rpc.get_calls_transport()
            self.assertIs(theirs, rpc.get_transport())
        self.assertIsNot(own, theirs)
        self.assertIsNot(theirs, calls)
        self.assertIs(own, rpc.get_transport())
        self.assertEqual('fake:///cell2', str(messaging.TransportURL.parse(
            CONF, 'fake:///cell2')))
