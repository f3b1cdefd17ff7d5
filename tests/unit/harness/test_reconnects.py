import datetime
import os

import fixtures
import testtools

from nova_moves.harness import reconnects

C1 = '11111111-1111-1111-1111-111111111111'
C2 = '22222222-2222-2222-2222-222222222222'


def _ts(wall):
    return datetime.datetime.fromtimestamp(wall).strftime(
        '%Y-%m-%d %H:%M:%S.%f')[:-3]


class ReconnectsTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path
        self.t0 = 1_800_000_000.0

    def log(self, name, lines):
        path = os.path.join(self.dir, name + '.log')
        with open(path, 'w') as f:
            for offset, text in lines:
                f.write('%s 123 %s\n' % (_ts(self.t0 + offset), text))
        return path

    def lost(self, conn):
        return ('ERROR oslo.messaging._drivers.impl_rabbit [-] [%s] AMQP '
                'server on 127.0.0.1:5673 is unreachable: [Errno 111] '
                'ECONNREFUSED. Trying again in 1 seconds.' % conn)

    def back(self, conn):
        return ('INFO oslo.messaging._drivers.impl_rabbit [-] [%s] '
                'Reconnected to AMQP server on 127.0.0.1:5674 via '
                '[amqp] client with port 40000.' % conn)

    def test_back_when_every_lost_connection_is_back(self):
        logs = {
            'conductor1': self.log('conductor1', [
                (1.0, self.back(C1)),           # before the fault: ignored
                (10.2, self.lost(C1)), (10.3, self.lost(C2)),
                (11.0, self.back(C1)), (13.5, self.back(C2))]),
            'compute1': self.log('compute1', [(12.0, 'INFO nothing')]),
            'scheduler': self.log('scheduler', [
                (10.5, self.lost(C1))]),
        }
        faults = [{'t': 10.0, 'action': 'kill', 'target': 'rabbit1'},
                  {'t': 20.0, 'action': 'restart', 'target': 'rabbit1'}]
        rows = {r['service']: r for r in reconnects.measure(
            logs, faults, {'rabbit1', 'rabbit2'}, self.t0)}
        self.assertEqual('reconnected', rows['conductor1']['state'])
        self.assertAlmostEqual(3.5, rows['conductor1']['seconds'], places=1)
        self.assertEqual(2, rows['conductor1']['connections_lost'])
        self.assertEqual('unaffected', rows['compute1']['state'])
        self.assertEqual('not reconnected', rows['scheduler']['state'])
        text = '\n'.join(reconnects.render(list(rows.values())))
        self.assertIn('kill rabbit1 at 10.00s', text)
        self.assertIn('conductor1 3.5s', text)
        self.assertIn('scheduler not reconnected', text)
        self.assertIn('1 unaffected', text)

    def test_only_broker_kills_count(self):
        logs = {'api': self.log('api', [(5.0, self.lost(C1))])}
        faults = [{'t': 4.0, 'action': 'kill', 'target': 'conductor1'}]
        self.assertEqual([], reconnects.measure(
            logs, faults, {'rabbit1'}, self.t0))
