"""The cells-outage scenario's pieces without a stack: the per-cell
database invariants on SQLite files, the partial-record and target
arithmetic, the CLI's listing, and CellsStack's private-backend options."""
import contextlib
import datetime
import io
import json
import os
import tempfile

import sqlalchemy as sa
import testtools

from nova_moves.db import api_models
from nova_moves.db import models
from nova_moves.harness import cell_invariants
from nova_moves.harness import cell_load
from nova_moves.harness import cell_stack
from nova_moves.harness import cells_outage
from nova_moves.harness import cli

FLAVOR = json.dumps({'vcpus': 1, 'memory_mb': 512, 'root_gb': 1})
WANTED = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


class CellInvariantsTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.dir = tempfile.mkdtemp()
        self.addCleanup(__import__('shutil').rmtree, self.dir)
        self.urls = {}
        for cell in ('cell1', 'cell2'):
            url = 'sqlite:///%s/%s.sqlite' % (self.dir, cell)
            engine = sa.create_engine(url)
            models.BASE.metadata.create_all(engine)
            with engine.begin() as conn:
                for i, host in enumerate(('%s-h1' % cell, '%s-h2' % cell)):
                    conn.execute(models.ResourceProvider.__table__.insert(),
                                 {'id': i + 1, 'uuid': 'rp-%s-%d' % (cell, i),
                                  'name': host, 'generation': 0,
                                  'root_provider_id': i + 1})
            engine.dispose()
            self.urls[cell] = url
        self.api_url = 'sqlite:///%s/api.sqlite' % self.dir
        engine = sa.create_engine(self.api_url)
        api_models.API_BASE.metadata.create_all(engine)
        with engine.begin() as conn:
            for i, cell in enumerate(('cell1', 'cell2')):
                conn.execute(api_models.CellMapping.__table__.insert(), {
                    'id': i + 1, 'uuid': 'c%d' % i, 'name': cell,
                    'transport_url': 'none:///',
                    'database_connection': self.urls[cell]})
        engine.dispose()

    def _exec(self, url, table, rows):
        engine = sa.create_engine(url)
        with engine.begin() as conn:
            conn.execute(table.insert(), rows)
        engine.dispose()

    def server(self, cell, uuid, host, task_state=None, mapped=None,
               alloc=True):
        self._exec(self.urls[cell], models.Instance.__table__, [{
            'uuid': uuid, 'user_id': 'u', 'project_id': 'p', 'host': host,
            'vm_state': 'active', 'task_state': task_state,
            'power_state': 1, 'flavor': FLAVOR, 'deleted': 0,
            'launched_at': datetime.datetime(2026, 1, 1)}])
        self._exec(self.api_url, api_models.InstanceMapping.__table__, [{
            'instance_uuid': uuid, 'cell_id': 1 if (mapped or cell) ==
            'cell1' else 2, 'project_id': 'p', 'queued_for_delete': False}])
        if alloc:
            self.allocate(cell, uuid, 1 if host.endswith('h1') else 2)

    def allocate(self, cell, consumer, rp_id, resources=None):
        self._exec(self.urls[cell], models.Allocation.__table__, [
            {'resource_provider_id': rp_id, 'consumer_id': consumer,
             'resource_class': rc, 'used': used}
            for rc, used in (resources or WANTED).items()])

    def migration(self, cell, uuid, server, status, source):
        self._exec(self.urls[cell], models.Migration.__table__, [{
            'uuid': uuid, 'instance_uuid': server,
            'migration_type': 'migration', 'status': status,
            'source_compute': source, 'dest_compute': source,
            'deleted': 0}])

    def check(self):
        counts = {}
        return cell_invariants.check(self.urls, self.api_url, counts), \
            counts

    def test_clean_cells(self):
        self.server('cell1', 's1', 'cell1-h1')
        self.server('cell2', 's2', 'cell2-h2')
        self.migration('cell1', 'm1', 's1', 'confirmed', 'cell1-h2')
        # A migration parked on its source holds the source half.
        self.migration('cell2', 'm2', 's2', 'finished', 'cell2-h1')
        self.allocate('cell2', 'm2', 1)
        problems, counts = self.check()
        self.assertEqual([], problems)
        self.assertEqual(1, counts['cell1']['terminal'])
        self.assertEqual(0, counts['cell2']['stuck'])

    def test_stuck_orphaned_and_leaked(self):
        self.server('cell1', 's1', 'cell1-h1', task_state='resize_prep')
        self.migration('cell1', 'm1', 's1', 'pre-migrating', 'cell1-h1')
        self.allocate('cell1', 'm1', 2)
        self.allocate('cell2', 'gone', 1)
        problems, counts = self.check()
        text = '\n'.join(problems)
        self.assertIn('server s1 is active with task_state resize_prep',
                      text)
        self.assertIn('migration m1 of s1 is still pre-migrating', text)
        self.assertIn('cell1: allocation of m1 leaked', text)
        self.assertIn('cell2: allocation of gone leaked', text)
        self.assertEqual(2, counts['cell1']['stuck'])
        self.assertEqual(1, counts['cell2']['leaked'])

    def test_wrong_allocation_and_wrong_cell(self):
        self.server('cell1', 's1', 'cell1-h1', alloc=False)
        self.allocate('cell1', 's1', 2)  # off its host
        self.server('cell2', 's2', 'cell2-h1', mapped='cell1')
        problems, _ = self.check()
        text = '\n'.join(problems)
        self.assertIn('server s1 on cell1-h1 holds', text)
        self.assertIn("server s2 is in ['cell2'], mapped to cell1", text)


class ArithmeticTest(testtools.TestCase):

    def test_summary_and_percentile(self):
        records = [{'cell': 'cell1', 'start': t, 'outcome': 'ok',
                    'e2e_s': e} for t, e in ((1, 1.0), (2, 2.0), (3, 3.0))]
        records.append({'cell': 'cell1', 'start': 4, 'outcome': 'refused'})
        s = cell_load.summary(records, 'cell1', 0, 10)
        self.assertEqual(4, s['moves'])
        self.assertEqual(75.0, s['completed_pct'])
        self.assertEqual(2.0, s['p50_s'])
        self.assertEqual(3.0, s['p99_s'])
        self.assertEqual(1, cell_load.summary(records, 'cell1', 3.5)['moves'])

    def test_partial_records(self):
        servers = [{'id': 'a', 'cell': 'cell2'}, {'id': 'b', 'cell': 'cell1'}]
        polls = [(1.0, 200, 0.1, {'a': 'full', 'b': 'full'}),
                 (3.0, 200, 0.1, {'a': 'partial', 'b': 'full'}),
                 (4.0, 200, 0.1, {'a': 'partial', 'b': 'full'}),
                 (6.5, 200, 0.1, {'a': 'partial', 'b': 'full'}),
                 (7.0, 200, 0.1, {'a': 'full', 'b': 'full'})]
        got = cells_outage.partial_records(polls, servers, (2.0, 5.0, 6.0))
        self.assertEqual({'polls_during': 2, 'answered_200_during': 2,
                          'cell_a_partial_cell_b_full': 2,
                          'cell_a_full_again_after_s': 1.0}, got)
        self.assertEqual({'polls': 5, 'not_200': 0, 'slowest_s': 0.1},
                         cells_outage.api_answers(polls))

    def test_problems(self):
        ok = {'completed_pct': 100.0, 'p50_s': 1.0, 'outcomes': {'ok': 3}}
        report = {'moves': {'B': {'baseline': ok, 'fault': dict(ok)},
                            'A': {'fault': {'outcomes': {'ok': 1}}}},
                  'api': {'not_200': 0},
                  'partial_records': {'cell_a_partial_cell_b_full': 3,
                                      'cell_a_full_again_after_s': 0.2},
                  'invariants': {'ok': True, 'problems': []}}
        self.assertTrue(cells_outage.passed(report))
        report['moves']['B']['fault'] = dict(ok, p50_s=2.5,
                                             completed_pct=95.0)
        report['moves']['A']['fault']['outcomes']['timeout'] = 1
        self.assertEqual(3, len(cells_outage.problems(report)))


class CLIAndStackTest(testtools.TestCase):

    def _run(self, argv):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            code = cli.main(argv)
        return code, out.getvalue(), err.getvalue()

    def test_listed(self):
        code, out, _ = self._run(['list'])
        self.assertEqual(0, code)
        self.assertIn('cells-outage', out)

    def test_refuses_an_endpoint(self):
        code, _, err = self._run(['run', 'cells-outage', '--endpoint',
                                  'http://127.0.0.1:1/v2.1',
                                  '--os-auth-type', 'none'])
        self.assertEqual(2, code)
        self.assertIn('starts its own stack', err)

    def test_private_cells_must_exist(self):
        self.assertRaises(ValueError, cell_stack.CellsStack, cells=2,
                          private_broker_cells=['cell3'],
                          workdir=tempfile.mkdtemp())

    def test_private_broker_transport_url(self):
        stack = cell_stack.CellsStack(cells=2, workdir=tempfile.mkdtemp(),
                                      private_broker_cells=['cell2'])
        self.addCleanup(os.rmdir, stack.workdir)

        class Broker:
            url = 'rabbit://guest:guest@127.0.0.1:5999/'
            ctl = object()
        stack.cell_brokers['cell2'] = Broker
        self.assertEqual('rabbit://guest:guest@127.0.0.1:5999/%s-cell2'
                         % stack.vhost, stack.cell_transport_url('cell2'))
        self.assertIs(Broker.ctl, stack.cell_broker_ctl('cell2'))
        # The default stays the machine's broker and vhost.
        self.assertEqual(stack.broker_url.rstrip('/') + '/' + stack.vhost,
                         stack.transport_url)
        self.assertIs(stack.broker_ctl, stack.cell_broker_ctl('cell1'))
