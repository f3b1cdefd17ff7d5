"""The harness's partition pieces without a stack: the TCP proxy cuts
and heals, ``cut`` / ``heal`` faults are validated, and the report's
count of moves rolled back for a lost message."""
import socket
import threading

import testtools

from nova_moves.harness import faults as nm_faults
from nova_moves.harness import scenario as nm_scenario
from nova_moves.harness import tcp_proxy


def _echo_server(test):
    server = socket.socket()
    server.bind(('127.0.0.1', 0))
    server.listen(8)
    test.addCleanup(server.close)

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return

            def echo(conn=conn):
                try:
                    while True:
                        data = conn.recv(100)
                        if not data:
                            return
                        conn.sendall(data)
                except OSError:
                    return
                finally:
                    conn.close()
            threading.Thread(target=echo, daemon=True).start()
    threading.Thread(target=serve, daemon=True).start()
    return server.getsockname()


class TcpProxyTest(testtools.TestCase):

    def test_cut_resets_and_refuses_then_heal_serves_again(self):
        proxy = tcp_proxy.TcpProxy(_echo_server(self)).start()
        self.addCleanup(proxy.stop)
        conn = socket.create_connection(('127.0.0.1', proxy.port), 5)
        self.addCleanup(conn.close)
        conn.sendall(b'ping')
        self.assertEqual(b'ping', conn.recv(10))
        self.assertEqual(1, proxy.connections())
        proxy.cut()
        self.assertTrue(proxy.is_cut)
        self.assertEqual(0, proxy.connections())
        try:
            conn.sendall(b'x')
            gone = conn.recv(10) == b''
        except OSError:
            gone = True
        self.assertTrue(gone, 'the connection survived the cut')
        with testtools.ExpectedException(ConnectionRefusedError):
            socket.create_connection(('127.0.0.1', proxy.port), 5)
        proxy.heal()
        again = socket.create_connection(('127.0.0.1', proxy.port), 5)
        self.addCleanup(again.close)
        again.sendall(b'back')
        self.assertEqual(b'back', again.recv(10))
        self.assertEqual(1, proxy.cuts)


def _scenario(faults):
    return {'name': 'p', 'topology': {'computes': 2},
            'flavors': [{'name': 'f', 'vcpus': 1, 'ram': 64}],
            'servers': [{'count': 1, 'flavor': 'f'}],
            'phases': [{'name': 'w', 'operation': 'wait'}],
            'faults': faults}


class PartitionFaultValidationTest(testtools.TestCase):

    def test_cut_of_a_compute_with_heal_after(self):
        data = nm_scenario.validate(_scenario([
            {'phase': 'w', 'action': 'cut', 'process': 'compute2',
             'heal_after': 2}]))
        self.assertEqual(2, data['faults'][0]['heal_after'])

    def test_cut_of_a_conductor_is_refused(self):
        error = self.assertRaises(
            nm_scenario.ScenarioError, nm_scenario.validate, _scenario([
                {'phase': 'w', 'action': 'cut', 'process': 'conductor1'}]))
        self.assertIn('not a compute process', str(error))

    def test_bundled_partition_scenario_is_valid(self):
        data = nm_scenario.load('partition')
        self.assertIn('cut', [f['action'] for f in data['faults']])


class _Response:
    def __init__(self, body, status=200):
        self.status_code = status
        self._body = body

    def json(self):
        return self._body


class _Client:
    """Two servers: one rolled back by the sweep, one failed otherwise."""
    ACTIONS = {'s1': [{'request_id': 'r1', 'message': 'Error'}],
               's2': [{'request_id': 'r2', 'message': 'Error'},
                      {'request_id': 'r3', 'message': None}]}
    EVENTS = {'r1': [{'event': nm_faults.RECOVERY_EVENT, 'result': 'Error'}],
              'r2': [{'event': 'compute_prep_resize', 'result': 'Error'}]}

    def get(self, path, version=None):
        parts = path.strip('/').split('/')
        if len(parts) == 3:
            return _Response({'instanceActions': self.ACTIONS[parts[1]]})
        return _Response({'instanceAction': {
            'events': self.EVENTS.get(parts[3], [])}})


class LostMessageCountTest(testtools.TestCase):

    def test_counts_only_the_sweeps_rollbacks(self):
        self.assertEqual(1, nm_faults.lost_message_rollbacks(
            _Client(), ['s1', 's2']))
