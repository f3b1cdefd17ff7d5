"""A real Keystone for functional tests: the ``keystone`` release from the
package index in a venv of its own (cached between runs, outside the
repo), on SQLite with fernet tokens, served by gunicorn on loopback.

The venv is keyed by Keystone and Python version under
``${XDG_CACHE_HOME:-~/.cache}/nova_moves`` (``NOVA_MOVES_KEYSTONE_VENV``
overrides the path); a file lock makes concurrent test workers wait for
one install instead of racing two. Keystone never shares a process with
the tests: its dependencies (SQLAlchemy, oslo.*) need not match ours.
"""
import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import requests

from nova_moves.harness import stack as nm_stack
from tests.functional import private_backend

VERSION = os.environ.get('NOVA_MOVES_KEYSTONE_VERSION', '30.0.0')
ADMIN_PASSWORD = 'keystone-admin-secret'
REGION = 'RegionOne'
# keystone.server.configure() parses sys.argv, which under gunicorn holds
# gunicorn's own arguments: hide them before Keystone reads them.
_WSGI_MODULE = '''import sys
sys.argv = sys.argv[:1]
from keystone.server import wsgi  # noqa: E402
application = wsgi.initialize_public_application()
'''


def cache_dir():
    base = os.environ.get('XDG_CACHE_HOME') or os.path.expanduser(
        '~/.cache')
    return os.path.join(base, 'nova_moves')


def venv_path():
    return os.environ.get('NOVA_MOVES_KEYSTONE_VENV') or os.path.join(
        cache_dir(), 'keystone-venv-%s-py%d%d' % (
            VERSION, sys.version_info.major, sys.version_info.minor))


@contextlib.contextmanager
def _locked(path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'a') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def ensure_venv():
    """The Keystone venv, installed first if needed; returns its path.

    The marker is written last, so an install cut short is redone rather
    than used half-done."""
    path = venv_path()
    marker = os.path.join(path, '.nova-moves-installed')
    with _locked(path + '.lock'):
        if os.path.exists(marker):
            return path
        shutil.rmtree(path, ignore_errors=True)
        started = time.monotonic()
        subprocess.run([sys.executable, '-m', 'venv', path], check=True)
        proc = subprocess.run(
            [os.path.join(path, 'bin', 'python'), '-m', 'pip', 'install',
             '-q', '--disable-pip-version-check', 'keystone==%s' % VERSION,
             'gunicorn>=27.0.0'], capture_output=True, text=True)
        if proc.returncode:
            raise RuntimeError('installing keystone==%s failed:\n%s'
                               % (VERSION, proc.stderr[-3000:]))
        with open(marker, 'w') as f:
            f.write('installed in %.0f s\n' % (time.monotonic() - started))
    return path


class Keystone:
    """One Keystone: ``start()``, then REST helpers as its admin."""

    def __init__(self, token_expiration=3600, workdir=None, threads=8):
        self.token_expiration = token_expiration
        # SQLite: concurrent writers (tempest creating projects and users
        # from several workers) get 'database is locked'; 1 serialises.
        self.threads = threads
        self.workdir = workdir or tempfile.mkdtemp(prefix='keystone-')
        self.port = nm_stack.free_port()
        self.venv = None
        self.process = None
        self._admin = None

    @property
    def url(self):
        return 'http://127.0.0.1:%d' % self.port

    @property
    def auth_url(self):
        return self.url + '/v3'

    def _path(self, *parts):
        return os.path.join(self.workdir, *parts)

    def _write_config(self):
        conf = {
            'DEFAULT': {'log_file': self._path('keystone.log')},
            'database': {'connection': 'sqlite:///' + self._path(
                'keystone.sqlite')},
            'fernet_tokens': {'key_repository': self._path('fernet')},
            'fernet_receipts': {'key_repository': self._path('receipts')},
            'credential': {'key_repository': self._path('credential')},
            'token': {'expiration': str(self.token_expiration)},
            # bcrypt's cheapest cost: every test run authenticates often.
            'identity': {'password_hash_rounds': '4'},
        }
        with open(self._path('keystone.conf'), 'w') as f:
            for section, values in conf.items():
                f.write('[%s]\n' % section)
                f.writelines('%s = %s\n' % kv for kv in values.items())
        with open(self._path('ks_wsgi.py'), 'w') as f:
            f.write(_WSGI_MODULE)

    def _env(self):
        env = dict(os.environ, PYTHONWARNINGS='ignore',
                   OS_KEYSTONE_CONFIG_FILES=self._path('keystone.conf'))
        env.pop('PYTHONPATH', None)
        return env

    def _manage(self, *commands):
        """Run keystone-manage ``commands`` (argument lists) at once:
        each run is mostly Python start-up."""
        procs = [(args[0], subprocess.Popen(
            [os.path.join(self.venv, 'bin', 'keystone-manage'),
             '--config-file', self._path('keystone.conf')] + list(args),
            env=self._env(), stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True)) for args in commands]
        for name, proc in procs:
            _out, err = proc.communicate(timeout=120)
            if proc.returncode:
                raise RuntimeError('keystone-manage %s failed:\n%s'
                                   % (name, err[-3000:]))

    def start(self, timeout=60):
        self.venv = ensure_venv()
        self._write_config()
        owner = ['--keystone-user', str(os.getuid()),
                 '--keystone-group', str(os.getgid())]
        self._manage(['db_sync'], ['fernet_setup'] + owner,
                     ['credential_setup'] + owner)
        self._manage(['bootstrap', '--bootstrap-password', ADMIN_PASSWORD,
                      '--bootstrap-region-id', REGION,
                      '--bootstrap-public-url', self.auth_url,
                      # auth_token looks for the internal one by default.
                      '--bootstrap-internal-url', self.auth_url])
        log = open(self._path('gunicorn.log'), 'ab')
        self.process = subprocess.Popen(
            [os.path.join(self.venv, 'bin', 'gunicorn'), '--chdir',
             self.workdir, '--bind', '127.0.0.1:%d' % self.port,
             '--workers', '1', '--threads', str(self.threads),
             '--no-control-socket',
             'ks_wsgi:application'],
            env=self._env(), stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL)
        log.close()
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError('keystone exited; see %s' % self.workdir)
            try:
                if requests.get(self.auth_url, timeout=5).ok:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError('keystone not up; see %s' % self.workdir)
            time.sleep(0.2)
        self._admin = self.token_provider('admin', ADMIN_PASSWORD, 'admin')
        return self

    def stop(self, keep_workdir=False):
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        if not keep_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def log(self):
        with open(self._path('keystone.log'), errors='replace') as f:
            return f.read()

    # -- REST ----------------------------------------------------------
    def request(self, method, path, body=None, token=None, expect=None,
                headers=None):
        headers = dict(headers or {})
        headers['X-Auth-Token'] = token or self._admin()
        response = requests.request(method, self.auth_url + path, json=body,
                                    headers=headers, timeout=30)
        if expect is not None and response.status_code != expect:
            raise RuntimeError('%s %s -> %s %s' % (
                method, path, response.status_code, response.text[:500]))
        return response

    def issue_token(self, user, password, project):
        """A project-scoped token: (token, expires_at epoch seconds)."""
        body = {'auth': {
            'identity': {'methods': ['password'], 'password': {'user': {
                'name': user, 'password': password,
                'domain': {'id': 'default'}}}},
            'scope': {'project': {'name': project,
                                  'domain': {'id': 'default'}}}}}
        response = requests.post(self.auth_url + '/auth/tokens', json=body,
                                 timeout=30)
        if response.status_code != 201:
            raise RuntimeError('token for %s: %s %s' % (
                user, response.status_code, response.text[:300]))
        expires = response.json()['token']['expires_at']
        return (response.headers['X-Subject-Token'],
                _epoch(expires))

    def token_provider(self, user, password, project, margin=5):
        """A callable returning a valid token, renewed before it expires
        (tests outlive a short [token] expiration)."""
        state = {'token': None, 'expires': 0}

        def token():
            if time.time() > state['expires'] - margin:
                state['token'], state['expires'] = self.issue_token(
                    user, password, project)
            return state['token']
        return token

    def revoke(self, token):
        self.request('DELETE', '/auth/tokens',
                     headers={'X-Subject-Token': token}, expect=204)

    def _create(self, kind, body):
        return self.request('POST', '/%ss' % kind, {kind: body},
                            expect=201).json()[kind]

    def role_id(self, name):
        return self.request('GET', '/roles?name=%s' % name,
                            expect=200).json()['roles'][0]['id']

    def create_project(self, name):
        return self._create('project', {'name': name,
                                        'domain_id': 'default'})

    def create_user(self, name, password, project, role='member'):
        """A user with ``role`` on ``project`` (a project dict)."""
        user = self._create('user', {'name': name, 'password': password,
                                     'domain_id': 'default',
                                     'default_project_id': project['id']})
        self.request('PUT', '/projects/%s/users/%s/roles/%s' % (
            project['id'], user['id'], self.role_id(role)), expect=204)
        return user

    def stack_conf(self, password, username='nova-moves'):
        """The stack's config sections for auth_strategy = keystone, its
        service user ``username`` (role service in project service)."""
        return {
            'api': {'auth_strategy': 'keystone'},
            'keystone_authtoken': {
                'www_authenticate_uri': self.auth_url,
                'auth_url': self.auth_url,
                'auth_type': 'password', 'username': username,
                'password': password, 'project_name': 'service',
                'user_domain_name': 'Default',
                'project_domain_name': 'Default',
                'service_token_roles_required': 'true'}}

    def register_service(self, service_type, name, url):
        service = self._create('service', {'type': service_type,
                                           'name': name})
        self._create('endpoint', {'service_id': service['id'],
                                  'interface': 'public', 'url': url,
                                  'region_id': REGION})
        return service


class OnKeystone(private_backend.PrivateBackend):
    """Mix into a StackTestCase (before it): the class's stack runs with
    auth_strategy = keystone against a Keystone of its own,
    ``cls.keystone``, with the service user ``nova-moves`` (password
    SERVICE_PASSWORD, role service in project service) made by
    ``create_identities`` (override it for more); the stack's
    ``admin_token`` is Keystone's admin. NOVA_MOVES_SKIP_KEYSTONE skips
    the class."""

    SERVICE_PASSWORD = None
    KEYSTONE_OPTIONS = {}  # Keystone(**KEYSTONE_OPTIONS)

    @classmethod
    def setUpClass(cls):
        cls.start_backend(
            'keystone', cls._start_keystone,
            lambda keystone, failed: keystone.stop(keep_workdir=failed),
            unavailable=os.environ.get('NOVA_MOVES_SKIP_KEYSTONE') and
            'NOVA_MOVES_SKIP_KEYSTONE is set')
        cls.EXTRA_CONF = cls.keystone.stack_conf(cls.SERVICE_PASSWORD)
        super().setUpClass()

    @classmethod
    def _start_keystone(cls):
        keystone = Keystone(**cls.KEYSTONE_OPTIONS)
        try:
            cls.keystone = keystone.start()
            cls.create_identities()
        except BaseException:
            keystone.stop(keep_workdir=True)
            raise
        return keystone

    @classmethod
    def create_identities(cls):
        service = cls.keystone.create_project('service')
        cls.keystone.create_user('nova-moves', cls.SERVICE_PASSWORD,
                                 service, role='service')

    @classmethod
    def stack_options(cls):
        return dict(super().stack_options(),
                    admin_token=cls.keystone.token_provider(
                        'admin', ADMIN_PASSWORD, 'admin'))


def _epoch(iso):
    import datetime
    return datetime.datetime.strptime(
        iso.replace('Z', '+0000'), '%Y-%m-%dT%H:%M:%S.%f%z').timestamp()
