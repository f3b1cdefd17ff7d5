"""A compute that is cut off while alive and running its guests (here
frozen with SIGSTOP: silent, its guests still on its "disk") is forced
down by the operator and its server evacuated; then it comes back
WITHOUT a restart. Its heartbeat notices it was silent for longer than
service_down_time and removes the copies of the servers evacuated away
before it reports again, so no server ever runs twice (Nova cleans up
only when the compute restarts)."""
import signal
import time

from tests.functional import evacuate_base


class PartitionHealTest(evacuate_base.EvacuateBase):
    COMPUTES = 2

    def test_evacuated_copy_removed_before_reporting_up(self):
        server = self.boot('cut-off', host='compute2')
        proc = self.stack.processes['compute2']
        pid = proc.popen.pid
        self.stack.kill('compute2', signal.SIGSTOP, wait=0)

        def thaw():
            proc.signal(signal.SIGCONT)
            proc.stopped_on_purpose = False
        self.addCleanup(thaw)
        self.admin.wait_for(lambda: self.service('compute2')['state'] ==
                            'down', timeout=60, interval=0.5,
                            what='compute2 down')
        self.set_forced_down('compute2', True)
        self.addCleanup(self.set_forced_down, 'compute2', False)
        self.admin.action(server['id'], {'evacuate': {}}, version='2.68',
                          expect=200)
        moved = self.admin.wait_for_status(server['id'], 'ACTIVE',
                                           timeout=60)
        self.assertEqual('compute1', moved['OS-EXT-SRV-ATTR:host'])
        # The cut-off host still has its copy (it never heard).
        self.assertIn(server['id'], self.local_guests('compute2'))
        thaw()
        # Cleaned up without a restart, then reporting again.
        self.admin.wait_for(
            lambda: server['id'] not in self.local_guests('compute2'),
            timeout=30, interval=0.2, what='copy on compute2 removed')
        self.assertEqual(pid, proc.popen.pid)
        self.assertTrue(proc.alive())
        log = self.stack.log('compute2')
        self.assertLess(log.index('settling what happened meanwhile'),
                        log.index('Destroying local copy of %s'
                                  % server['id']))
        evacuation = [m for m in self.admin.migrations(
            instance_uuid=server['id'])
            if m['migration_type'] == 'evacuation'][0]
        self.admin.wait_for(
            lambda: [m for m in self.admin.migrations(
                instance_uuid=server['id'])
                if m['uuid'] == evacuation['uuid']][0]['status'] ==
            'completed', timeout=30, what='evacuation completed')
        self.set_forced_down('compute2', False)
        self.admin.wait_for(lambda: self.service('compute2')['state'] ==
                            'up', timeout=30, what='compute2 up')
        time.sleep(1)
        self.admin.delete('/servers/%s' % server['id'], expect=204)
