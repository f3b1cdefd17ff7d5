"""A private PostgreSQL cluster (initdb + pg_ctl in a temp dir, its own
port and socket dir) for tests and harness runs that stop or restart the
database; the machine's server is never touched.

initdb refuses to run as root: as root, the cluster's files belong to the
``postgres`` user and every command runs as that user (runuser)."""
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time

import sqlalchemy as sa

from nova_moves.harness import ports

OS_USER = 'postgres'


def _bindir():
    found = sorted(glob.glob('/usr/lib/postgresql/*/bin/initdb'))
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which('initdb')
    return os.path.dirname(initdb) if initdb else None


def available():
    return _bindir() is not None


# Below the ephemeral range: a stopped cluster's port is still its own
# when it starts again (harness/ports.py).
_free_port = ports.free_port


class PostgresCluster:
    """start() / stop(mode) / restart(down_for) / destroy()."""

    def __init__(self, start_timeout=60, max_connections=300):
        self.start_timeout = start_timeout
        self.max_connections = max_connections
        self.base = None
        self.port = None

    def _run(self, binary, *args, timeout=120):
        argv = [os.path.join(_bindir(), binary)] + list(args)
        if os.geteuid() == 0:
            argv = ['runuser', '-u', OS_USER, '--'] + argv
        return subprocess.run(argv, check=True, timeout=timeout,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, cwd=self.base)

    @property
    def data(self):
        return os.path.join(self.base, 'data')

    def start(self):
        if self.base is None:
            self.base = tempfile.mkdtemp(prefix='nova-moves-pg-')
            os.chmod(self.base, 0o755)
            if os.geteuid() == 0:
                user = pwd.getpwnam(OS_USER)
                os.chown(self.base, user.pw_uid, user.pw_gid)
            self.port = _free_port()
            self._run('initdb', '-D', self.data, '-A', 'trust', '-U',
                      'postgres', '--no-sync', '-E', 'UTF8')
        options = ' '.join([
            '-p %d' % self.port, '-k %s' % self.base,
            '-c listen_addresses=127.0.0.1',
            '-c max_connections=%d' % self.max_connections,
            # No fsync: the files outlive a crash of the server (they sit
            # in the page cache), not one of the machine, which is all a
            # throw-away cluster needs. synchronous_commit stays on, or a
            # crash would lose commits the clients were told about.
            '-c fsync=off', '-c full_page_writes=off'])
        self._run('pg_ctl', '-D', self.data, '-o', options, '-l',
                  os.path.join(self.base, 'postgres.log'), '-w', '-t',
                  str(self.start_timeout), 'start',
                  timeout=self.start_timeout + 30)
        return self

    def stop(self, mode='fast'):
        """fast: connections are closed; immediate: like a crash."""
        self._run('pg_ctl', '-D', self.data, '-m', mode, '-w', 'stop')

    def restart(self, down_for=0, mode='immediate'):
        self.stop(mode)
        time.sleep(down_for)
        self.start()

    def running(self):
        try:
            self._run('pg_ctl', '-D', self.data, 'status', timeout=30)
            return True
        except subprocess.CalledProcessError:
            return False

    def destroy(self):
        if self.base is None:
            return
        if os.path.exists(os.path.join(self.data, 'postmaster.pid')):
            try:
                self.stop('immediate')
            except subprocess.CalledProcessError:
                pass
        shutil.rmtree(self.base, ignore_errors=True)
        self.base = None

    def url(self, database='postgres'):
        return 'postgresql+psycopg2://postgres@127.0.0.1:%d/%s' % (
            self.port, database)

    def create_database(self, name):
        engine = sa.create_engine(self.url(), isolation_level='AUTOCOMMIT')
        try:
            with engine.connect() as connection:
                connection.execute(sa.text('CREATE DATABASE %s' % name))
        finally:
            engine.dispose()
        return self.url(name)
