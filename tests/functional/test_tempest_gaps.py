"""What tempest's compute modules found missing or wrong
(doc/tempest.md), on real processes through HTTP: changePassword,
restore, the adminPass of a create, the disk config of a rebuild, the
networking actions injectNetworkInfo and add/removeSecurityGroup, and
the snapshot image a shelve leaves
(``<name>-shelved``, GET /images, gone after the unshelve)."""
from tests.functional import base

OWNER = 'alice:proj-a'
OTHER = 'bob:proj-b'


class NetworkActionsTest(base.StackTestCase):

    COMPUTES = 1

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.owner = cls.admin.as_user(OWNER)

    def test_inject_network_info_is_admin_only(self):
        sid = self.boot('inject', client=self.owner)['id']
        self.owner.action(sid, {'injectNetworkInfo': None}, expect=403)
        self.admin.action(sid, {'injectNetworkInfo': None}, expect=202)
        self.admin.action(sid, {'injectNetworkInfo': {}}, expect=202)
        self.admin.action(sid, {'injectNetworkInfo': {'x': 1}}, expect=400)
        self.admin.action('no-such-server', {'injectNetworkInfo': None},
                          expect=404)
        # Nothing happened to the server, and Nova records no action.
        server = self.admin.server(sid, version='2.47')
        self.assertEqual(('ACTIVE', None), (
            server['status'], server['OS-EXT-STS:task_state']))
        self.assertEqual(['create'], [
            a['action'] for a in self.admin.actions(sid)])

    def test_change_password_is_nova_s_state_rules(self):
        sid = self.boot('password', client=self.owner)['id']
        for body in ({'changePassword': None}, {'changePassword': {}},
                     {'changePassword': {'adminPass': 5}},
                     {'changePassword': {'adminPass': 'p', 'x': 1}}):
            self.owner.action(sid, body, expect=400)
        self.owner.action(sid, {'changePassword': {'adminPass': 's3cret'}},
                          expect=202)
        server = self.owner.server(sid, version='2.47')
        self.assertEqual(('ACTIVE', None), (
            server['status'], server['OS-EXT-STS:task_state']))
        self.assertEqual(['changePassword', 'create'], [
            a['action'] for a in self.admin.actions(sid)])
        self.owner.action(sid, {'os-stop': None}, expect=202)
        self.admin.wait_for_status(sid, 'SHUTOFF', timeout=30)
        # Only an ACTIVE server, as Nova; nothing recorded for the 409.
        self.owner.action(sid, {'changePassword': {'adminPass': 'x'}},
                          expect=409)
        self.assertEqual(['stop', 'changePassword', 'create'], [
            a['action'] for a in self.admin.actions(sid)])
        self.assertNotIn('s3cret', self.stack.log('api'))

    def test_restore_is_409_nothing_is_soft_deleted(self):
        sid = self.boot('restore', client=self.owner)['id']
        self.owner.action(sid, {'restore': None}, expect=409)
        self.owner.action(sid, {'restore': {'x': 1}}, expect=400)
        self.owner.action('no-such-server', {'restore': None}, expect=404)
        self.assertEqual('ACTIVE', self.owner.server(sid)['status'])

    def test_force_delete_is_the_delete(self):
        sid = self.boot('forced', client=self.owner)['id']
        self.admin.as_user(OTHER).action(sid, {'forceDelete': None},
                                         expect=404)
        self.owner.action(sid, {'forceDelete': {'x': 1}}, expect=400)
        self.owner.action('no-such-server', {'forceDelete': None},
                          expect=404)
        self.owner.action(sid, {'forceDelete': None}, expect=202)
        self.admin.wait_for(lambda: self.owner.get(
            '/servers/%s' % sid).status_code == 404, timeout=30,
            what='deleted')

    def test_create_naming_an_unknown_security_group_is_400(self):
        base = {'name': 'sg', 'flavorRef': self.flavor('small')['id'],
                'imageRef': 'fake', 'networks': 'none'}
        before = len(self.owner.get('/servers', expect=200).json()[
            'servers'])
        for groups in ([{'name': 'web'}], [{'name': 'default'}, {}],
                       [{'name': 'default'}, {'name': 'x' * 300}]):
            self.owner.post('/servers', {'server': dict(
                base, security_groups=groups)}, version='2.37', expect=400)
        self.assertEqual(before, len(self.owner.get(
            '/servers', expect=200).json()['servers']))
        created = self.owner.post('/servers', {'server': dict(
            base, security_groups=[{'name': 'default'}])}, version='2.37',
            expect=202).json()['server']
        self.admin.wait_for_status(created['id'], 'ACTIVE', timeout=30)

    def test_create_answers_the_admin_password_given(self):
        body = {'server': {'name': 'pw', 'flavorRef': self.flavor(
            'small')['id'], 'imageRef': 'fake', 'networks': 'none',
            'adminPass': 'testpassword'}}
        created = self.owner.post('/servers', body, version='2.37',
                                  expect=202).json()['server']
        self.assertEqual('testpassword', created['adminPass'])
        self.admin.wait_for_status(created['id'], 'ACTIVE', timeout=30)

    def test_rebuild_keeps_the_disk_config_asked(self):
        sid = self.boot('dcf', client=self.owner)['id']
        image = self.owner.server(sid)['image']['id']
        for config in ('AUTO', 'MANUAL'):
            rebuilt = self.owner.action(sid, {'rebuild': {
                'imageRef': image, 'OS-DCF:diskConfig': config}},
                expect=202).json()['server']
            self.assertEqual(config, rebuilt['OS-DCF:diskConfig'])
            self.admin.wait_for_status(sid, 'ACTIVE', timeout=30)
            self.assertEqual(config, self.owner.server(sid)[
                'OS-DCF:diskConfig'])

    def test_remove_and_add_the_default_security_group(self):
        sid = self.boot('secgroups', client=self.owner)['id']
        self.assertEqual([{'name': 'default'}],
                         self.owner.server(sid)['security_groups'])
        for body, status in (
                ({'removeSecurityGroup': {'name': 'web'}}, 404),
                ({'addSecurityGroup': {'name': 'web'}}, 404),
                ({'removeSecurityGroup': {}}, 400),
                ({'removeSecurityGroup': {'name': ''}}, 400),
                ({'addSecurityGroup': None}, 400),
                ({'addSecurityGroup': {'name': 'default', 'x': 1}}, 400)):
            self.owner.action(sid, body, expect=status)
        self.admin.as_user(OTHER).action(
            sid, {'removeSecurityGroup': {'name': 'default'}}, expect=404)
        self.owner.action(sid, {'removeSecurityGroup': {'name': 'default'}},
                          expect=202)
        # Nova leaves the key out for a server in no group.
        self.assertNotIn('security_groups', self.owner.server(sid))
        detail = self.owner.get('/servers/detail', expect=200).json()
        self.assertNotIn('security_groups', [
            s for s in detail['servers'] if s['id'] == sid][0])
        self.owner.action(sid, {'removeSecurityGroup': {'name': 'default'}},
                          expect=404)
        self.owner.action(sid, {'addSecurityGroup': {'name': 'default'}},
                          expect=202)
        self.owner.action(sid, {'addSecurityGroup': {'name': 'default'}},
                          expect=202)
        self.assertEqual([{'name': 'default'}],
                         self.owner.server(sid)['security_groups'])


class ShelveSnapshotImageTest(base.StackTestCase):

    COMPUTES = 1

    def images(self, client, **params):
        return client.get('/images', params=params,
                          expect=200).json()['images']

    def test_shelve_leaves_an_image_until_the_unshelve(self):
        owner = self.admin.as_user(OWNER)
        sid = self.boot('keeper', client=owner)['id']
        self.assertEqual([], self.images(owner, name='keeper-shelved'))
        owner.action(sid, {'shelve': None}, expect=202)
        self.admin.wait_for_status(sid, 'SHELVED_OFFLOADED', timeout=30)
        images = self.images(owner, name='keeper-shelved')
        self.assertEqual(1, len(images), images)
        image = images[0]
        self.assertEqual(('private', 'active', sid), (
            image['visibility'], image['status'], image['instance_uuid']))
        shown = owner.get('/images/%s' % image['id'], expect=200).json()
        self.assertEqual('keeper-shelved', shown['name'])
        # Another project does not see it; an admin does.
        other = self.admin.as_user(OTHER)
        self.assertEqual([], self.images(other, name='keeper-shelved'))
        other.get('/images/%s' % image['id'], expect=404)
        self.assertEqual(1, len(self.images(self.admin,
                                            name='keeper-shelved')))
        owner.action(sid, {'unshelve': None}, expect=202)
        self.admin.wait_for_status(sid, 'ACTIVE', timeout=30)
        owner.get('/images/%s' % image['id'], expect=404)
        self.assertEqual([], self.images(owner, name='keeper-shelved'))
        # A second shelve is a second snapshot, with a new id.
        owner.action(sid, {'shelve': None}, expect=202)
        self.admin.wait_for_status(sid, 'SHELVED_OFFLOADED', timeout=30)
        again = self.images(owner, name='keeper-shelved')
        self.assertEqual(1, len(again))
        self.assertNotEqual(image['id'], again[0]['id'])
        # Deleting the shelved server deletes its snapshot too.
        owner.delete('/servers/%s' % sid, expect=204)
        self.admin.wait_for(lambda: not self.images(
            owner, name='keeper-shelved'), timeout=30, what='image gone')
