"""doc/install-lab.md followed on this machine: a RabbitMQ user and vhost
of nova_moves' own (not guest), PostgreSQL through psycopg2, redis as the
tooz backend. Skipped where one of them is missing."""
import os
import shutil
import signal
import subprocess
import uuid

import testtools

from nova_moves.harness import stack as nm_stack


def _run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=60,
                          **kw)


def _psql(sql):
    proc = _run(['su', 'postgres', '-c', 'psql -q -v ON_ERROR_STOP=1'],
                input=sql)
    if proc.returncode:
        raise RuntimeError('psql: %s' % proc.stderr)


class LabInstallTest(testtools.TestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        for tool in ('rabbitmqctl', 'psql', 'redis-cli'):
            if shutil.which(tool) is None:
                raise cls.skipException('%s not installed' % tool)
        if _run(['redis-cli', 'ping']).stdout.strip() != 'PONG':
            raise cls.skipException('redis not running')
        suffix = uuid.uuid4().hex[:10]
        cls.user = 'nmlab%s' % suffix
        cls.password = uuid.uuid4().hex
        cls.cleanups = []
        try:
            # Step 2 of the guide: our own RabbitMQ user (the stack adds the
            # vhost and grants this user on it).
            nm_stack.rabbitmqctl('add_user', cls.user, cls.password)
            cls.cleanups.append(
                lambda: nm_stack.rabbitmqctl('delete_user', cls.user))
            # Step 3: a PostgreSQL role and database.
            _psql("CREATE ROLE %s LOGIN PASSWORD '%s';\n"
                  "CREATE DATABASE %s OWNER %s;\n"
                  % (cls.user, cls.password, cls.user, cls.user))
            cls.cleanups.append(lambda: _psql(
                'DROP DATABASE IF EXISTS %s;\nDROP ROLE IF EXISTS %s;\n'
                % (cls.user, cls.user)))
            cls.stack = nm_stack.Stack(
                computes=2,
                broker_url='rabbit://%s:%s@127.0.0.1:5672/' % (
                    cls.user, cls.password),
                database_url='postgresql+psycopg2://%s:%s@127.0.0.1/%s' % (
                    cls.user, cls.password, cls.user),
                # Step 4: redis, in a key namespace of this test's own;
                # members expire 5 s after their last heartbeat.
                coordination_url='redis://127.0.0.1:6379?namespace=%s'
                                 '&timeout=5' % cls.user,
                # A compute that starts before the conductor consumes
                # retries after rpc_response_timeout: keep that short.
                extra_conf={'DEFAULT': {'rpc_response_timeout': '10'}},
                keep_workdir=bool(os.environ.get('NOVA_MOVES_KEEP_LOGS')))
            # Cleanups run last-first: stop the processes, then the keys.
            cls.cleanups.append(cls._delete_redis_keys)
            cls.cleanups.append(cls.stack.stop)
            cls.stack.start(timeout=120)
        except BaseException:
            cls._cleanup()
            raise
        cls.admin = cls.stack.client()

    @classmethod
    def _delete_redis_keys(cls):
        keys = _run(['redis-cli', '--scan', '--pattern', cls.user + '*'])
        for key in keys.stdout.split():
            _run(['redis-cli', 'del', key])

    @classmethod
    def _cleanup(cls):
        for cleanup in reversed(cls.cleanups):
            try:
                cleanup()
            except Exception:
                pass

    @classmethod
    def tearDownClass(cls):
        cls._cleanup()
        super().tearDownClass()

    def test_every_service_is_up(self):
        services = self.admin.services()
        up = {(s['binary'], s['host']) for s in services
              if s['state'] == 'up'}
        for expected in (('nova-conductor', 'conductor1'),
                         ('nova-scheduler', 'scheduler1'),
                         ('nova-compute', 'compute1'),
                         ('nova-compute', 'compute2')):
            self.assertIn(expected, up)

    def test_processes_use_the_dedicated_broker_user(self):
        proc = _run(['rabbitmqctl', '-q', 'list_connections', 'user',
                     'vhost'])
        self.assertEqual(0, proc.returncode, proc.stderr)
        ours = [line.split('\t') for line in proc.stdout.splitlines()
                if line.endswith('\t' + self.stack.vhost)]
        self.assertTrue(ours, proc.stdout)
        self.assertEqual({self.user}, {user for user, _vhost in ours})
        perms = _run(['rabbitmqctl', '-q', 'list_permissions', '-p',
                      self.stack.vhost])
        self.assertEqual([self.user],
                         [line.split('\t')[0]
                          for line in perms.stdout.splitlines()
                          if line and not line.startswith('user\t')])

    def test_schema_is_in_postgresql(self):
        proc = _run(['su', 'postgres', '-c',
                     'psql -tA -d %s -c "select version_num from '
                     'alembic_version"' % self.user])
        self.assertEqual(0, proc.returncode, proc.stderr)
        self.assertRegex(proc.stdout.strip(), r'^\d{4}')

    def test_boot_a_server(self):
        flavor = self.admin.create_flavor('lab-%s' % uuid.uuid4().hex[:6])
        server = self.admin.boot('lab-vm', flavor['id'])
        self.assertEqual('ACTIVE', server['status'])
        self.admin.delete('/servers/%s' % server['id'])

    def test_killed_compute_goes_down_and_comes_back(self):
        """Liveness through the database heartbeat and redis membership:
        a compute killed with SIGKILL reads as down, and up again once
        restarted."""
        self.stack.kill('compute2', signal.SIGKILL)

        def compute2(state):
            return lambda: [s for s in self.admin.services()
                            if s['host'] == 'compute2'
                            and s['state'] == state]
        self.admin.wait_for(compute2('down'), timeout=60,
                            what='compute2 reported down')
        self.stack.restart('compute2')
        self.admin.wait_for(compute2('up'), timeout=90,
                            what='compute2 reported up again')
