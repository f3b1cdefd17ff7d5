"""Evacuate, confirm and revert with the (only) conductor killed -9
mid-flow and a new one started: each flow finishes, or is undone from
the database alone by the new conductor's sweep. Afterwards no server
keeps a task_state, no migration stays unsettled, no allocation is left
behind (the invariants after every test).

Two ways to be killed mid-flow:
- while a compute runs its step (a slow fake operation): the compute's
  calls to the conductor wait in the conductors' queue for the new one,
  so the flow finishes;
- inside the conductor's own part (the scheduler frozen with SIGSTOP
  while the conductor waits on it): the request died with the
  conductor, so the sweep rolls the move back; the scheduler's late
  claim, once thawed, must not leak.

Runs on SQLite, and on MySQL/MariaDB and PostgreSQL when the
openstack_citest users exist (tools/test-setup.sh)."""
import signal
import time

import testtools.content as content

from tests.functional import databases
from tests.functional import evacuate_base

STUCK_MOVE_TIMEOUT = 10
SLOW = 4  # seconds a compute's step takes while the conductor is killed


class ConductorKillTests:
    """Mixed into an EvacuateBase (a database backend picks the class)."""
    COMPUTES = 3
    CONDUCTORS = 1
    EXTRA_CONF = {'DEFAULT': {'stuck_move_timeout': STUCK_MOVE_TIMEOUT,
                              'rpc_response_timeout': 60}}

    def kill_conductor_and_start_a_new_one(self, down_for=1.0):
        started = time.monotonic()
        self.assertEqual(-signal.SIGKILL, self.stack.kill('conductor1'))
        time.sleep(down_for)
        self.stack.restart('conductor1')
        self.addDetail('conductor-down', content.text_content(
            '%.1fs' % (time.monotonic() - started)))

    def slow(self, host, operation):
        self.admin.set_faults(host, [], {operation: SLOW})
        self.addCleanup(self.admin.set_faults, host, [], {})

    def wait_guest_busy(self, host, server_id, seconds=0.5):
        """The compute is inside its slow step by now."""
        time.sleep(seconds)

    def migration(self, server_id, kind):
        return [m for m in self.admin.migrations(instance_uuid=server_id)
                if m['migration_type'] == kind][0]

    def assert_clean(self, server_id, statuses, migration_statuses, kind):
        server = self.admin.wait_for_status(
            server_id, statuses, timeout=3 * STUCK_MOVE_TIMEOUT + 60)
        self.assertIsNone(server['OS-EXT-STS:task_state'])
        mig = self.admin.wait_for(
            lambda: (lambda m: m if m['status'] in migration_statuses
                     else None)(self.migration(server_id, kind)),
            timeout=3 * STUCK_MOVE_TIMEOUT + 60,
            what='%s migration of %s settled' % (kind, server_id))
        if mig['status'] != 'done':
            # 'done' (evacuation): the migration holds the dead source's
            # half until that host returns.
            allocations = self.admin.placement()['allocations']
            self.assertNotIn(mig['uuid'], allocations)
        print('%s: server %s, migration %s' % (
            self.id().rsplit('.', 1)[-1], server['status'], mig['status']))
        return server, mig

    def resized(self, name):
        server = self.boot(name, host='compute1')
        self.admin.action(server['id'], {'migrate': {'host': 'compute2'}},
                          version='2.56', expect=202)
        self.admin.wait_for_status(server['id'], 'VERIFY_RESIZE',
                                   timeout=60)
        return server

    # -- confirm and revert: the conductor dies during a compute's step ----
    def test_confirm_with_conductor_killed(self):
        server = self.resized('ck-confirm')
        self.slow('compute1', 'confirm_migration')
        self.admin.action(server['id'], {'confirmResize': None}, expect=204)
        self.wait_guest_busy('compute1', server['id'])
        self.kill_conductor_and_start_a_new_one()
        moved, mig = self.assert_clean(server['id'], 'ACTIVE',
                                       ('confirmed', 'error'), 'migration')
        self.assertEqual('confirmed', mig['status'])
        self.assertEqual('compute2', moved['OS-EXT-SRV-ATTR:host'])
        self.assertNotIn(server['id'], self.local_guests('compute1'))

    def test_revert_with_conductor_killed(self):
        server = self.resized('ck-revert')
        self.slow('compute2', 'revert_migration')
        self.admin.action(server['id'], {'revertResize': None},
                          expect=202)
        self.wait_guest_busy('compute2', server['id'])
        self.kill_conductor_and_start_a_new_one()
        back, mig = self.assert_clean(server['id'], 'ACTIVE',
                                      ('reverted', 'error'), 'migration')
        self.assertEqual('reverted', mig['status'])
        self.assertEqual('compute1', back['OS-EXT-SRV-ATTR:host'])
        self.assertNotIn(server['id'], self.local_guests('compute2'))

    # -- evacuate ----------------------------------------------------------
    def test_evacuate_with_conductor_killed_during_rebuild(self):
        server = self.boot('ck-evac', host='compute3')
        self.fail_host('compute3')
        for host in ('compute1', 'compute2'):
            self.slow(host, 'rebuild')
        self.admin.action(server['id'], {'evacuate': {}}, version='2.68',
                          expect=200)
        self.admin.wait_for(
            lambda: self.admin.server(server['id'])[
                'OS-EXT-STS:task_state'] == 'rebuild_spawning',
            timeout=30, interval=0.05, what='rebuild on the destination')
        self.kill_conductor_and_start_a_new_one()
        moved, mig = self.assert_clean(
            server['id'], ('ACTIVE', 'ERROR'),
            ('done', 'completed', 'error', 'failed'), 'evacuation')
        self.assertEqual('ACTIVE', moved['status'])
        self.assertIn(mig['status'], ('done', 'completed'))
        self.assertIn(moved['OS-EXT-SRV-ATTR:host'], ('compute1',
                                                      'compute2'))
        # The source comes back and cleans up: completed, its half freed.
        self.restore_host('compute3')
        self.assertEqual('completed',
                         self.migration(server['id'], 'evacuation')['status'])
        self.assertNotIn(mig['uuid'], self.admin.placement()['allocations'])
        self.assertNotIn(server['id'], self.local_guests('compute3'))

    def test_evacuate_with_conductor_killed_in_its_own_part(self):
        server = self.boot('ck-evac-own', host='compute3')
        self.fail_host('compute3')
        scheduler = self.stack.processes['scheduler1']
        self.stack.kill('scheduler1', signal.SIGSTOP, wait=0)

        def thaw():
            scheduler.signal(signal.SIGCONT)
            scheduler.stopped_on_purpose = False
        self.addCleanup(thaw)
        self.admin.action(server['id'], {'evacuate': {}}, version='2.68',
                          expect=200)
        # The conductor is waiting for the frozen scheduler now.
        time.sleep(1.5)
        self.kill_conductor_and_start_a_new_one()
        thaw()  # its late answer goes to a dead conductor
        after, mig = self.assert_clean(
            server['id'], ('ACTIVE', 'ERROR'),
            ('done', 'completed', 'error', 'failed'), 'evacuation')
        # Undone from the database alone: the server stays on its dead
        # host (ERROR, as a failed evacuation leaves it), nothing claimed
        # elsewhere.
        self.assertIn(mig['status'], ('error', 'failed'))
        self.assertEqual('compute3', after['OS-EXT-SRV-ATTR:host'])
        # The scheduler's late claim (if it made one) is gone or refused:
        # give it time to land, then the invariants run.
        time.sleep(3)


class SQLiteConductorKillTest(ConductorKillTests,
                              evacuate_base.EvacuateBase):
    pass


class MySQLConductorKillTest(ConductorKillTests,
                             databases.FreshDatabase,
                             evacuate_base.EvacuateBase):
    ADMIN_URL = databases.MYSQL_ADMIN_URL
    URL_FORMAT = databases.MYSQL_URL_FORMAT


class PostgreSQLConductorKillTest(ConductorKillTests,
                                  databases.FreshDatabase,
                                  evacuate_base.EvacuateBase):
    ADMIN_URL = databases.PG_ADMIN_URL
    URL_FORMAT = databases.PG_URL_FORMAT
