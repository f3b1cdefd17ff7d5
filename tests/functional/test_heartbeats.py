"""A compute's heartbeat does not depend on one conductor answering
(issue 17): with two conductors, one that hangs and is then killed must
not get the computes shown down.

A compute's heartbeat is an RPC call to the conductors' shared topic; the
broker hands about half of them to the hung conductor, which never
answers. The compute gives each heartbeat a short timeout and sends it
again at once, so another conductor takes it well within
service_down_time (10 s here). Before, the call waited
rpc_response_timeout (30 s here) and the computes were shown down."""
import signal
import time

from tests.functional import base

HANG = 14  # seconds conductor1 hangs (SIGSTOP) before it is SIGKILLed


class HeartbeatTest(base.StackTestCase):
    COMPUTES = 2
    CONDUCTORS = 2

    def _computes_down(self):
        return sorted(s['host'] for s in self.admin.services()
                      if s['binary'] == 'nova-compute' and
                      s['state'] != 'up')

    def _watch(self, seconds, seen):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            down = self._computes_down()
            if down:
                seen.append((round(time.monotonic() - self.t0, 1), down))
            time.sleep(0.5)

    def test_conductor_hung_then_killed_computes_stay_up(self):
        self.assertEqual([], self._computes_down())
        proc = self.stack.processes['conductor1']
        proc.stopped_on_purpose = True
        self.addCleanup(self._restore)
        self.t0 = time.monotonic()
        seen = []
        proc.signal(signal.SIGSTOP)
        self._watch(HANG, seen)
        self.stack.kill('conductor1', signal.SIGKILL)
        self._watch(12, seen)
        self.assertEqual([], seen)

    def _restore(self):
        proc = self.stack.processes['conductor1']
        proc.signal(signal.SIGCONT)
        self.stack.restart('conductor1')
        self.stack.wait_until_ready(60)
