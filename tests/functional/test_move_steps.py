"""The guarded move steps on real processes: how many compute->conductor
calls a cold migrate and confirm costs, and consumer generations that
make a claim for a rolled-back move fail."""
import glob
import json
import os
import shutil
import tempfile
import time

import testtools.content as content

from tests.functional import base


def _compute_conductor_calls(stats_dir):
    """{method: count} of the conductor calls the compute processes made,
    from their rpc-stats files (rewritten every second)."""
    calls = {}
    for path in glob.glob(os.path.join(stats_dir, '*compute*.json')):
        with open(path) as f:
            stats = json.load(f)['stats']
        for method, stat in stats.get('call', {}).items():
            if method.startswith('conductor.'):
                calls[method] = calls.get(method, 0) + stat['count']
    return calls


# Heartbeats and node reports run on their own clock, not per move.
PERIODIC = {'conductor.service_report', 'conductor.compute_node_sync'}


class MoveCallCountTest(base.StackTestCase):
    COMPUTES = 2

    @classmethod
    def setUpClass(cls):
        cls.stats_dir = tempfile.mkdtemp(prefix='nm-rpc-stats-')
        cls.EXTRA_CONF = {'DEFAULT': {'rpc_stats_dir': cls.stats_dir}}
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.stats_dir, ignore_errors=True)

    def _settled_calls(self):
        """The per-move counters once two successive dumps agree (the
        periodic ones change every report_interval: comparing them too
        never settled, and cost this test 2 x 24 s)."""
        last = None
        for _ in range(20):
            time.sleep(1.2)
            now = {method: count for method, count in
                   _compute_conductor_calls(self.stats_dir).items()
                   if method not in PERIODIC}
            if now == last:
                return now
            last = now
        return last

    def test_cold_migrate_and_confirm_cost_at_most_12_calls(self):
        server = self.boot('counted')
        before = self._settled_calls()
        resp = self.admin.action(server['id'], {'migrate': None},
                                 version='2.56')
        self.assertEqual(202, resp.status_code, resp.text)
        self.admin.wait_for_status(server['id'], ('VERIFY_RESIZE',),
                                   timeout=60)
        resp = self.admin.action(server['id'], {'confirmResize': None})
        self.assertEqual(204, resp.status_code, resp.text)
        self.admin.wait_for_status(server['id'], ('ACTIVE',), timeout=60)
        after = self._settled_calls()
        made = {m: after.get(m, 0) - before.get(m, 0) for m in after
                if after.get(m, 0) != before.get(m, 0)}
        total = sum(made.values())
        self.addDetail('calls', content.text_content(json.dumps(made)))
        # Four handlers (prep_resize, resize_instance, finish_resize,
        # confirm_resize), each a guarded start and end: 8 (24 before).
        self.assertLessEqual(total, 12, made)
        self.assertEqual({'conductor.move_advance'}, set(made), made)
