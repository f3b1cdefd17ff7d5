"""SIGUSR2 asks any service for a Guru Meditation report (oslo.reports,
as Nova's services do): the report (threads, configuration, package)
goes to the service's stderr and the process keeps serving. Without a
handler, SIGUSR2's default action killed every service silently."""
import signal
import time

from tests.functional import base


class GuruMeditationTest(base.StackTestCase):
    COMPUTES = 1

    def test_sigusr2_reports_and_the_process_lives(self):
        names = sorted(self.stack.processes)
        for name in names:
            self.stack.processes[name].signal(signal.SIGUSR2)
        for name in names:
            self.admin.wait_for(
                lambda: 'Guru Meditation' in self.stack.log(name),
                timeout=30, interval=0.5, what='report of %s' % name)
        time.sleep(1)
        for name in names:
            self.assertTrue(self.stack.processes[name].alive(), name)
        log = self.stack.log('conductor1')
        self.assertIn('Threads', log)
        self.assertIn('Configuration', log)
        # Still serving: a boot goes through every process.
        server = self.boot('after-report')
        self.admin.delete('/servers/%s' % server['id'], expect=204)
