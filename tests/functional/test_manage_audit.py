"""nova-moves-manage placement audit and status check, run as the real
console script against a running stack's config."""
import os
import subprocess
import sys
import uuid

from tests.functional import base
from tests.functional import stack_db


def _manage_binary():
    path = os.path.join(os.path.dirname(sys.executable), 'nova-moves-manage')
    return path if os.path.exists(path) else 'nova-moves-manage'


class ManageAuditTest(base.StackTestCase):

    COMPUTES = 2

    def manage(self, *args, extra_config=None):
        argv = [_manage_binary(), '--config-file', self.stack.config_path]
        if extra_config:
            argv += ['--config-file', extra_config]
        proc = subprocess.run(argv + list(args), capture_output=True,
                              text=True, timeout=120)
        return proc.returncode, proc.stdout + proc.stderr

    def plant(self, consumer, host='compute1', vcpu=1, ram=64):
        with stack_db.stack_database(self.stack) as db:
            provider = db.provider_usages()[host]['uuid']
            db.allocations_replace(consumer, {provider: {
                'VCPU': vcpu, 'MEMORY_MB': ram}})
        self.addCleanup(self.unplant, consumer)

    def unplant(self, consumer):
        with stack_db.stack_database(self.stack) as db:
            db.allocations_delete(consumer)

    def allocations(self):
        return self.admin.placement()['allocations']

    def test_audit_finds_and_deletes_a_leak(self):
        server = self.boot('kept')
        code, out = self.manage('placement', 'audit')
        self.assertEqual(0, code, out)
        self.assertIn('No orphaned allocations', out)

        leak = str(uuid.uuid4())
        self.plant(leak)
        code, out = self.manage('placement', 'audit')
        self.assertEqual(3, code, out)
        self.assertIn(leak, out)
        self.assertIn('compute1', out)
        self.assertNotIn(server['id'], out)
        self.assertIn(leak, self.allocations())  # audit alone changes nothing

        code, out = self.manage('placement', 'audit', '--delete')
        self.assertEqual(4, code, out)
        self.assertIn('Deleted allocations of consumer %s' % leak, out)
        allocations = self.allocations()
        self.assertNotIn(leak, allocations)
        self.assertIn(server['id'], allocations)  # the live server keeps its
        code, out = self.manage('placement', 'audit')
        self.assertEqual(0, code, out)
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def test_in_progress_migration_holds_its_allocation(self):
        server = self.boot('moving')
        with stack_db.stack_database(self.stack) as db:
            migration = db.migration_create({
                'instance_uuid': server['id'], 'migration_type': 'migration',
                'status': 'migrating', 'source_compute': 'compute1',
                'dest_compute': 'compute2'})
        self.plant(migration['uuid'])
        self.addCleanup(self._drop_migration, migration['id'])
        code, out = self.manage('placement', 'audit')
        self.assertEqual(0, code, out)
        with stack_db.stack_database(self.stack) as db:
            db.migration_update(migration['id'], {'status': 'error'})
        code, out = self.manage('placement', 'audit')
        self.assertEqual(3, code, out)
        self.assertIn(migration['uuid'], out)
        code, out = self.manage('placement', 'audit', '--delete')
        self.assertEqual(4, code, out)
        self.assertNotIn(migration['uuid'], self.allocations())
        self.admin.delete('/servers/%s' % server['id'], expect=204)

    def _drop_migration(self, migration_id):
        with stack_db.stack_database(self.stack) as db:
            with db._session() as session:
                session.execute(db.sa.delete(db.models.Migration).where(
                    db.models.Migration.id == migration_id))

    def test_status_check(self):
        code, out = self.manage('status', 'check')
        self.assertEqual(0, code, out)
        # Schema, placement, services and (since the HTTP edge work) API
        # authentication.
        self.assertEqual(4, out.count('Result: Success'), out)
        self.assertIn('Schema at head', out)

        # A forced-down compute is a warning while another compute lives.
        service = [s for s in self.admin.services('nova-moves-compute')
                   if s['host'] == 'compute2'][0]
        self.admin.put('/os-services/%s' % service['id'],
                       {'forced_down': True}, version='2.53', expect=200)
        self.addCleanup(self.admin.put, '/os-services/%s' % service['id'],
                        {'forced_down': False}, version='2.53')
        code, out = self.manage('status', 'check')
        self.assertEqual(1, code, out)
        self.assertIn('nova-moves-compute on compute2', out)
        self.admin.put('/os-services/%s' % service['id'],
                       {'forced_down': False}, version='2.53', expect=200)

        # An unreachable broker is a failure.
        bad = os.path.join(self.stack.workdir, 'bad-broker.conf')
        with open(bad, 'w') as f:
            f.write('[DEFAULT]\ntransport_url = '
                    'rabbit://guest:guest@127.0.0.1:1/\n')
        code, out = self.manage('status', 'check', extra_config=bad)
        self.assertEqual(2, code, out)
        self.assertIn('RabbitMQ unreachable', out)
