"""The per-phase breakdown of a move from its instance action events."""
import testtools

from nova_moves.harness import phases
from nova_moves.harness import report as nm_report


def _t(seconds):
    return '2026-11-24T10:00:%09.6f' % seconds


def _event(name, start, finish):
    return {'event': name, 'start_time': _t(start),
            'finish_time': None if finish is None else _t(finish)}


class BreakdownTest(testtools.TestCase):

    def test_cold_migrate(self):
        action = {'start_time': _t(1.0), 'events': [
            _event('conductor_migrate_server', 1.5, 2.0),
            _event('compute_prep_resize', 2.25, 3.0),
            _event('compute_resize_instance', 3.5, 5.5),
            _event('compute_finish_resize', 6.0, 6.5)]}
        out = phases.breakdown(action)
        self.assertEqual({'queue': 1.75, 'scheduling': 0.5, 'prep': 0.75,
                          'transfer': 2.0, 'finish': 0.5, 'other': 0.0},
                         out)
        self.assertAlmostEqual(5.5, sum(out.values()))

    def test_nested_live_migration_goes_to_the_innermost_step(self):
        action = {'start_time': _t(0.0), 'events': [
            _event('conductor_live_migrate_instance', 0.5, 1.5),
            _event('compute_check_can_live_migrate_destination', 0.75, 1.0),
            _event('compute_live_migration', 2.0, 6.0),
            _event('compute_pre_live_migration', 2.5, 3.0),
            _event('compute_post_live_migration_at_destination', 5.0, 5.5)]}
        out = phases.breakdown(action)
        self.assertEqual(1.0, out['scheduling'])
        self.assertEqual(0.5, out['prep'])
        self.assertEqual(0.5, out['finish'])
        self.assertEqual(3.0, out['transfer'])
        self.assertEqual(1.0, out['queue'])

    def test_evacuate_names_and_unfinished_events(self):
        action = {'start_time': _t(0.0), 'events': [
            _event('conductor_rebuild_instance', 0.0, 1.0),
            _event('compute_rebuild_instance', 1.0, None),
            _event('compute_something_new', 1.5, 2.0)]}
        out = phases.breakdown(action)
        self.assertEqual(1.0, out['scheduling'])
        # The unfinished rebuild lasts to the last time seen.
        self.assertEqual(0.5, out['transfer'])
        self.assertEqual(0.5, out['other'])
        self.assertIsNone(phases.breakdown({'start_time': _t(0),
                                            'events': []}))

    def test_collect_summarize_render(self):
        class Client:
            def action_detail(self, server, request_id):
                if server == 'gone':
                    raise LookupError(server)
                return {'start_time': _t(0.0), 'events': [
                    _event('conductor_migrate_server', 0.25, 0.5),
                    _event('compute_resize_instance', 1.0, 2.0)]}
        records = [{'operation': 'migrate', 'microversion': '2.56',
                    'server': s, 'request_id': 'req-%s' % s, 'api_s': 0.1,
                    'outcome': 'ok', 'sent': 0.0, 'http_status': 202}
                   for s in ('a', 'b', 'gone')]
        records.append(dict(records[0], operation='confirm'))
        phases.collect(records, Client())
        self.assertEqual(0.1, records[0]['phases']['api'])
        self.assertNotIn('phases', records[2])
        self.assertNotIn('phases', records[3])
        row = nm_report.operation_rows(records)[0]
        self.assertEqual({'n': 2, 'p50_s': 1.0, 'p95_s': 1.0},
                         row['breakdown']['transfer'])
        self.assertEqual(0.75, row['breakdown']['queue']['p50_s'])
        self.assertNotIn('other', row['breakdown'])
        text = '\n'.join(phases.render([row]))
        self.assertIn('migrate 2.56', text)
        self.assertIn('1.00 (1.00)', text)


def _stamps(*pairs):
    return {'id': 1, 'phases': [{'phase': p, 'started_at': _t(t)}
                                for p, t in pairs]}


class TimestampsTest(testtools.TestCase):

    def test_live_migration_until_its_end_status(self):
        action = {'start_time': _t(1.0)}
        migration = _stamps(('accepted', 1.0), ('queued', 1.25),
                            ('preparing', 2.0), ('running', 2.5),
                            ('post-migrating', 6.5), ('completed', 7.0),
                            ('error', 9.0))
        self.assertEqual({'request': 0.0, 'accepted': 0.25, 'queued': 0.75,
                          'preparing': 0.5, 'running': 4.0,
                          'post-migrating': 0.5},
                         phases.from_timestamps(action, migration))

    def test_resize_stops_at_finished_and_adds_repeated_statuses(self):
        action = {'start_time': _t(0.0)}
        migration = _stamps(('pre-migrating', 0.5), ('migrating', 1.0),
                            ('pre-migrating', 1.5), ('migrating', 2.0),
                            ('post-migrating', 3.0), ('finished', 3.5),
                            ('confirming', 10.0), ('confirmed', 10.5))
        self.assertEqual({'request': 0.5, 'pre-migrating': 1.0,
                          'migrating': 1.5, 'post-migrating': 0.5},
                         phases.from_timestamps(action, migration))
        self.assertIsNone(phases.from_timestamps(action, {'phases': []}))

    def test_the_migration_of_the_action(self):
        older = dict(_stamps(('pre-migrating', 1.0)), id=1)
        mine = dict(_stamps(('pre-migrating', 5.5)), id=2)
        newer = dict(_stamps(('pre-migrating', 9.0)), id=3)
        legacy = {'id': 4, 'phases': None}
        self.assertIs(mine, phases.migration_for(
            {'start_time': _t(5.0)}, [newer, legacy, mine, older]))
        self.assertIsNone(phases.migration_for({'start_time': _t(9.5)},
                                               [older, mine, newer]))

    def test_summary_and_render_take_status_phases(self):
        records = [{'phases': {'api': 0.1, 'request': 0.2, 'running': 2.0}},
                   {'phases': {'api': 0.3, 'request': 0.1, 'running': 4.0}}]
        summary = phases.summarize(records)
        self.assertEqual(['api', 'request', 'running'], list(summary))
        lines = phases.render([{'operation': 'live-migrate',
                                'microversion': '2.95',
                                'breakdown': summary}])
        self.assertIn('running', lines[1])
        self.assertIn('timestamps', lines[0])
