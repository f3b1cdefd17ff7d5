"""instance_create_in_quota on a real (SQLite) database: the check sees
the project's usage and refusing creates nothing; racing threads never
go past the limit and fill it exactly."""
import concurrent.futures

import testtools

from nova_moves.api import quota_rules
from nova_moves.db import api as db_api
from tests.unit import fixtures as nm_fixtures

FLAVOR = {'flavorid': '1', 'vcpus': 2, 'memory_mb': 256}
LIMITS = {'instances': 5, 'cores': -1, 'ram': -1}
DELTAS = {'instances': 1, 'cores': 2, 'ram': 256}


class InstanceCreateInQuotaTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(nm_fixtures.Database())

    def create(self, project='p1', limits=LIMITS):
        return db_api.instance_create_in_quota(
            {'display_name': 'vm', 'user_id': 'u', 'project_id': project,
             'vm_state': 'building', 'flavor': FLAVOR},
            lambda used: quota_rules.enforce(limits, DELTAS, used))

    def test_check_sees_usage_and_refusal_creates_nothing(self):
        seen = []
        db_api.instance_create_in_quota(
            {'display_name': 'vm', 'user_id': 'u', 'project_id': 'p1',
             'vm_state': 'building', 'flavor': FLAVOR}, seen.append)
        self.create()
        self.assertEqual([{'instances': 0, 'cores': 0, 'ram': 0}], seen)
        self.assertEqual({'instances': 2, 'cores': 4, 'ram': 512},
                         db_api.quota_usage('p1'))
        error = self.assertRaises(
            quota_rules.QuotaExceeded, self.create,
            limits=dict(LIMITS, cores=5))
        self.assertIn('Quota exceeded for cores: Requested 2, but already '
                      'used 4 of 5 cores', error.message)
        self.assertEqual(2, db_api.quota_usage('p1')['instances'])
        # Another project has its own count.
        self.create(project='p2')
        self.assertEqual(1, db_api.quota_usage('p2')['instances'])

    def test_racing_threads_fill_the_limit_exactly(self):
        def attempt(_i):
            try:
                self.create()
                return True
            except quota_rules.QuotaExceeded:
                return False

        with concurrent.futures.ThreadPoolExecutor(12) as pool:
            results = list(pool.map(attempt, range(20)))
        self.assertEqual(5, results.count(True))
        self.assertEqual(5, db_api.quota_usage('p1')['instances'])
