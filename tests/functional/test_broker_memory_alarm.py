"""A memory alarm on the (private) broker with moves in flight: the node
blocks every publishing connection (casts, calls, replies, heartbeats)
for ALARM seconds, longer than service_down_time, then the alarm is
lifted. Every move must end completed or cleanly rolled back, none stuck,
nothing leaked (test_broker_faults.BrokerFaultTest's load and checks).
Nothing is lost: a blocked publish is held by the publisher and sent
once the alarm ends, and quorum queues keep what was queued."""
import os
import time

from tests.functional import test_broker_faults

ALARM = float(os.environ.get('NOVA_MOVES_MEMORY_ALARM_SECONDS', '20'))


class BrokerMemoryAlarmTest(test_broker_faults.BrokerFaultTest):

    # Only the alarm here; BrokerFaultTest runs its own tests.
    test_broker_stopped_and_started = None
    test_broker_killed = None
    test_lost_finish_resize_does_not_stay_forever = None

    def test_memory_alarm_then_lifted(self):
        def alarm():
            self.broker.ctl('set_vm_memory_high_watermark', '0.00001')
            self.addCleanup(self.broker.ctl, 'set_vm_memory_high_watermark',
                            '0.4')
            time.sleep(ALARM)
            self.broker.ctl('set_vm_memory_high_watermark', '0.4')
        self.run_through(alarm)
