"""The real python-openstackclient against our API: server resize,
resize confirm/revert, migrate [--host], migration list."""
import json
import os
import subprocess

from tests.functional import base
from tests.functional import test_openstackclient


class OpenStackClientResizeTest(base.StackTestCase):

    def osc(self, *args, version=None, check=True):
        argv = [test_openstackclient.openstack_binary(),
                '--os-auth-type', 'admin_token',
                '--os-token', 'admin:admin',
                '--os-endpoint', self.stack.endpoint]
        if version:
            argv += ['--os-compute-api-version', version]
        # Without Keystone, admin_token points every service at our
        # endpoint; `server migration list` insists on an identity v3
        # proxy (used only for --project/--user lookups), so name one.
        env = dict(os.environ, OS_IDENTITY_API_VERSION='3',
                   OS_IDENTITY_ENDPOINT_OVERRIDE=self.stack.endpoint)
        proc = subprocess.run(argv + list(args), capture_output=True,
                              text=True, timeout=120, env=env)
        if check:
            self.assertEqual(0, proc.returncode,
                             'openstack %s failed:\n%s\n%s' % (
                                 ' '.join(args), proc.stdout, proc.stderr))
        return proc

    def test_resize_confirm_and_revert(self):
        small, medium = self.flavor('small'), self.flavor('medium', 2, 1024)
        server = self.boot('osc-r', small)
        source = server['OS-EXT-SRV-ATTR:host']
        self.osc('server', 'resize', '--flavor', medium['id'], server['id'])
        resized = self.admin.wait_for_status(server['id'], 'VERIFY_RESIZE')
        self.assertNotEqual(source, resized['OS-EXT-SRV-ATTR:host'])
        self.osc('server', 'resize', 'confirm', server['id'])
        active = self.admin.wait_for_status(server['id'], 'ACTIVE')
        self.assertEqual(2, active['flavor']['vcpus'])

        large = self.flavor('large', 4, 2048)
        self.osc('server', 'resize', '--flavor', large['name'], server['id'])
        self.admin.wait_for_status(server['id'], 'VERIFY_RESIZE')
        self.osc('server', 'resize', 'revert', server['id'])
        reverted = self.admin.wait_for_status(server['id'], 'ACTIVE')
        self.assertEqual(2, reverted['flavor']['vcpus'])
        self.assertEqual(active['OS-EXT-SRV-ATTR:host'],
                         reverted['OS-EXT-SRV-ATTR:host'])

    def test_migrate_with_and_without_host_and_list(self):
        server = self.boot('osc-m')
        source = server['OS-EXT-SRV-ATTR:host']
        self.osc('server', 'migrate', server['id'])
        moved = self.admin.wait_for_status(server['id'], 'VERIFY_RESIZE')
        self.assertNotEqual(source, moved['OS-EXT-SRV-ATTR:host'])
        self.osc('server', 'resize', 'confirm', server['id'])
        self.admin.wait_for_status(server['id'], 'ACTIVE')

        self.osc('server', 'migrate', '--host', source, server['id'],
                 version='2.56')
        back = self.admin.wait_for_status(server['id'], 'VERIFY_RESIZE')
        self.assertEqual(source, back['OS-EXT-SRV-ATTR:host'])
        self.osc('server', 'resize', 'confirm', server['id'])
        self.admin.wait_for_status(server['id'], 'ACTIVE')

        # --host below 2.56 is refused by the client itself.
        proc = self.osc('server', 'migrate', '--host', source, server['id'],
                        version='2.55', check=False)
        self.assertNotEqual(0, proc.returncode)

        for version in ('2.1', '2.23', '2.59', '2.80'):
            out = self.osc('server', 'migration', 'list', '--server',
                           server['id'], '-f', 'json',
                           version=version).stdout
            rows = json.loads(out)
            self.assertEqual(2, len(rows), (version, rows))
            self.assertEqual({'confirmed'}, {r['Status'] for r in rows})
        out = self.osc('server', 'migration', 'list', '--host', source,
                       '--status', 'confirmed', '--type', 'cold-migration',
                       '-f', 'json', version='2.59').stdout
        self.assertEqual(2, len(json.loads(out)))
        self.assertEqual(
            ['migrate', 'confirmResize'],
            sorted({a['action'] for a in self.admin.actions(server['id'])}
                   - {'create'}, reverse=True))
