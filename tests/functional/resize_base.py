"""What the resize and cold-migrate tests (test_resize,
test_resize_reschedule, test_resize_concurrent) share: the moves as an
admin asks for them and what they left behind."""


def events_of(client, server_id, request_id):
    detail = client.action_detail(server_id, request_id)
    return [(e['event'], e['result']) for e in detail['events']]


class ResizeMixinTest:

    def resize(self, server, flavor, client=None, version=None):
        resp = (client or self.admin).action(
            server['id'], {'resize': {'flavorRef': flavor['id']}},
            version=version)
        self.assertEqual(202, resp.status_code, resp.text)
        self.assertEqual(b'', resp.content)
        return resp

    def migrate(self, server, body=None, version='2.56', expect=202):
        resp = self.admin.action(server['id'], {'migrate': body},
                                 version=version)
        self.assertEqual(expect, resp.status_code, resp.text)
        return resp

    def wait(self, server, status, timeout=60):
        return self.admin.wait_for_status(server['id'], status,
                                          timeout=timeout)

    def migration_of(self, server):
        migrations = self.admin.migrations(instance_uuid=server['id'])
        self.assertTrue(migrations, 'no migration for %s' % server['id'])
        return migrations[0]

    def boot_big(self, name, flavor, host=None, client=None):
        """A server that would crowd later tests: deleted after this one
        (before the invariants are checked)."""
        server = self.boot(name, flavor, host=host, client=client)
        self.addCleanup(self.admin.delete, '/servers/%s' % server['id'])
        return server

    def migration_status(self, server):
        migrations = self.admin.migrations(instance_uuid=server['id'])
        return migrations[0]['status'] if migrations else None

    def assert_rolled_back(self, server, source, before):
        """The server's move ended in error: the server ACTIVE on
        ``source`` again, placement as it was ``before``; the server."""
        self.admin.wait_for(
            lambda: self.migration_status(server) == 'error',
            what='migration error')
        back = self.wait(server, 'ACTIVE')
        self.assertEqual(source, back['OS-EXT-SRV-ATTR:host'])
        self.assertEqual(before, self.admin.placement()['allocations'])
        return back

    def confirm(self, server):
        resp = self.admin.action(server['id'], {'confirmResize': None})
        self.assertEqual(204, resp.status_code, resp.text)
        return self.wait(server, ('ACTIVE', 'SHUTOFF'))

    def other_host(self, host):
        return [h for h in self.stack.compute_hosts() if h != host][0]

    def disable_host(self, host):
        """``host``'s compute service disabled until the test's clean-up
        (the scheduler's ComputeFilter then refuses it)."""
        svc = [s for s in self.admin.services('nova-moves-compute')
               if s['host'] == host][0]
        self.admin.put('/os-services/%s' % svc['id'],
                       {'status': 'disabled', 'disabled_reason': 'test'},
                       version='2.53', expect=200)
        self.addCleanup(self.admin.put, '/os-services/%s' % svc['id'],
                        {'status': 'enabled'}, version='2.53')

    def assert_error_event(self, server, request_id, event):
        def finished():
            detail = self.admin.action_detail(server['id'], request_id)
            results = {e['event']: e for e in detail['events']}
            if results.get(event, {}).get('finish_time'):
                return detail, results
            return None
        detail, results = self.admin.wait_for(finished, timeout=30,
                                              what='event %s' % event)
        self.assertEqual('Error', results[event]['result'], detail)
        return results[event]
