"""Versioned notifications, consumed from a real queue on the stack's
broker (an oslo.messaging notification listener on the topic
versioned_notifications, as ceilometer would bind one)."""
import collections
import threading

from oslo_config import cfg
import oslo_messaging as messaging

from nova_moves import rpc as nm_rpc
from tests.functional import evacuate_base

TOPIC = 'versioned_notifications'


class Collector:
    """Notifications by instance uuid, in arrival order."""

    def __init__(self):
        self.lock = threading.Lock()
        self.by_server = collections.defaultdict(list)

    def _add(self, priority, publisher_id, event_type, payload):
        uuid = (payload.get('nova_object.data') or {}).get('uuid')
        with self.lock:
            self.by_server[uuid].append({
                'priority': priority, 'publisher_id': publisher_id,
                'event_type': event_type, 'payload': payload})

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        self._add('INFO', publisher_id, event_type, payload)

    def error(self, ctxt, publisher_id, event_type, payload, metadata):
        self._add('ERROR', publisher_id, event_type, payload)

    def of(self, uuid):
        with self.lock:
            return list(self.by_server[uuid])


class NotificationsTest(evacuate_base.EvacuateBase):

    COMPUTES = 2
    EXTRA_CONF = {'notifications': {'notification_format': 'versioned'}}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        conf = cfg.ConfigOpts()
        conf([], project='nova_moves-test-listener')
        # A consumer of the exchange declares it as the services do
        # (durable, since topic queues are quorum queues by default).
        nm_rpc.set_defaults(conf)
        cls.transport = messaging.get_notification_transport(
            conf, url=cls.stack.transport_url)
        cls.collector = Collector()
        # The queue exists before anything is sent: nothing is missed.
        cls.listener = messaging.get_notification_listener(
            cls.transport, [messaging.Target(topic=TOPIC,
                                             exchange='nova_moves')],
            [cls.collector], executor='threading')
        cls.listener.start()

    @classmethod
    def tearDownClass(cls):
        cls.listener.stop()
        cls.listener.wait()
        cls.transport.cleanup()
        super().tearDownClass()

    def wait_events(self, uuid, *event_types):
        """Every one of ``event_types`` arrived for ``uuid``: the
        notifications of the server so far, in arrival order."""
        def arrived():
            got = self.collector.of(uuid)
            names = [n['event_type'] for n in got]
            return got if all(e in names for e in event_types) else None
        return self.admin.wait_for(arrived, timeout=30,
                                   what='notifications %s' % (event_types,))

    def names(self, uuid, prefix):
        return [n['event_type'] for n in self.collector.of(uuid)
                if n['event_type'].startswith(prefix)]

    def assert_steps(self, uuid, prefix, actions):
        """Each action's .start then .end, exactly once each, and the
        actions started in this order."""
        names = self.names(uuid, prefix)
        self.assertEqual(sorted('instance.%s.%s' % (a, p) for a in actions
                                for p in ('start', 'end')), sorted(names))
        for action in actions:
            self.assertLess(names.index('instance.%s.start' % action),
                            names.index('instance.%s.end' % action), names)
        starts = [names.index('instance.%s.start' % a) for a in actions]
        self.assertEqual(sorted(starts), starts, names)

    def test_create_then_resize_confirm_and_revert(self):
        small = self.flavor('small')
        medium = self.flavor('medium', 2, 1024)
        server = self.boot('n-resize', small)
        sid = server['id']
        got = self.wait_events(sid, 'instance.create.start',
                               'instance.create.end')
        end = [n for n in got if n['event_type'] == 'instance.create.end'][0]
        self.assertEqual('INFO', end['priority'])
        self.assertEqual('nova-compute:%s' % server['OS-EXT-SRV-ATTR:host'],
                         end['publisher_id'])
        payload = end['payload']
        self.assertEqual(('InstanceActionPayload', 'nova'), (
            payload['nova_object.name'], payload['nova_object.namespace']))
        self.assertIn('nova_object.version', payload)
        data = payload['nova_object.data']
        self.assertEqual((sid, 'active', None, 'running'), (
            data['uuid'], data['state'], data['task_state'],
            data['power_state']))
        self.assertEqual('FlavorPayload', data['flavor']['nova_object.name'])
        self.assertEqual(small['name'],
                         data['flavor']['nova_object.data']['name'])

        self.admin.action(sid, {'resize': {'flavorRef': medium['id']}},
                          expect=202)
        self.admin.wait_for_status(sid, 'VERIFY_RESIZE')
        self.admin.action(sid, {'confirmResize': None}, expect=204)
        got = self.wait_events(sid, 'instance.resize_confirm.end')
        # Steps on two hosts overlap (prep_resize casts resize_instance
        # before its .end): the order holds per step, and step to step.
        self.assert_steps(sid, 'instance.resize', [
            'resize_prep', 'resize', 'resize_finish', 'resize_confirm'])
        prep = [n for n in got
                if n['event_type'] == 'instance.resize_prep.start'][0]
        self.assertEqual('InstanceActionResizePrepPayload',
                         prep['payload']['nova_object.name'])
        self.assertEqual(medium['name'], prep['payload']['nova_object.data'][
            'new_flavor']['nova_object.data']['name'])
        self.admin.wait_for_status(sid, 'ACTIVE')

        self.admin.action(sid, {'resize': {'flavorRef': small['id']}},
                          expect=202)
        self.admin.wait_for_status(sid, 'VERIFY_RESIZE')
        self.admin.action(sid, {'revertResize': None}, expect=202)
        self.wait_events(sid, 'instance.resize_revert.end')
        self.assertEqual(['instance.resize_revert.start',
                          'instance.resize_revert.end'],
                         self.names(sid, 'instance.resize_revert'))
        self.admin.wait_for_status(sid, 'ACTIVE')
        self.admin.delete('/servers/%s' % sid, expect=204)

    def test_failed_resize_is_an_error_notification(self):
        server = self.boot('n-fail')
        sid, source = server['id'], server['OS-EXT-SRV-ATTR:host']
        self.admin.set_faults(source, ['migrate_disk_and_power_off'])
        self.addCleanup(self.admin.set_faults, source, [])
        self.admin.action(sid, {'migrate': None}, expect=202)
        got = self.wait_events(sid, 'instance.resize.error')
        error = [n for n in got
                 if n['event_type'] == 'instance.resize.error'][0]
        self.assertEqual('ERROR', error['priority'])
        fault = error['payload']['nova_object.data']['fault']
        self.assertEqual('ExceptionPayload', fault['nova_object.name'])
        self.assertEqual('HypervisorOperationFailed',
                         fault['nova_object.data']['exception'])
        self.admin.wait_for_status(sid, 'ACTIVE')
        self.assertNotIn('instance.resize.end', self.names(sid, 'instance.'))
        self.admin.delete('/servers/%s' % sid, expect=204)

    def test_live_migration_then_abort(self):
        server = self.boot('n-live', host='compute1')
        sid = server['id']
        self.admin.action(sid, {'os-migrateLive': {
            'host': 'compute2', 'block_migration': 'auto'}}, version='2.80',
            expect=202)
        self.wait_events(sid, 'instance.live_migration_post.end',
                         'instance.live_migration_post_dest.end')
        self.assert_steps(sid, 'instance.live_migration', [
            'live_migration_pre', 'live_migration_post',
            'live_migration_post_dest'])
        names = self.names(sid, 'instance.live_migration')
        # The source's post step encloses the destination's (a call).
        self.assertGreater(
            names.index('instance.live_migration_post.end'),
            names.index('instance.live_migration_post_dest.end'), names)
        self.admin.wait_for(
            lambda: self.admin.server(sid)['OS-EXT-SRV-ATTR:host'] ==
            'compute2' and self.admin.server(sid)[
                'OS-EXT-STS:task_state'] is None, what='moved')

        # A slow transfer, aborted: abort, then the rollback on both.
        self.admin.set_faults('compute2', [], {'live_migration': 5})
        self.addCleanup(self.admin.set_faults, 'compute2', [], {})
        self.admin.action(sid, {'os-migrateLive': {
            'host': 'compute1', 'block_migration': 'auto'}}, version='2.80',
            expect=202)
        migration = self.admin.wait_for(
            lambda: [m for m in self.admin.migrations(instance_uuid=sid)
                     if m['status'] == 'running'], what='running')[0]
        self.admin.delete('/servers/%s/migrations/%s' % (sid, migration['id']),
                          version='2.80', expect=202)
        self.wait_events(sid, 'instance.live_migration_abort.end',
                         'instance.live_migration_rollback.end',
                         'instance.live_migration_rollback_dest.end')
        self.assertNotIn('instance.live_migration_rollback.error',
                         self.names(sid, 'instance.'))
        self.admin.wait_for_status(sid, 'ACTIVE')
        self.admin.delete('/servers/%s' % sid, expect=204)

    def test_evacuate_is_a_rebuild_then_stop_and_start(self):
        server = self.boot('n-evac', host='compute1')
        sid = server['id']
        self.fail_host('compute1')
        self.evacuate(sid, {'host': 'compute2'}, '2.95')
        got = self.wait_events(sid, 'instance.rebuild.start',
                               'instance.rebuild.end')
        end = [n for n in got if n['event_type'] == 'instance.rebuild.end']
        self.assertEqual('InstanceActionRebuildPayload',
                         end[0]['payload']['nova_object.name'])
        self.assertEqual('nova-compute:compute2', end[0]['publisher_id'])
        self.admin.wait_for_status(sid, 'SHUTOFF')
        self.admin.action(sid, {'os-start': None}, expect=202)
        self.admin.wait_for_status(sid, 'ACTIVE')
        self.admin.action(sid, {'os-stop': None}, expect=202)
        self.admin.wait_for_status(sid, 'SHUTOFF')
        self.wait_events(sid, 'instance.power_off.end')
        self.assertEqual(['instance.power_on.start', 'instance.power_on.end',
                          'instance.power_off.start',
                          'instance.power_off.end'],
                         self.names(sid, 'instance.power_o'))
        self.admin.delete('/servers/%s' % sid, expect=204)

    def test_lifecycle_actions_notify_like_nova(self):
        sid = self.boot('n-life', host='compute2')['id']
        for body, status in (({'pause': None}, 'PAUSED'),
                             ({'unpause': None}, 'ACTIVE'),
                             ({'suspend': None}, 'SUSPENDED'),
                             ({'resume': None}, 'ACTIVE'),
                             ({'reboot': {'type': 'SOFT'}}, 'ACTIVE'),
                             ({'rebuild': {'imageRef': 'fake'}}, 'ACTIVE')):
            self.admin.action(sid, body, expect=202)
            self.admin.wait_for_status(sid, status)
        self.wait_events(sid, 'instance.rebuild.end')
        for action in ('pause', 'unpause', 'suspend', 'resume', 'reboot',
                       'rebuild'):
            self.assertEqual(['instance.%s.start' % action,
                              'instance.%s.end' % action],
                             self.names(sid, 'instance.%s.' % action))
        paused = [n for n in self.collector.of(sid)
                  if n['event_type'] == 'instance.pause.end'][0]
        self.assertEqual(('paused', 'paused'), (
            paused['payload']['nova_object.data']['state'],
            paused['payload']['nova_object.data']['power_state']))
        self.admin.delete('/servers/%s' % sid, expect=204)
