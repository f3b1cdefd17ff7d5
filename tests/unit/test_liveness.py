"""Up, down or unknown: a silence this process could not see through
(its own broker connection or heartbeat, or every compute heartbeat
stale together) makes stale hosts unknown until they had
service_down_time to report (issue 37). Nova calls them down."""
import datetime
import logging

import oslo_messaging as messaging
from oslo_messaging._drivers import impl_rabbit
import sqlalchemy as sa
import testtools

from nova_moves.conductor import unknown_hosts
from nova_moves.db import api as db_api
from nova_moves.db import models
from nova_moves import exception
from nova_moves import liveness
from nova_moves import servicegroup
from tests.unit import fixtures as nm_fixtures

COMPUTE = 'nova-moves-compute'


def _age(host, seconds):
    """``host``'s last heartbeat ``seconds`` ago."""
    with db_api._session() as session:
        session.execute(sa.update(models.Service).where(
            models.Service.host == host).values(
            last_seen_up=db_api.utcnow() - datetime.timedelta(
                seconds=seconds)))


class LivenessTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.Database())
        self.useFixture(nm_fixtures.Override('service_down_time', 10))
        self.group = servicegroup.ServiceGroup()
        self.addCleanup(self.group.stop)
        self.observer = self.group.observer
        for host in ('h1', 'h2', 'h3'):
            nm_fixtures.compute(host)

    def _state(self, host):
        return self.group.state(
            db_api.service_get_by_host_and_binary(host, COMPUTE))

    def test_one_silent_host_is_down(self):
        _age('h1', 30)
        self.assertEqual(['down', 'up', 'up'],
                         [self._state(h) for h in ('h1', 'h2', 'h3')])

    def test_fleet_silence_makes_hosts_unknown_until_grace(self):
        _age('h3', 200)  # down long before the silence
        _age('h1', 15)
        _age('h2', 14)
        # Every compute stale together: not evidence that they died.
        self.assertEqual(['unknown', 'unknown', 'down'],
                         [self._state(h) for h in ('h1', 'h2', 'h3')])
        # One reports again: the others have service_down_time to
        # follow, the one down before stays down.
        db_api.service_report('h2', COMPUTE, 'compute')
        self.group.fleet_watch.check(force=True)
        self.assertEqual(['unknown', 'up', 'down'],
                         [self._state(h) for h in ('h1', 'h2', 'h3')])
        # After the grace, silent is down again.
        observer = self.observer
        later = db_api.utcnow() + datetime.timedelta(seconds=11)
        self.assertIsNone(observer.unknown_since(later))
        service = db_api.service_get_by_host_and_binary('h1', COMPUTE)
        self.assertEqual('down', observer.state_of(
            db_api._parse_time(service['last_seen_up']), False, later))

    def test_window_closes_when_half_of_the_hosts_are_back(self):
        nm_fixtures.compute('h4')
        for host in ('h1', 'h2', 'h3', 'h4'):
            _age(host, 15)
        self.assertEqual('unknown', self._state('h1'))
        # The first heartbeat after the outage: the conductors may not
        # answer the others yet; the window stays open.
        db_api.service_report('h2', COMPUTE, 'compute')
        self.group.fleet_watch.check(force=True)
        self.assertIsNotNone(
            self.observer.blind_since(liveness.FLEET))
        self.assertEqual(['unknown', 'up', 'unknown'],
                         [self._state(h) for h in ('h1', 'h2', 'h4')])
        db_api.service_report('h4', COMPUTE, 'compute')
        self.group.fleet_watch.check(force=True)
        self.assertIsNone(self.observer.blind_since(liveness.FLEET))
        # In the grace that follows: still unknown.
        self.assertEqual(['unknown', 'unknown'],
                         [self._state('h1'), self._state('h3')])

    def test_forced_down_is_down(self):
        self.observer.cut(liveness.BROKER)
        service = db_api.service_get_by_host_and_binary('h1', COMPUTE)
        db_api.service_update(service['id'], {'forced_down': True})
        self.assertEqual('down', self._state('h1'))

    def test_own_broker_outage_seen_in_the_driver_log(self):
        # The logger the RabbitMQ driver really logs to.
        self.assertEqual(liveness._RABBIT_LOGGER,
                         impl_rabbit.LOG.logger.name)
        # The group installed its watch; stop() removes it.
        rabbit = logging.getLogger(liveness._RABBIT_LOGGER)
        rabbit.setLevel(logging.INFO)
        self.addCleanup(rabbit.setLevel, logging.NOTSET)
        rabbit.error('[%(connection_id)s] AMQP server on %(hostname)s:'
                     '%(port)s is unreachable: %(err_str)s. Trying again '
                     'in %(sleep_time)d seconds.',
                     {'connection_id': 'c', 'hostname': 'h', 'port': 1,
                      'err_str': 'refused', 'sleep_time': 1})
        since = self.observer.blind_since(liveness.BROKER)
        self.assertIsNotNone(since)
        # Seen as if the cut had come 5 s ago: the others last reported
        # before it, h1 was up when it came (silent 7 s then).
        self.observer.reset()
        self.observer.cut(liveness.BROKER, since=db_api.utcnow() -
                          datetime.timedelta(seconds=5))
        _age('h1', 12)
        _age('h2', 6)
        _age('h3', 6)
        self.assertEqual(['unknown', 'up'],
                         [self._state('h1'), self._state('h2')])
        # One silent for longer than service_down_time when the cut
        # came was down already.
        _age('h1', 16)
        self.assertEqual('down', self._state('h1'))
        _age('h1', 12)
        rabbit.info('[%(connection_id)s] Reconnected to AMQP server on '
                    '%(hostname)s:%(port)s', {'connection_id': 'c',
                                              'hostname': 'h', 'port': 1})
        self.assertIsNone(self.observer.blind_since(liveness.BROKER))
        # Within the grace after the reconnection: still unknown.
        self.assertEqual('unknown', self._state('h1'))

    def test_each_group_owns_its_window(self):
        # Two groups in one process (the in-process fixture's conductor
        # and scheduler): one's cut is not the other's; stop() takes its
        # broker watch off the process-wide logger.
        other = servicegroup.ServiceGroup()
        self.addCleanup(other.stop)
        # Its own heartbeat failed 5 s ago; h1 was up then.
        other.observer.cut(liveness.REPORT, since=db_api.utcnow() -
                           datetime.timedelta(seconds=5))
        _age('h1', 12)
        self.assertEqual('down', self._state('h1'))
        self.assertEqual('unknown', other.state(
            db_api.service_get_by_host_and_binary('h1', COMPUTE)))
        rabbit = logging.getLogger(liveness._RABBIT_LOGGER)
        watches = [f for f in rabbit.filters
                   if isinstance(f, liveness.BrokerLogWatch)]
        other.stop()
        self.assertEqual(len(watches) - 1, len(
            [f for f in rabbit.filters
             if isinstance(f, liveness.BrokerLogWatch)]))

    def test_heartbeat_after_the_cut_ends_a_broker_window(self):
        # A reconnection the log level hid: a compute heartbeat recorded
        # after the cut proves the broker path works again.
        self.observer.cut(liveness.BROKER, since=db_api.utcnow() -
                          datetime.timedelta(seconds=5))
        self.group.fleet_watch.check(force=True)
        self.assertIsNone(self.observer.blind_since(liveness.BROKER))


class WaitingSchedulerTest(testtools.TestCase):

    class Scheduler:
        def __init__(self, unknown_times):
            self.unknown_times = unknown_times
            self.calls = 0

        def select_destinations(self, ctxt, spec, uuids,
                                return_alternates=True):
            self.calls += 1
            if self.calls <= self.unknown_times:
                raise exception.HostsUnknown(hosts='h1')
            return [[{'host': 'h1'}]]

        def check_destination(self, *args):
            return 'passed through'

    def test_waits_while_hosts_are_unknown(self):
        self.useFixture(nm_fixtures.Override('report_interval', 1))
        inner = self.Scheduler(3)
        slept = []
        waiting = unknown_hosts.WaitingScheduler(inner, sleep=slept.append)
        self.assertEqual([[{'host': 'h1'}]],
                         waiting.select_destinations(None, {}, ['vm']))
        self.assertEqual((4, [1.0, 1.0, 1.0]), (inner.calls, slept))
        self.assertEqual('passed through', waiting.check_destination())

    def test_bounded(self):
        self.useFixture(nm_fixtures.Override('report_interval', 1))
        self.useFixture(nm_fixtures.Override('unknown_hosts_wait', 0,
                                             'conductor'))
        inner = self.Scheduler(100)
        waiting = unknown_hosts.WaitingScheduler(inner, sleep=lambda s: 0)
        self.assertRaises(exception.NoValidHost,
                          waiting.select_destinations, None, {}, ['vm'])
        self.assertEqual(1, inner.calls)
        # Never past half the stuck-move timeout (the sweep's).
        self.useFixture(nm_fixtures.Override('unknown_hosts_wait', 600,
                                             'conductor'))
        self.useFixture(nm_fixtures.Override('stuck_move_timeout', 30))
        self.assertEqual(15.0, unknown_hosts.wait_bound())


class LostReplyTest(nm_fixtures.TwoHostsTestCase):
    """A select_destinations reply lost in a broker outage: asked
    again; the claim the first call made is the answer."""

    class Scheduler:
        def __init__(self, *outcomes):
            self.outcomes = list(outcomes)

        def select_destinations(self, ctxt, spec, uuids,
                                return_alternates=True):
            raise self.outcomes.pop(0)

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.Override('report_interval', 1))

    def _select(self, uuid, *outcomes):
        waiting = unknown_hosts.WaitingScheduler(
            self.Scheduler(*outcomes), sleep=lambda s: None)
        return waiting.select_destinations(
            None, {'consumer_generation': 1, 'ignore_hosts': ['h1']},
            [uuid])

    def test_claim_of_the_lost_call_is_the_answer(self):
        uuid = self.boot_on_h1(None)
        db_api.allocations_replace(uuid, {self.rps['h2']: {'VCPU': 1}})
        conflict = exception.ConsumerGenerationConflict(
            consumer=uuid, expected=1, actual=2)
        selections = self._select(uuid, messaging.MessagingTimeout(),
                                  conflict)
        self.assertEqual([[{'host': 'h2', 'nodename': 'h2',
                            'compute_node_uuid': self.rps['h2'],
                            'allocation_request': {
                                self.rps['h2']: {'VCPU': 1}}}]],
                         selections)

    def test_conflict_without_a_claim_is_raised(self):
        # The move was rolled back: the server's allocation is on its
        # own host again.
        uuid = self.boot_on_h1(None)
        conflict = exception.ConsumerGenerationConflict(
            consumer=uuid, expected=1, actual=2)
        self.assertRaises(exception.ConsumerGenerationConflict, self._select,
                          uuid, messaging.MessagingTimeout(), conflict)
        # And a conflict with no lost reply before it is never guessed at.
        db_api.allocations_replace(uuid, {self.rps['h2']: {'VCPU': 1}})
        self.assertRaises(exception.ConsumerGenerationConflict, self._select,
                          uuid, conflict)


class EvacuationCheckTest(testtools.TestCase):
    """Evacuation needs a source that is down, not one that is only
    unknown (Nova evacuates it, and two copies run)."""

    def test_unknown_source_is_refused(self):
        from nova_moves.api import evacuate as api_evacuate
        from nova_moves.api import servicegroup_cache
        client = nm_fixtures.api_on_database(self)
        self.useFixture(nm_fixtures.Override('service_down_time', 10))
        for host in ('h1', 'h2'):
            nm_fixtures.compute(host)
        instance = {'uuid': 'vm', 'host': 'h1'}
        with client.application.app_context():
            # The API app's own group (what _check_source_down asks).
            group = servicegroup_cache._group()
            self.addCleanup(group.stop)
            self.assertRaises(api_evacuate.ComputeServiceInUse,
                              api_evacuate._check_source_down, instance)
            # Every host silent together (a broker outage): unknown.
            _age('h1', 15)
            _age('h2', 15)
            group.fleet_watch.check(force=True)
            exc = self.assertRaises(api_evacuate.ComputeServiceUnknown,
                                    api_evacuate._check_source_down,
                                    instance)
            self.assertIn('may still be in use', str(exc))
            # h2 alone silent, h1 reporting for long: h2 is down.
            group.fleet_watch.reset()
            db_api.service_report('h1', COMPUTE, 'compute')
            api_evacuate._check_source_down({'uuid': 'vm', 'host': 'h2'})
