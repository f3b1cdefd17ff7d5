"""A compute shown down must settle (remove evacuated copies) before its
report counts: the conductor's side on a real SQLite database, the
compute's side with the conductor faked."""
import datetime

import testtools

from nova_moves.compute import manager as compute_manager
from nova_moves.conductor import db_proxy
from nova_moves import conf
from nova_moves.db import api as db_api
from tests.unit import fixtures as nm_fixtures

CONF = conf.CONF
COMPUTE = 'nova-moves-compute'


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
        self._age(CONF.service_down_time + 5)
        before = self._last_seen()
        answer = self.proxy.service_report(None, 'h1', COMPUTE, 'compute',
                                           settled=False)
        self.assertEqual({'settle_first': True}, answer)
        self.assertEqual(before, self._last_seen())  # nothing recorded
        self.proxy.service_report(None, 'h1', COMPUTE, 'compute',
                                  settled=True)
        self.assertNotEqual(before, self._last_seen())

    def test_forced_down_host_must_settle_first(self):
        self.proxy.service_report(None, 'h1', COMPUTE, 'compute')
        service = db_api.service_get_by_host_and_binary('h1', COMPUTE)
        db_api.service_update(service['id'], {'forced_down': True})
        self.assertEqual({'settle_first': True}, self.proxy.service_report(
            None, 'h1', COMPUTE, 'compute', settled=False))

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
        manager.settled = []
        manager.before_reporting_up = manager.settled.append
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
