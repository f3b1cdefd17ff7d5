"""The evacuation tests' shared base: a stack whose source compute can
be killed, forced down and brought back (tests/functional/test_evacuate.py
and the modules that evacuate in their own scenarios)."""
import sys
import time

from tests.functional import base

COMPUTE = 'nova-compute'  # os-services' name of nova-moves-compute


class EvacuateBase(base.StackTestCase):

    def service(self, host):
        return [s for s in self.admin.services(COMPUTE)
                if s['host'] == host][0]

    def set_forced_down(self, host, forced):
        self.admin.put('/os-services/%s' % self.service(host)['id'],
                       {'forced_down': forced}, version='2.53', expect=200)

    def wait_service_state(self, host, state, timeout=30):
        return self.admin.wait_for(
            lambda: self.service(host)['state'] == state, timeout=timeout,
            interval=0.2, what='%s %s' % (host, state))

    def fail_host(self, host, force_down=True):
        """Kill the compute process of ``host``; restore it afterwards
        (restart, then unforce) so the next test finds a sane stack."""
        self.stack.kill(host)
        self.addCleanup(self.restore_host, host)
        if force_down:
            self.set_forced_down(host, True)
            self.assertEqual('down', self.service(host)['state'])

    def restore_host(self, host):
        if not self.stack.processes[host].alive():
            self.stack.restart(host)
        self.set_forced_down(host, False)
        self.wait_service_state(host, 'up')
        # Whatever was evacuated away is cleaned up by init_host.
        self.admin.wait_for(
            lambda: not [m for m in self.admin.migrations(
                migration_type='evacuation')
                if m['source_compute'] == host and m['status'] in
                ('accepted', 'pre-migrating', 'done')],
            timeout=30, what='evacuations from %s settled' % host)

    def evacuate(self, server_id, body, version, expect=200):
        started = time.monotonic()
        response = self.admin.action(server_id, {'evacuate': body},
                                     version=version, expect=expect)
        self.latencies.append(time.monotonic() - started)
        return response

    def setUp(self):
        super().setUp()
        self.latencies = []

    def evacuation_of(self, server_id):
        migrations = [m for m in self.admin.migrations(
            instance_uuid=server_id) if m['migration_type'] == 'evacuation']
        return migrations[0] if migrations else None

    def wait_evacuated(self, server_id, statuses=('ACTIVE',), timeout=60):
        started = time.monotonic()
        server = self.admin.wait_for_status(server_id, statuses,
                                            timeout=timeout)
        self.admin.wait_for(
            lambda: self.evacuation_of(server_id)['status'] in
            ('done', 'completed', 'error', 'failed'),
            timeout=timeout, what='migration of %s settled' % server_id)
        return server, time.monotonic() - started

    def report(self, what, seconds):
        sys.stderr.write('\nMEASURED %s: %.3fs\n' % (what, seconds))
