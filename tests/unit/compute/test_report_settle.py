"""A compute shown down must settle (remove evacuated copies) before its
report counts: the conductor's side on a real SQLite database, the
compute's side with the conductor faked."""
import datetime
import threading

import testtools

from nova_moves.compute import manager as compute_manager
from nova_moves.conductor import db_proxy
from nova_moves import conf
from nova_moves import states
from nova_moves.db import api as db_api
from tests.unit import fixtures as nm_fixtures

CONF = conf.CONF
COMPUTE = 'nova-moves-compute'


def _evacuating(host):
    """An evacuation away from ``host`` still in flight: the server is
    not landed elsewhere yet."""
    flavor = db_api.flavor_create({
        'flavorid': 'f1', 'name': 'small', 'vcpus': 1, 'memory_mb': 512,
        'root_gb': 1})
    instance = db_api.instance_create({
        'display_name': 'vm', 'user_id': 'u', 'project_id': 'p',
        'vm_state': 'active', 'task_state': 'rebuilding',
        'host': host, 'node': host, 'flavor': flavor})
    return db_api.migration_create({
        'instance_uuid': instance['uuid'], 'source_compute': host,
        'dest_compute': 'h2', 'migration_type': states.EVACUATION,
        'status': states.M_PRE_MIGRATING})


class ConductorSideTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        CONF([], project='nova_moves', default_config_files=[])
        self.useFixture(nm_fixtures.Database())
        self.proxy = db_proxy.ComputeDBProxy()

    def _last_seen(self):
        return db_api.service_get_by_host_and_binary('h1', COMPUTE)[
            'last_seen_up']

    def _age(self, seconds):
        service = db_api.service_get_by_host_and_binary('h1', COMPUTE)
        stamp = datetime.datetime.now(datetime.timezone.utc).replace(
            tzinfo=None) - datetime.timedelta(seconds=seconds)
        db_api.service_update(service['id'], {'last_seen_up': stamp})

    def test_up_host_reports(self):
        self.proxy.service_report(None, 'h1', COMPUTE, 'compute')
        answer = self.proxy.service_report(None, 'h1', COMPUTE, 'compute',
                                           settled=False)
        self.assertNotIn('settle_first', answer)

    def test_silent_host_must_settle_first(self):
        self.proxy.service_report(None, 'h1', COMPUTE, 'compute')
        migration = _evacuating('h1')
        self._age(CONF.service_down_time + 5)
        before = self._last_seen()
        answer = self.proxy.service_report(None, 'h1', COMPUTE, 'compute',
                                           settled=False)
        self.assertEqual((True, [migration['uuid']]), (
            answer['settle_first'],
            [m['uuid'] for m in answer['evacuations']]))
        self.assertEqual(before, self._last_seen())  # nothing recorded
        self.proxy.service_report(None, 'h1', COMPUTE, 'compute',
                                  settled=True)
        self.assertNotEqual(before, self._last_seen())

    def test_forced_down_host_must_settle_first(self):
        self.proxy.service_report(None, 'h1', COMPUTE, 'compute')
        _evacuating('h1')
        service = db_api.service_get_by_host_and_binary('h1', COMPUTE)
        db_api.service_update(service['id'], {'forced_down': True})
        self.assertTrue(self.proxy.service_report(
            None, 'h1', COMPUTE, 'compute', settled=False)['settle_first'])

    def test_shown_down_with_nothing_to_clean_reports_at_once(self):
        self.proxy.service_report(None, 'h1', COMPUTE, 'compute')
        self._age(CONF.service_down_time + 5)
        before = self._last_seen()
        answer = self.proxy.service_report(None, 'h1', COMPUTE, 'compute',
                                           settled=False)
        self.assertNotIn('settle_first', answer)
        self.assertNotEqual(before, self._last_seen())

    def test_older_compute_without_settled_still_counts(self):
        """Rolling upgrade: a compute below 1.5 sends no ``settled``."""
        self.proxy.service_report(None, 'h1', COMPUTE, 'compute')
        self._age(CONF.service_down_time + 5)
        before = self._last_seen()
        self.proxy.service_report(None, 'h1', COMPUTE, 'compute')
        self.assertNotEqual(before, self._last_seen())


class _Conductor:
    def __init__(self, answers):
        self.answers = list(answers)
        self.sent = []

    def service_report(self, ctxt, host, binary, topic, **kwargs):
        self.sent.append(kwargs['settled'])
        return self.answers.pop(0)


class _Driver:
    def node_info(self):
        return {'availability_zone': 'nova'}


class _Fence:
    def reported(self, forced_down=False):
        pass


class ComputeSideTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        CONF([], project='nova_moves', default_config_files=[])

    def _manager(self, answers):
        manager = compute_manager.ComputeManager.__new__(
            compute_manager.ComputeManager)
        manager.host = 'h1'
        manager.driver = _Driver()
        manager.conductor = _Conductor(answers)
        manager.fence = _Fence()
        manager.settled = []
        manager.before_reporting_up = \
            lambda ctxt, evacuations=None: manager.settled.append(ctxt)
        return manager

    def test_settles_then_reports_again(self):
        manager = self._manager([{'settle_first': True},
                                 {'conductors': ['c1']}])
        answer = manager.report('ctxt', 'h1', COMPUTE, 'compute')
        self.assertEqual({'conductors': ['c1']}, answer)
        self.assertEqual([False, True], manager.conductor.sent)
        self.assertEqual(['ctxt'], manager.settled)

    def test_up_host_does_not_settle(self):
        manager = self._manager([{'conductors': ['c1']}])
        manager.report('ctxt', 'h1', COMPUTE, 'compute')
        self.assertEqual([False], manager.conductor.sent)
        self.assertEqual([], manager.settled)


class ForcedDownHeartbeatTest(testtools.TestCase):
    """A compute forced down (an operator's force-down while evacuating
    it) keeps its heartbeat: each report must be one call to the
    conductors once nothing evacuated away is left to clean, and the
    evacuations it waits for are watched by one thread, not one more per
    report. The conductor's side is real (SQLite); the compute reaches it
    without RPC, counting the calls."""

    def setUp(self):
        super().setUp()
        CONF([], project='nova_moves', default_config_files=[])
        self.useFixture(nm_fixtures.Database())
        self.proxy = db_proxy.ComputeDBProxy()
        self.calls = []
        proxy, calls = self.proxy, self.calls

        class Conductor:
            def __getattr__(self, name):
                method = getattr(proxy, name)

                def call(ctxt, *args, **kwargs):
                    calls.append(name)
                    kwargs.pop('timeout', None)
                    kwargs.pop('server', None)
                    if name == 'migration_get_all':
                        return method(ctxt, kwargs)
                    return method(ctxt, *args, **kwargs)
                return call

        self.manager = compute_manager.ComputeManager(
            'h1', driver=_Driver(), conductor=Conductor(),
            compute_api=object(), compute_task_api=object())
        proxy.service_report(None, 'h1', COMPUTE, 'compute')
        service = db_api.service_get_by_host_and_binary('h1', COMPUTE)
        db_api.service_update(service['id'], {'forced_down': True})

    def _report(self):
        del self.calls[:]
        self.manager.report('ctxt', 'h1', COMPUTE, 'compute')
        return list(self.calls)

    def test_one_call_per_heartbeat_with_nothing_to_clean(self):
        for _ in range(3):
            self.assertEqual(['service_report'], self._report())

    def test_one_watch_thread_for_an_evacuation_in_flight(self):
        _evacuating('h1')
        started = threading.Event()
        release = threading.Event()
        watchers = []

        def watch(ctxt, waiting, timeout=None):
            watchers.append(list(waiting))
            started.set()
            release.wait(10)
        self.manager.evacuation_cleanup._watch_evacuations = watch
        self.addCleanup(release.set)
        self._report()
        self.assertTrue(started.wait(5))
        for _ in range(3):
            # Told what to settle: no call of its own to find out.
            self.assertEqual(['service_report', 'service_report'],
                             self._report())
        self.assertEqual(1, len(watchers))
