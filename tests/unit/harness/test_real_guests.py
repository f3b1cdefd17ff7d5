"""Scenarios with real guests: the topology.guests / images / servers[].image
keys validate (and bad ones are refused with their place), the computes
get the QEMU driver, and QEMU's per-migration log line is parsed into the
report's per-image figures."""
import os

import testtools

from nova_moves.harness import real_guests
from nova_moves.harness import scenario as nm_scenario


def _base(**over):
    data = {'name': 'x',
            'topology': {'guests': {'driver': 'qemu'}},
            'images': [{'name': 'd0', 'cmdline': 'dirty=0'},
                       {'name': 'd10', 'cmdline': 'dirty=10'}],
            'flavors': [{'name': 'guest', 'vcpus': 1, 'ram': 256}],
            'servers': [{'count': 2, 'flavor': 'guest', 'image': 'd10'}],
            'phases': [{'operation': 'live-migrate'}]}
    data.update(over)
    return data


class SchemaTest(testtools.TestCase):

    def _error(self, data):
        return str(self.assertRaises(nm_scenario.ScenarioError,
                                     nm_scenario.validate, data, 'f.yaml'))

    def test_defaults(self):
        data = nm_scenario.validate(_base(servers=[
            {'count': 1, 'flavor': 'guest'},
            {'count': 1, 'flavor': 'guest', 'image': 'd10'}]))
        guests = data['topology']['guests']
        self.assertEqual(('qemu', 'tcg', 10, {}), (
            guests['driver'], guests['accel'], guests['shutdown_timeout'],
            guests['qemu']))
        # A server group without an image boots the first one.
        self.assertEqual(['d0', 'd10'],
                         [s['image'] for s in data['servers']])

    def test_default_image(self):
        data = _base(servers=[{'count': 1, 'flavor': 'guest'}])
        del data['images']
        data = nm_scenario.validate(data)
        self.assertEqual([{'name': 'test-guest'}], data['images'])
        self.assertEqual('test-guest', data['servers'][0]['image'])

    def test_validate_leaves_the_input_alone(self):
        data = _base()
        nm_scenario.validate(data)
        self.assertEqual({'driver': 'qemu'}, data['topology']['guests'])

    def test_unknown_driver(self):
        msg = self._error(_base(topology={'guests': {'driver': 'xen'}}))
        self.assertIn('topology.guests.driver', msg)
        self.assertIn("'xen' is not one of ['qemu']", msg)

    def test_driver_required(self):
        msg = self._error(_base(topology={'guests': {'accel': 'tcg'}}))
        self.assertIn("'driver' is a required property", msg)

    def test_bad_accel_and_unknown_key(self):
        msg = self._error(_base(topology={'guests': {
            'driver': 'qemu', 'accel': 'hvf', 'disks': 2}}))
        self.assertIn('topology.guests.accel', msg)
        self.assertIn("'disks' was unexpected", msg)

    def test_unknown_image(self):
        msg = self._error(_base(servers=[{'count': 1, 'flavor': 'guest',
                                          'image': 'd99'}]))
        self.assertIn('servers[0].image', msg)
        self.assertIn("unknown image 'd99' (images: d0, d10)", msg)

    def test_image_keys(self):
        msg = self._error(_base(images=[{'name': 'd0', 'dirty': 10}]))
        self.assertIn("'dirty' was unexpected", msg)
        msg = self._error(_base(images=[{'cmdline': 'dirty=1'}]))
        self.assertIn("'name' is a required property", msg)

    def test_image_names_repeat(self):
        msg = self._error(_base(images=[{'name': 'd0'}, {'name': 'd0'}],
                                servers=[]))
        self.assertIn('image names repeat', msg)

    def test_images_and_image_need_real_guests(self):
        msg = self._error(_base(topology={}))
        self.assertIn('images: images need real guests', msg)
        self.assertIn('servers[0].image: image needs real guests', msg)

    def test_one_host_per_compute_process(self):
        msg = self._error(_base(topology={
            'guests': {'driver': 'qemu'},
            'computes': [{'name': 'c1', 'hosts': 3}]}))
        self.assertIn('one host per compute process (c1 has 3)', msg)

    def test_bundled_scenarios(self):
        live = nm_scenario.load('live-real-guests')
        self.assertEqual(['dirty=0', 'dirty=10', 'dirty=50'],
                         [i['cmdline'] for i in live['images']])
        self.assertEqual({'dirty-0', 'dirty-10', 'dirty-50'},
                         {s['image'] for s in live['servers']})
        drain = nm_scenario.load('drain-real-guests')
        self.assertIn('drain', [p['operation'] for p in drain['phases']])
        self.assertEqual('qemu', drain['topology']['guests']['driver'])


class ComputeSpecsTest(testtools.TestCase):

    def test_qemu_driver_and_short_instances_path(self):
        data = nm_scenario.validate(_base(topology={
            'guests': {'driver': 'qemu', 'qemu': {
                'live_migration_completion_timeout': 120}}}))
        real = real_guests.RealGuests(data)
        self.addCleanup(os.rmdir, real.root)
        specs = real.compute_specs(
            [dict(p) for p in data['topology']['compute_processes']])
        self.assertEqual(['qemu', 'qemu'],
                         [s['compute']['driver'] for s in specs])
        qemu = specs[0]['conf']['qemu']
        self.assertEqual('tcg', qemu['accel'])
        self.assertEqual('120', qemu['live_migration_completion_timeout'])
        self.assertIn('{host}', qemu['instances_path'])
        self.assertTrue(qemu['instances_path'].startswith('/tmp/'))
        # Room for a server uuid and qmp.sock under a unix socket's 108.
        path = os.path.join(real_guests_host(qemu, 'compute1'),
                            '0' * 36, 'qmp.sock')
        self.assertLess(len(path), 108)


def real_guests_host(qemu, host):
    return qemu['instances_path'].replace('{host}', host)


LOG = """\
2026-11-29 04:20:01.123 1234 INFO nova_moves.virt.qemu.migration [-] \
Live migration m-1 of s-1: 3.21s, downtime 41 ms, 270 MiB transferred
2026-11-29 04:20:09.000 1234 INFO nova_moves.virt.qemu.migration [-] \
Live migration m-2 of s-2: 7.50s, downtime None ms, 900 MiB transferred
2026-11-29 04:20:10.000 1234 INFO something else entirely
"""


class LogTest(testtools.TestCase):

    def test_parse_log(self):
        done = real_guests.parse_log(LOG)
        self.assertEqual({'server': 's-1', 'total_s': 3.21,
                          'downtime_ms': 41.0, 'mib': 270}, done['m-1'])
        self.assertIsNone(done['m-2']['downtime_ms'])
        self.assertEqual({}, real_guests.parse_log(''))
        self.assertEqual({}, real_guests.parse_log(None))

    def test_summarize_per_image(self):
        images = [{'name': 'd0', 'cmdline': 'dirty=0'},
                  {'name': 'd50', 'cmdline': 'dirty=50'}]
        servers = [{'id': 's-1', 'image': 'd0'}, {'id': 's-2', 'image': 'd0'},
                   {'id': 's-3', 'image': 'd50'}]
        migrations = [
            {'uuid': 'm-1', 'instance_uuid': 's-1', 'status': 'completed',
             'migration_type': 'live-migration'},
            {'uuid': 'm-2', 'instance_uuid': 's-2', 'status': 'completed',
             'migration_type': 'live-migration'},
            {'uuid': 'm-3', 'instance_uuid': 's-3', 'status': 'error',
             'migration_type': 'live-migration'},
            {'uuid': 'm-4', 'instance_uuid': 's-3', 'status': 'finished',
             'migration_type': 'migration'}]
        records = [{'operation': 'live-migrate', 'server': 's-1',
                    'e2e_s': 4.0},
                   {'operation': 'live-migrate', 'server': 's-2',
                    'e2e_s': 9.0},
                   {'operation': 'live-migrate', 'server': 's-3',
                    'e2e_s': None}]
        rows = real_guests.summarize(images, servers, migrations,
                                     real_guests.parse_log(LOG), records)
        d0, d50 = rows
        self.assertEqual({'completed': 2}, d0['statuses'])
        self.assertEqual((3.21, 7.5), (d0['total_p50_s'],
                                       d0['total_p99_s']))
        # m-2 has no downtime figure: the percentiles skip it.
        self.assertEqual((41, 41), (d0['downtime_p50_ms'],
                                    d0['downtime_p99_ms']))
        self.assertEqual(270, d0['mib_p50'])
        self.assertEqual((4.0, 9.0), (d0['e2e_p50_s'], d0['e2e_p99_s']))
        self.assertEqual({'error': 1}, d50['statuses'])
        self.assertEqual(1, d50['migrations'])
        self.assertIsNone(d50['total_p50_s'])
        text = '\n'.join(real_guests.render(rows))
        self.assertIn('dirty=50', text)
        self.assertIn('error:1', text)
        self.assertIn('completed:2', text)
        self.assertEqual([], real_guests.render([]))
        self.assertEqual([], real_guests.render(None))
