"""The 5xx tools/schema_check.py (schemathesis on a real stack) found,
each now Nova's 4xx naming the problem."""
import testtools

from tests.unit import fixtures as nm_fixtures

ADMIN = {'X-Auth-Token': 'admin:admin'}


class AuditLogBeforeYearOneTest(testtools.TestCase):
    """GET /os-instance_usage_audit_log/{before}: a timestamp with no
    complete period before it was a 500 (ValueError: year 0)."""

    def setUp(self):
        super().setUp()
        self.client = nm_fixtures.app_client(self, 'h1')

    def get(self, before):
        return self.client.get('/v2.1/os-instance_usage_audit_log/%s'
                               % before.replace(' ', '%20'),
                               headers=ADMIN)

    def test_no_period_before_is_400(self):
        for period, before in (('month', '0001-01-31 00:00:00'),
                               ('day', '0001-01-01 12:00:00'),
                               ('hour', '0001-01-01 00:30:00.5'),
                               ('year@6', '0002-03-01 00:00:00')):
            self.useFixture(nm_fixtures.Override(
                'instance_usage_audit_period', period))
            response = self.get(before)
            self.assertEqual(400, response.status_code,
                             (period, response.data))
            self.assertIn('no audit period completes before it',
                          response.get_json()['badRequest']['message'])

    def test_first_period_still_answers(self):
        response = self.get('0001-02-01 00:00:01')
        self.assertEqual(200, response.status_code, response.data)
        self.assertEqual('0001-01-01 00:00:00', response.get_json()[
            'instance_usage_audit_log']['period_beginning'])
