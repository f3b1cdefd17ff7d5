"""The lifecycle actions on real processes (API, conductor, scheduler,
two computes, RabbitMQ, SQLite) through HTTP: each action's happy path
with its status, power state, guest on the fake hypervisor and instance
action; Nova's 409 state rules; live migration of a PAUSED server
(Nova allows it; it stays PAUSED on the destination); a lock stops the
owner's moves and delete but not the admin; os-resetState ends a stuck
move as move_failed does."""
from tests.functional import base

OWNER = 'alice:proj-a'


class LifecycleTest(base.StackTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.owner = cls.admin.as_user(OWNER)

    def power(self, server_id):
        host = self.admin.server(server_id)['OS-EXT-SRV-ATTR:host']
        return host, self.local_guests(host).get(server_id, {}).get('power')

    def act(self, server_id, body, expect=202, client=None, version=None):
        return (client or self.admin).action(server_id, body,
                                             version=version, expect=expect)

    def settle(self, server_id, status):
        return self.admin.wait_for_status(server_id, status, timeout=30)

    def action_names(self, server_id):
        return [a['action'] for a in self.admin.actions(server_id)]

    def test_pause_unpause_suspend_resume(self):
        sid = self.boot('pause')['id']
        self.act(sid, {'pause': None})
        server = self.settle(sid, 'PAUSED')
        self.assertEqual((3, 'paused'), (server['OS-EXT-STS:power_state'],
                                         self.power(sid)[1]))
        # Nova's state rules: nothing but unpause (or a hard reboot).
        for body in ({'pause': None}, {'suspend': None}, {'resume': None},
                     {'reboot': {'type': 'SOFT'}}):
            self.act(sid, body, expect=409)
        self.act(sid, {'unpause': None})
        server = self.settle(sid, 'ACTIVE')
        self.assertEqual((1, 'running'), (server['OS-EXT-STS:power_state'],
                                          self.power(sid)[1]))
        self.act(sid, {'unpause': None}, expect=409)
        self.act(sid, {'suspend': None})
        server = self.settle(sid, 'SUSPENDED')
        self.assertEqual((7, 'suspended'),
                         (server['OS-EXT-STS:power_state'],
                          self.power(sid)[1]))
        for body in ({'pause': None}, {'unpause': None},
                     {'migrate': None}, {'reboot': {'type': 'SOFT'}}):
            self.act(sid, body, expect=409)
        self.act(sid, {'resume': None})
        self.settle(sid, 'ACTIVE')
        self.assertEqual('running', self.power(sid)[1])
        self.assertEqual(['resume', 'suspend', 'unpause', 'pause', 'create'],
                         self.action_names(sid))
        detail = self.admin.action_detail(
            sid, self.admin.actions(sid)[0]['request_id'])
        self.assertEqual([('compute_resume_instance', 'Success')],
                         [(e['event'], e['result'])
                          for e in detail['events']])

    def test_reboot_soft_and_hard(self):
        sid = self.boot('reboot')['id']
        self.act(sid, {'reboot': {'type': 'SOFT'}})
        self.settle(sid, 'ACTIVE')
        self.act(sid, {'os-stop': None})
        self.settle(sid, 'SHUTOFF')
        # A stopped server: no soft reboot; a hard one starts it (Nova).
        self.act(sid, {'reboot': {'type': 'SOFT'}}, expect=409)
        self.act(sid, {'reboot': {'type': 'HARD'}})
        server = self.settle(sid, 'ACTIVE')
        self.assertEqual((1, 'running'), (server['OS-EXT-STS:power_state'],
                                          self.power(sid)[1]))
        self.assertEqual(['reboot', 'stop', 'reboot', 'create'],
                         self.action_names(sid))

    def test_reboot_status_while_rebooting(self):
        sid = self.boot('slow-reboot')['id']
        host = self.admin.server(sid)['OS-EXT-SRV-ATTR:host']
        self.admin.set_faults(host, [], {'reboot_hard': 2.0})
        self.addCleanup(self.admin.set_faults, host, [], {})
        self.act(sid, {'reboot': {'type': 'HARD'}})
        self.assertEqual('HARD_REBOOT', self.admin.server(sid)['status'])
        self.act(sid, {'pause': None}, expect=409)
        self.settle(sid, 'ACTIVE')

    def test_rebuild_same_host(self):
        server = self.boot('rebuild')
        sid, host = server['id'], server['OS-EXT-SRV-ATTR:host']
        body = self.act(sid, {'rebuild': {'imageRef': 'fake2',
                                          'name': 'rebuilt'}},
                        version='2.75').json()['server']
        self.assertEqual(('REBUILD', 'rebuilt'), (body['status'],
                                                  body['name']))
        self.assertIn('adminPass', body)
        self.act(sid, {'pause': None}, expect=409)
        server = self.settle(sid, 'ACTIVE')
        self.assertEqual((host, 'fake2', 'rebuilt'), (
            server['OS-EXT-SRV-ATTR:host'], server['image']['id'],
            server['name']))
        # A stopped server is rebuilt and stays stopped.
        self.act(sid, {'os-stop': None})
        self.settle(sid, 'SHUTOFF')
        self.act(sid, {'rebuild': {'imageRef': 'fake'}})
        self.settle(sid, 'SHUTOFF')
        self.assertEqual('shutdown', self.power(sid)[1])
        self.act(sid, {'os-start': None})
        self.settle(sid, 'ACTIVE')

    def test_live_migrate_paused_server_stays_paused(self):
        server = self.boot('paused-live')
        sid, source = server['id'], server['OS-EXT-SRV-ATTR:host']
        self.act(sid, {'pause': None})
        self.settle(sid, 'PAUSED')
        self.act(sid, {'os-migrateLive': {'host': None,
                                          'block_migration': 'auto'}},
                 version='2.34')
        self.admin.wait_for(
            lambda: self.admin.server(sid)['OS-EXT-SRV-ATTR:host'] !=
            source, timeout=30, what='the move')
        server = self.settle(sid, 'PAUSED')
        dest = server['OS-EXT-SRV-ATTR:host']
        self.assertNotEqual(source, dest)
        self.assertEqual(3, server['OS-EXT-STS:power_state'])
        self.assertEqual('paused', self.local_guests(dest)[sid]['power'])
        self.admin.wait_for(lambda: sid not in self.local_guests(source),
                            timeout=20, what='source copy removed')
        migration = [m for m in self.admin.migrations(instance_uuid=sid)
                     if m['migration_type'] == 'live-migration'][0]
        self.assertEqual('completed', migration['status'])
        self.act(sid, {'unpause': None})
        self.settle(sid, 'ACTIVE')
        self.assertEqual('running', self.local_guests(dest)[sid]['power'])

    def test_lock_blocks_the_owners_moves_not_the_admin(self):
        sid = self.boot('locked', client=self.owner)['id']
        self.act(sid, {'lock': {'locked_reason': 'audit'}},
                 client=self.owner, version='2.73')
        shown = self.owner.server(sid, version='2.73')
        self.assertEqual((True, 'audit'), (shown['locked'],
                                           shown['locked_reason']))
        bigger = self.flavor('bigger', ram=1024)
        for body in ({'resize': {'flavorRef': bigger['id']}},
                     {'pause': None}, {'os-stop': None},
                     {'reboot': {'type': 'HARD'}}):
            response = self.act(sid, body, expect=409, client=self.owner)
            self.assertIn('is locked', response.text)
        self.owner.delete('/servers/%s' % sid, expect=409)
        self.assertEqual('ACTIVE', self.admin.server(sid)['status'])
        # The admin still moves it (Nova: locks bind non-admins).
        self.act(sid, {'migrate': None})
        self.settle(sid, 'VERIFY_RESIZE')
        self.act(sid, {'confirmResize': None}, expect=204)
        self.settle(sid, 'ACTIVE')
        self.act(sid, {'unlock': None}, client=self.owner)
        self.owner.delete('/servers/%s' % sid, expect=204)

    def test_reset_state_ends_a_stuck_move(self):
        server = self.boot('stuck')
        sid, source = server['id'], server['OS-EXT-SRV-ATTR:host']
        # The destination's finish step takes long enough to reset under.
        for host in ('compute1', 'compute2'):
            self.admin.set_faults(host, [], {'finish_migration': 5.0})
            self.addCleanup(self.admin.set_faults, host, [], {})
        self.act(sid, {'migrate': None})
        self.admin.wait_for(
            lambda: self.admin.server(sid)['OS-EXT-STS:task_state'] ==
            'resize_finish', timeout=30, what='resize_finish')
        self.act(sid, {'os-resetState': {'state': 'active'}})
        server = self.admin.server(sid)
        self.assertEqual(('ACTIVE', None, source),
                         (server['status'], server['OS-EXT-STS:task_state'],
                          server['OS-EXT-SRV-ATTR:host']))
        migration = self.admin.migrations(instance_uuid=sid)[0]
        self.assertEqual('error', migration['status'])
        # The late finish step finds the move ended and drops it; the
        # guest is put right by a hard reboot, as an operator would.
        self.act(sid, {'reboot': {'type': 'HARD'}})
        self.settle(sid, 'ACTIVE')
        self.assertEqual('running', self.power(sid)[1])

    def test_shelve_offloads_and_unshelve_is_a_move(self):
        """[compute] shelved_offload_time = 0 (Nova's default): a shelve
        gives the host and the allocation up; an unshelve is placed by
        the scheduler, here on the host asked at 2.91."""
        server = self.boot('shelve')
        sid, first = server['id'], server['OS-EXT-SRV-ATTR:host']
        self.act(sid, {'shelve': None})
        server = self.settle(sid, 'SHELVED_OFFLOADED')
        self.assertIsNone(server['OS-EXT-SRV-ATTR:host'])
        self.assertNotIn(sid, self.local_guests(first))
        self.assertEqual({}, self.admin.placement()['allocations'].get(
            sid, {}))
        for body in ({'pause': None}, {'os-start': None},
                     {'shelve': None}, {'migrate': None}):
            self.act(sid, body, expect=409)
        other = 'compute2' if first == 'compute1' else 'compute1'
        self.act(sid, {'unshelve': {'host': 'nowhere'}}, expect=400,
                 version='2.91')
        # A dry run first (as the other moves; Nova blueprint "Check the
        # destination host when migrating"): nothing moves.
        verdict = self.act(sid, {'unshelve': {'host': other, 'check': True}},
                           expect=200, version='2.91').json()
        self.assertEqual({'valid': True, 'reasons': []}, verdict)
        self.assertEqual('SHELVED_OFFLOADED', self.admin.server(sid)['status'])
        self.act(sid, {'unshelve': {'host': other}}, version='2.91')
        server = self.settle(sid, 'ACTIVE')
        self.assertEqual(other, server['OS-EXT-SRV-ATTR:host'])
        self.assertEqual('running', self.local_guests(other)[sid]['power'])
        self.assertEqual(['unshelve', 'shelve', 'create'],
                         self.action_names(sid))
        self.act(sid, {'unshelve': None}, expect=409)
        verdict = self.act(sid, {'unshelve': {'host': first,
                                              'check': True}},
                           expect=200, version='2.91').json()
        self.assertFalse(verdict['valid'])
        self.assertIn('vm_state active', verdict['reasons'][0])

    def test_unshelve_with_no_valid_host_stays_offloaded(self):
        sid = self.boot('shelve-novalid')['id']
        self.act(sid, {'shelve': None})
        self.settle(sid, 'SHELVED_OFFLOADED')
        self.act(sid, {'unshelve': {'availability_zone': 'no-such-zone'}},
                 version='2.77')
        self.admin.wait_for(
            lambda: self.admin.server(sid)['OS-EXT-STS:task_state'] is None,
            timeout=30, what='unshelve given up')
        server = self.admin.server(sid)
        self.assertEqual(('SHELVED_OFFLOADED', None), (
            server['status'], server['OS-EXT-SRV-ATTR:host']))
        self.assertEqual({}, self.admin.placement()['allocations'].get(
            sid, {}))
        self.act(sid, {'unshelve': {'availability_zone': None}},
                 version='2.91')
        self.settle(sid, 'ACTIVE')


class ShelveKeptTest(base.StackTestCase):
    """shelved_offload_time = -1: a shelved server keeps its host until
    shelveOffload."""

    EXTRA_CONF = {'compute': {'shelved_offload_time': -1}}

    def test_shelve_keep_then_offload_then_unshelve(self):
        server = self.boot('kept')
        sid, host = server['id'], server['OS-EXT-SRV-ATTR:host']
        self.admin.action(sid, {'shelve': None}, expect=202)
        server = self.admin.wait_for_status(sid, 'SHELVED')
        self.assertEqual((host, 4), (server['OS-EXT-SRV-ATTR:host'],
                                     server['OS-EXT-STS:power_state']))
        self.assertEqual('shutdown', self.local_guests(host)[sid]['power'])
        self.assertTrue(self.admin.placement()['allocations'].get(sid))
        # A zone is only for an offloaded server.
        self.admin.action(sid, {'unshelve': {'availability_zone': 'nova'}},
                          version='2.77', expect=409)
        self.admin.action(sid, {'unshelve': None}, expect=202)
        server = self.admin.wait_for_status(sid, 'ACTIVE')
        self.assertEqual(host, server['OS-EXT-SRV-ATTR:host'])
        self.assertEqual('running', self.local_guests(host)[sid]['power'])
        self.admin.action(sid, {'shelve': None}, expect=202)
        self.admin.wait_for_status(sid, 'SHELVED')
        self.admin.as_user(OWNER).action(sid, {'shelveOffload': None},
                                         expect=404)
        self.admin.action(sid, {'shelveOffload': None}, expect=202)
        server = self.admin.wait_for_status(sid, 'SHELVED_OFFLOADED')
        self.assertIsNone(server['OS-EXT-SRV-ATTR:host'])
        self.assertEqual({}, self.admin.placement()['allocations'].get(
            sid, {}))
        self.admin.action(sid, {'unshelve': {'availability_zone': 'nova'}},
                          version='2.77', expect=202)
        self.admin.wait_for_status(sid, 'ACTIVE')
        self.assertEqual(['unshelve', 'shelveOffload', 'shelve', 'unshelve',
                          'shelve', 'create'],
                         [a['action'] for a in self.admin.actions(sid)])


class UnshelveServerGroupTest(base.StackTestCase):
    """Unshelve is a scheduled move: it honours the server's group."""

    def test_unshelve_never_joins_an_anti_affine_member(self):
        group = self.admin.post('/os-server-groups', {'server_group': {
            'name': 'apart', 'policy': 'anti-affinity'}}, version='2.64',
            expect=200).json()['server_group']
        ids = []
        for name in ('a', 'b'):
            body = self.admin.post('/servers', {
                'server': {'name': name, 'flavorRef': self.flavor('small')[
                    'id'], 'imageRef': 'fake', 'networks': 'none'},
                'os:scheduler_hints': {'group': group['id']}},
                expect=202).json()['server']
            ids.append(self.admin.wait_for_status(body['id'], 'ACTIVE')[
                'id'])
        a_host = self.admin.server(ids[0])['OS-EXT-SRV-ATTR:host']
        self.admin.action(ids[1], {'shelve': None}, expect=202)
        self.admin.wait_for_status(ids[1], 'SHELVED_OFFLOADED')
        # Asked onto its anti-affine peer's host: the scheduler refuses,
        # the server stays offloaded with nothing claimed.
        self.admin.action(ids[1], {'unshelve': {'host': a_host}},
                          version='2.91', expect=202)
        self.admin.wait_for(
            lambda: self.admin.server(ids[1])['OS-EXT-STS:task_state'] is
            None, timeout=30, what='unshelve refused')
        self.assertEqual('SHELVED_OFFLOADED', self.admin.server(ids[1])[
            'status'])
        self.assertEqual({}, self.admin.placement()['allocations'].get(
            ids[1], {}))
        self.admin.action(ids[1], {'unshelve': None}, expect=202)
        server = self.admin.wait_for_status(ids[1], 'ACTIVE')
        self.assertNotEqual(a_host, server['OS-EXT-SRV-ATTR:host'])
