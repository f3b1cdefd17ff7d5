"""The versioned notifications' envelope and when .start/.end/.error go
out (the broker side is tests/functional/test_notifications.py)."""
import testtools

from nova_moves import conf
from nova_moves import context as nm_context
from nova_moves import notifications

SERVER = {'uuid': 'u1', 'display_name': 'vm', 'host': 'h1', 'node': 'h1',
          'project_id': 'p', 'user_id': 'u', 'vm_state': 'active',
          'task_state': None, 'power_state': 1,
          'flavor': {'flavorid': 'f1', 'name': 'small', 'memory_mb': 512,
                     'vcpus': 1, 'root_gb': 1},
          'new_flavor': {'flavorid': 'f2', 'name': 'big', 'memory_mb': 1024,
                         'vcpus': 2, 'root_gb': 1},
          'created_at': '2026-11-25T12:00:00'}


class _Sent:
    def __init__(self):
        self.sent = []

    def info(self, ctxt, event_type, payload):
        self.sent.append(('INFO', event_type, payload))

    def error(self, ctxt, event_type, payload):
        self.sent.append(('ERROR', event_type, payload))


class NotificationsTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        conf.CONF.set_override('notification_format', 'versioned',
                               group='notifications')
        self.addCleanup(conf.CONF.clear_override, 'notification_format',
                        group='notifications')
        self.notifier = notifications.Notifier('h1', lambda c, u: SERVER)
        self.out = _Sent()
        self.notifier._get = lambda: self.out
        self.ctxt = nm_context.RequestContext(user_id='u', project_id='p')

    def events(self):
        return [(p, e) for p, e, _ in self.out.sent]

    def test_envelope_and_payload(self):
        self.notifier.instance_action(self.ctxt, 'u1', 'resize_prep',
                                      'start')
        _, name, payload = self.out.sent[0]
        self.assertEqual('instance.resize_prep.start', name)
        self.assertEqual('InstanceActionResizePrepPayload',
                         payload['nova_object.name'])
        self.assertEqual('nova', payload['nova_object.namespace'])
        data = payload['nova_object.data']
        self.assertEqual(('u1', 'active', 'running', 'p', 'u'), (
            data['uuid'], data['state'], data['power_state'],
            data['tenant_id'], data['user_id']))
        self.assertEqual('big', data['new_flavor']['nova_object.data'][
            'name'])
        self.assertEqual('2026-11-25T12:00:00Z', data['created_at'])
        self.assertIsNone(data['fault'])

    def test_start_end_and_error_from_the_failure_path(self):
        self.notifier.run(self.ctxt, 'u1', 'resize', lambda: None)
        self.assertEqual([('INFO', 'instance.resize.start'),
                          ('INFO', 'instance.resize.end')], self.events())
        del self.out.sent[:]

        def failing_step():
            try:
                raise ValueError('disk copy failed')
            except ValueError as exc:
                self.notifier.step_failed(self.ctxt, 'u1', exc)
        self.notifier.run(self.ctxt, 'u1', 'resize', failing_step)
        self.assertEqual([('INFO', 'instance.resize.start'),
                          ('ERROR', 'instance.resize.error')], self.events())
        fault = self.out.sent[1][2]['nova_object.data']['fault']
        self.assertEqual('ValueError', fault['nova_object.data']['exception'])
        del self.out.sent[:]

        def raising():
            raise RuntimeError('boom')
        self.assertRaises(RuntimeError, self.notifier.run, self.ctxt, 'u1',
                          'create', raising)
        self.assertEqual([('INFO', 'instance.create.start'),
                          ('ERROR', 'instance.create.error')], self.events())

    def test_a_guarded_handler_reads_nothing_itself(self):
        fetched = []
        self.notifier.fetch = lambda c, u: fetched.append(u) or SERVER
        moving = dict(SERVER, task_state='resize_migrating')
        done = dict(SERVER, task_state='resize_migrated', host='h2')

        def step():
            self.notifier.saw(self.ctxt, {'instance': moving,
                                          'migration': {}})
            self.assertEqual([('INFO', 'instance.resize.start')],
                             self.events())
            self.notifier.saw(self.ctxt, {'instance': done, 'migration': {}})
        self.notifier.run(self.ctxt, 'u1', 'resize', step)
        self.assertEqual([], fetched)
        states = [(e, p['nova_object.data']['task_state'])
                  for _, e, p in self.out.sent]
        self.assertEqual([('instance.resize.start', 'resize_migrating'),
                          ('instance.resize.end', 'resize_migrated')],
                         states)
        # Not guarded (create): .start reads the server first.
        self.notifier.run(self.ctxt, 'u1', 'create',
                          lambda: self.notifier.saw(self.ctxt, done))
        self.assertEqual(['u1'], fetched)

    def test_a_rollback_is_not_its_own_error_and_off_sends_nothing(self):
        self.notifier.run(
            self.ctxt, 'u1', 'live_migration_rollback',
            lambda: self.notifier.step_failed(self.ctxt, 'u1',
                                              ValueError('why')))
        self.assertEqual([('INFO', 'instance.live_migration_rollback.start'),
                          ('INFO', 'instance.live_migration_rollback.end')],
                         self.events())
        conf.CONF.set_override('notification_format', 'none',
                               group='notifications')
        del self.out.sent[:]
        self.assertEqual(3, self.notifier.run(self.ctxt, 'u1', 'resize',
                                              lambda: 3))
        self.assertEqual([], self.out.sent)
