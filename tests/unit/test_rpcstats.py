"""RPC timing: bucketed stats merge across processes, and the timed
client/endpoint wrappers in nova_moves.rpc record over a real
oslo.messaging (fake://) transport."""
import json
import os
import shutil
import tempfile
import threading
import time

import oslo_messaging as messaging
from oslo_messaging import conffixture
import testtools

from nova_moves import conf
from nova_moves import context as nm_context
from nova_moves import rpcstats
from nova_moves import rpc

CONF = conf.CONF


class StatTest(testtools.TestCase):

    def test_percentiles_within_a_bucket(self):
        stat = rpcstats.Stat()
        for i in range(1, 101):
            stat.add(i / 1000.0)        # 1..100 ms
        self.assertEqual(100, stat.count)
        p50 = stat.percentile_ms(50)
        p99 = stat.percentile_ms(99)
        self.assertTrue(50 <= p50 <= 50 * 1.13, p50)
        self.assertTrue(99 <= p99 <= 100, p99)

    def test_merge_and_diff(self):
        a, b = rpcstats.Stat(), rpcstats.Stat()
        a.add(0.01)
        b.add(0.02, error=True)
        b.add(0.5)
        merged = rpcstats.Stat.from_dict(a.to_dict())
        merged.merge_dict(json.loads(json.dumps(b.to_dict())))
        self.assertEqual(3, merged.count)
        self.assertEqual(1, merged.errors)
        self.assertAlmostEqual(0.53, merged.total)
        before = {'call': {'m': a}}
        after = {'call': {'m': merged}, 'cast': {'n': b}}
        out = rpcstats.diff(after, before)
        self.assertEqual(2, out['call']['m'].count)
        self.assertEqual(2, out['cast']['n'].count)
        self.assertNotIn(rpcstats.bucket_of(0.01), out['call']['m'].buckets)

    def test_in_flight_handlers_and_clean_exit_are_written(self):
        work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, work)
        rec = rpcstats.Recorder(work, 'compute-c2')
        rec.begin('compute.prep_resize')
        rec.begin('compute.prep_resize')
        rec.record('handle', 'compute.prep_resize', 0.1)
        rec.dump()
        _, (entry,) = rpcstats.merge_dir(work)
        # One finished, one still running: what a SIGKILL would leave.
        self.assertEqual({'compute.prep_resize': 1}, entry['in_flight'])
        self.assertEqual({'handle': {'compute.prep_resize': 1}},
                         entry['counts'])
        self.assertFalse(entry['closed'])
        self.assertEqual(os.getpid(), entry['pid'])
        rec.close()
        _, (entry,) = rpcstats.merge_dir(work)
        self.assertTrue(entry['closed'])

    def test_recorder_files_merge(self):
        work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, work)
        one = rpcstats.Recorder(work, 'p1')
        two = rpcstats.Recorder(work, 'p2')
        two.path = os.path.join(work, 'p2-x.json')
        one.record('call', 'conductor.x', 0.01)
        two.record('call', 'conductor.x', 0.03)
        two.record('handle', 'conductor.x', 0.02)
        one.dump()
        two.dump()
        merged, processes = rpcstats.merge_dir(work)
        self.assertEqual(['p1', 'p2'],
                         sorted(p['process'] for p in processes))
        self.assertEqual(2, merged['call']['conductor.x'].count)
        rows = rpcstats.summarize(merged)
        self.assertEqual('conductor.x', rows[0]['method'])
        self.assertEqual(1, rows[0]['handle']['count'])


class Endpoint:
    target = messaging.Target(version='1.0')

    def __init__(self):
        self.seen = threading.Event()

    def echo(self, ctxt, value):
        time.sleep(0.02)
        return value

    def note(self, ctxt, value):
        self.seen.set()

    def boom(self, ctxt):
        raise ValueError('boom')


class TimedRPCTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.work)
        self.useFixture(conffixture.ConfFixture(CONF))
        # A transport another test of this worker left behind would take
        # this test to whatever broker it pointed at.
        rpc.cleanup()
        CONF.set_override('transport_url', 'fake:/')
        CONF.set_override('rpc_stats_dir', self.work)
        CONF.set_override('host', 'unit')
        self.addCleanup(CONF.clear_override, 'rpc_stats_dir')
        self.addCleanup(CONF.clear_override, 'host')
        self.addCleanup(rpc.cleanup)
        self.addCleanup(setattr, rpcstats._Recorders, 'recorder', None)
        rpcstats._Recorders.recorder = None

    def test_calls_casts_and_handlers_are_timed(self):
        endpoint = Endpoint()
        server = rpc.get_server(messaging.Target(topic='t', server='unit'),
                                [endpoint])
        server.start()
        self.addCleanup(server.wait)
        self.addCleanup(server.stop)
        client = rpc.get_client(messaging.Target(topic='t', version='1.0'))
        ctxt = nm_context.get_admin_context()
        self.assertEqual(5, client.prepare(server='unit').call(
            ctxt, 'echo', value=5))
        client.prepare(server='unit').cast(ctxt, 'note', value=1)
        self.assertTrue(endpoint.seen.wait(5))
        self.assertRaises(Exception, client.prepare(server='unit').call,
                          ctxt, 'boom')
        recorder = rpcstats._Recorders.recorder
        recorder.dump()
        merged, processes = rpcstats.merge_dir(self.work)
        self.assertEqual(1, len(processes))
        self.assertEqual(1, merged['call']['t.echo'].count)
        self.assertGreaterEqual(merged['call']['t.echo'].total, 0.02)
        self.assertEqual(1, merged['cast']['t.note'].count)
        self.assertEqual(1, merged['handle']['t.echo'].count)
        self.assertEqual(1, merged['call']['t.boom'].errors)
        self.assertEqual(1, merged['handle']['t.boom'].errors)
        # The wrapper keeps the client's other methods.
        self.assertTrue(client.can_send_version('1.0'))

    def test_no_stats_dir_means_plain_oslo_messaging(self):
        CONF.set_override('rpc_stats_dir', None)
        client = rpc.get_client(messaging.Target(topic='t'))
        self.assertIsInstance(client, messaging.RPCClient)
