"""Faults and Error events as the owner sees them: Nova's message and
code, no traceback, no install path, no host name; admins keep details."""
import sys

import oslo_messaging
from oslo_messaging._drivers import common as rpc_common
import testtools

from nova_moves.db import api as db_api
from nova_moves import exception
from nova_moves import faultinfo
from tests.unit import fixtures as nm_fixtures

ADMIN = {'X-Auth-Token': 'admin:admin', 'OpenStack-API-Version':
         'compute 2.84'}
OWNER = {'X-Auth-Token': 'olga:proj-o', 'OpenStack-API-Version':
         'compute 2.84'}


def _remote(exc):
    """``exc`` as the caller of an RPC gets it back (oslo.messaging's
    serialisation: str() holds the remote traceback)."""
    try:
        raise exc
    except type(exc):
        data = rpc_common.serialize_remote_exception(sys.exc_info())
    return rpc_common.deserialize_remote_exception(
        data, ['nova_moves.exception'])


class FaultInfoTest(testtools.TestCase):

    def test_remote_no_valid_host(self):
        exc = _remote(exception.NoValidHost(reason='compute1 is full.'))
        self.assertIsInstance(exc, exception.NoValidHost)
        self.assertIn('Traceback', str(exc))
        fault = faultinfo.from_exc(exc, 'conductor1')
        self.assertEqual(500, fault['code'])  # Nova stores 500
        self.assertEqual('No valid host was found. compute1 is full.',
                         fault['message'])
        self.assertIn('Traceback', fault['details'])

    def test_foreign_exception_is_its_class_name(self):
        exc = _remote(oslo_messaging.MessagingTimeout('/opt/x.py on c1'))
        self.assertEqual('RemoteError', faultinfo.message(exc))
        self.assertEqual('KeyError', faultinfo.message(KeyError('/etc')))

    def test_owner_text(self):
        text = ('Migration of x from compute1 to compute10.lab failed\n'
                'Traceback (most recent call last):\n  File "/opt/a.py"')
        self.assertEqual('Migration of x from *** to *** failed',
                         faultinfo.owner_text(text, ['compute1',
                                                     'compute10.lab', None]))
        self.assertEqual('compute1x', faultinfo.owner_text('compute1x',
                                                           ['compute1']))
        self.assertEqual(255, len(faultinfo.owner_text('x' * 999)))

    def test_message_from_traceback(self):
        self.assertEqual('Fake hypervisor operation spawn failed on c1.',
                         faultinfo.message_from_traceback(
                             'Traceback...\n  File "/a.py"\nnova_moves.'
                             'exception.HypervisorOperationFailed: Fake '
                             'hypervisor operation spawn failed on c1.\n'))
        self.assertEqual('OSError', faultinfo.message_from_traceback(
            'Traceback\nOSError: [Errno 2] /var/lib/secret\n'))
        self.assertIsNone(faultinfo.message_from_traceback(None))


class WrittenAndShownTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.client = nm_fixtures.api_on_database(self)
        nm_fixtures.compute('compute1')
        self.instance = db_api.instance_create({
            'display_name': 'vm', 'user_id': 'olga', 'project_id': 'proj-o',
            'vm_state': 'error', 'task_state': None, 'host': 'compute1',
            'node': 'compute1', 'flavor': nm_fixtures.flavor()})

    def show(self, headers):
        return self.client.get('/v2.1/servers/%s' % self.instance['uuid'],
                               headers=headers).get_json()['server']

    def test_written_masked_details_kept(self):
        raw = ('Spawn failed on compute1\nTraceback (most recent call '
               'last):\n  File "/opt/nm/lib/python3/site-packages/x.py"')
        db_api.instance_fault_create(self.instance['uuid'], 500, raw,
                                     host='compute1')
        fault = db_api.instance_fault_get_latest(self.instance['uuid'])
        self.assertEqual('Spawn failed on ***', fault['message'])
        self.assertEqual(raw, fault['details'])
        owner = self.show(OWNER)['fault']
        self.assertEqual('Spawn failed on ***', owner['message'])
        self.assertNotIn('details', owner)
        self.assertEqual(raw, self.show(ADMIN)['fault']['details'])

    def test_rows_written_before_are_masked_when_shown(self):
        from nova_moves.db import models
        from nova_moves.db import session as db_session
        with db_session._session() as session:
            session.add(models.InstanceFault(
                instance_uuid=self.instance['uuid'], code=500,
                message='No valid host on compute1\nTraceback: /opt/x.py',
                details='tb', host='conductor'))
        self.assertEqual('No valid host on ***',
                         self.show(OWNER)['fault']['message'])
