"""The report's numbers and text, the request bodies per microversion,
and the pictures, from synthetic records."""
import os
import shutil
import tempfile

import testtools

from nova_moves.harness import report as nm_report
from nova_moves.harness import runner as nm_runner
from nova_moves.harness import scenario as nm_scenario
from nova_moves.harness import timeline


def _rec(op, version, api_s, e2e_s=None, outcome='ok', status=202, sent=0.0):
    return {'operation': op, 'microversion': version, 'api_s': api_s,
            'e2e_s': e2e_s, 'outcome': outcome, 'http_status': status,
            'sent': sent, 'phase': op, 'server': 's'}


class OperationRowsTest(testtools.TestCase):

    def test_percentiles_rate_and_outcomes(self):
        records = [_rec('live-migrate', '2.34', i / 1000.0, 1.0 + i / 100.0,
                        sent=i / 100.0) for i in range(1, 101)]
        records.append(_rec('live-migrate', '2.33', 0.4, None, 'rejected',
                            400))
        rows = nm_report.operation_rows(records)
        async_row, sync_row = rows
        self.assertEqual(('2.34', 100), (async_row['microversion'],
                                         async_row['requests']))
        self.assertEqual(50.0, async_row['api_p50_ms'])
        self.assertEqual(95.0, async_row['api_p95_ms'])
        self.assertEqual(99.0, async_row['api_p99_ms'])
        self.assertEqual(1.5, async_row['e2e_p50_s'])
        # 100 requests sent over 0.01..1.1 s.
        self.assertAlmostEqual(100 / 1.09, async_row['requests_per_s'], 1)
        self.assertEqual({'ok': 100}, async_row['outcomes'])
        self.assertEqual({'rejected': 1}, sync_row['outcomes'])
        self.assertEqual({'400': 1}, sync_row['http_status'])
        self.assertIsNone(sync_row['e2e_p50_s'])

    def test_render_shows_failed_invariants(self):
        report = {'scenario': 's', 'servers': 1, 'workload_seconds': 1.0,
                  'topology': {'hosts': 2, 'compute_processes': 1},
                  'operations': nm_report.operation_rows(
                      [_rec('resize', '2.1', 0.01, 2.0)]),
                  'rpc': [], 'rpc_processes': [], 'faults': [
                      {'t': 1.0, 'action': 'kill', 'target': 'conductor1',
                       'result': 'exit -9'}],
                  'invariants': {'ok': False,
                                 'problems': ['allocation of x leaked']}}
        text = nm_report.render(report)
        self.assertIn('resize', text)
        self.assertIn('kill conductor1 -> exit -9', text)
        self.assertIn('Invariants: 1 FAILED', text)
        self.assertIn('allocation of x leaked', text)


class ActionBodyTest(testtools.TestCase):
    """The bodies a Nova client sends, per microversion."""

    def setUp(self):
        super().setUp()
        scenario = nm_scenario.validate({
            'name': 'b', 'phases': [{'operation': 'migrate'}],
            'flavors': [{'name': 'small', 'vcpus': 1, 'ram': 512},
                        {'name': 'big', 'vcpus': 2, 'ram': 1024}]})
        self.runner = nm_runner.Runner(scenario, endpoint='http://x/v2.1',
                                       out_dir=tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.runner.out_dir)
        self.runner.flavors = {'small': {'id': '1', 'name': 'small'},
                               'big': {'id': '2', 'name': 'big'}}
        self.view = {'OS-EXT-SRV-ATTR:host': 'compute1',
                     'flavor': {'original_name': 'small'}}

    def body(self, op, version, **params):
        return self.runner.action_body(op, version, params, self.view)

    def test_resize_picks_a_different_flavor(self):
        self.assertEqual({'resize': {'flavorRef': '2'}},
                         self.body('resize', '2.1', flavor=['small', 'big']))

    def test_migrate_host_only_from_2_56(self):
        self.assertEqual({'migrate': None}, self.body('migrate', '2.55',
                                                      host='compute2'))
        self.assertEqual({'migrate': {'host': 'compute2'}},
                         self.body('migrate', '2.56', host='@next'))

    def test_live_migrate_per_microversion(self):
        self.assertEqual({'os-migrateLive': {
            'host': None, 'block_migration': False,
            'disk_over_commit': False}}, self.body('live-migrate', '2.1'))
        self.assertEqual({'os-migrateLive': {
            'host': 'compute2', 'block_migration': 'auto', 'force': True}},
            self.body('live-migrate', '2.30', host='compute2', force=True))
        # force is gone at 2.68: not sent.
        self.assertEqual({'os-migrateLive': {
            'host': None, 'block_migration': 'auto'}},
            self.body('live-migrate', '2.68', force=True))

    def test_evacuate_per_microversion(self):
        self.assertEqual({'evacuate': {'onSharedStorage': False}},
                         self.body('evacuate', '2.1'))
        self.assertEqual({'evacuate': {'host': 'compute2', 'force': False}},
                         self.body('evacuate', '2.29', host='compute2',
                                   force=False))

    def test_confirm_and_revert(self):
        self.assertEqual({'confirmResize': None}, self.body('confirm', '2.1'))
        self.assertEqual({'revertResize': None}, self.body('revert', '2.1'))


class PicturesTest(testtools.TestCase):

    def test_lane_labels_never_overlap(self):
        # kill and force-down at the same moment, a restart far later.
        placed, levels = timeline._stack_labels(
            [(5.0, 'kill compute2'), (5.01, 'force-down compute2'),
             (30.0, 'restart compute2')], width_per_char=0.1)
        self.assertEqual(2, levels)
        self.assertEqual([(5.0, 'kill compute2', 0),
                          (5.01, 'force-down compute2', 1),
                          (30.0, 'restart compute2', 0)], placed)

    def test_row_label_names_server_and_moves(self):
        moves = [{'operation': 'live-migrate', 'microversion': '2.33'},
                 {'operation': 'migrate', 'microversion': '2.56'},
                 {'operation': 'migrate', 'microversion': '2.56'}]
        self.assertEqual('web-3  live-migrate 2.33, migrate',
                         timeline._row_label('web-3', moves))
        self.assertEqual(['vm-2', 'vm-10'], sorted(
            ['vm-10', 'vm-2'], key=timeline._natural))

    def test_timeline_and_histogram_are_pngs(self):
        work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, work)
        report = {
            'scenario': 'pic',
            'timeline': {'a': [(0.0, 'BUILD'), (0.5, 'ACTIVE'),
                               (1.0, 'MIGRATING'), (2.0, 'ACTIVE')],
                         'b': [(0.1, 'BUILD'), (0.6, 'ACTIVE'),
                               (1.5, 'DELETED')]},
            'server_names': {'a': 'a', 'b': 'b'},
            'faults': [{'t': 1.2, 'action': 'kill', 'target': 'conductor1'}],
            'phases': [{'name': 'live', 'start': 1.0, 'end': 2.0}],
            'records': [_rec('live-migrate', '2.33', 0.3),
                        _rec('live-migrate', '2.34', 0.02),
                        _rec('boot', '2.1', 0.1)]}
        for path in (timeline.timeline(report, os.path.join(work, 't.png')),
                     timeline.latency_histogram(
                         report, os.path.join(work, 'h.png'))):
            with open(path, 'rb') as f:
                self.assertEqual(b'\x89PNG', f.read(4))
