"""Bring up a whole nova_moves stack from the console scripts: api,
conductor(s), scheduler(s) and compute agent(s) as real processes on the
machine's RabbitMQ, isolated in a vhost of their own. The functional
tests, the harness and the quickstart all use this."""
import configparser
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

from nova_moves import apiclient as api_client
from nova_moves.harness import ports

DEFAULT_BROKER = 'rabbit://guest:guest@127.0.0.1:5672/'


# Below the ephemeral range (harness/ports.py).
free_port = ports.free_port


def _sqlite_template():
    """Where a synced SQLite database of this checkout's schema is kept:
    named by a digest of the migrations and the code that runs them."""
    from nova_moves import db as nm_db
    root = os.path.dirname(os.path.abspath(nm_db.__file__))
    digest = hashlib.sha256()
    for folder, _dirs, files in sorted(os.walk(root)):
        for name in sorted(files):
            if name.endswith('.py') and ('migrat' in folder or
                                         name.startswith('migrat')):
                with open(os.path.join(folder, name), 'rb') as f:
                    digest.update(name.encode() + f.read())
    return os.path.join(tempfile.gettempdir(), 'nova-moves-sqlite-templates',
                        digest.hexdigest()[:16] + '.sqlite')


def _script(name):
    path = os.path.join(os.path.dirname(sys.executable), name)
    return path if os.path.exists(path) else shutil.which(name) or name


def rabbitmqctl(*args):
    subprocess.run(['rabbitmqctl', '-q'] + list(args), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


class Process:
    def __init__(self, name, argv, log_path):
        self.name = name
        self.argv = argv
        self.log_path = log_path
        self.popen = None

    def start(self):
        log = open(self.log_path, 'ab')
        self.popen = subprocess.Popen(self.argv, stdout=log,
                                      stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL)
        log.close()

    def alive(self):
        return self.popen is not None and self.popen.poll() is None

    def signal(self, signum):
        if self.alive():
            self.popen.send_signal(signum)

    def wait(self, timeout):
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None


class Stack:
    """``computes`` is a list of dicts, one per nova-moves-compute process:
    {'name': 'compute1', 'hosts': ['h1', 'h2'], 'compute': {option: value}},
    optionally 'broker_port': the port of a proxy (harness/tcp_proxy.py)
    on 127.0.0.1 through which that compute reaches the broker.
    An int N means N processes with one host each: compute1..computeN.
    ``service_broker_urls`` ({'api'|'conductor'|'scheduler'|'compute':
    'rabbit://user:pw@host:port/'}) gives each kind of service its own
    broker user (in its own config file, as an operator would); the
    stack grants each of them the vhost: everything, or the
    (configure, write, read) regexes ``service_broker_permissions``
    gives for that kind (nova_moves.broker_tls.permissions)."""

    def __init__(self, computes=2, conductors=1, schedulers=1, workdir=None,
                 broker_url=None, database_url=None, coordination_url=None,
                 extra_conf=None, report_interval=1, service_down_time=10,
                 keep_workdir=False, broker_ctl=None, admin_token=None,
                 service_broker_urls=None, service_broker_permissions=None):
        if isinstance(computes, int):
            computes = [{'name': 'compute%d' % (i + 1)}
                        for i in range(computes)]
        self.compute_specs = computes
        self.conductors = conductors
        self.schedulers = schedulers
        self.workdir = workdir or tempfile.mkdtemp(prefix='nova-moves-')
        self.broker_url = broker_url or os.environ.get(
            'NOVA_MOVES_BROKER_URL', DEFAULT_BROKER)
        # rabbitmqctl for the broker's node: a test's private node passes
        # its own (the default one reaches the machine's node).
        self.broker_ctl = broker_ctl or rabbitmqctl
        self.service_broker_urls = dict(service_broker_urls or {})
        self.service_broker_permissions = dict(
            service_broker_permissions or {})
        self.vhost = 'nova-moves-%s' % uuid.uuid4().hex[:12]
        self.database_url = database_url
        self.coordination_url = coordination_url
        self.extra_conf = extra_conf or {}
        self.report_interval = report_interval
        self.service_down_time = service_down_time
        self.keep_workdir = keep_workdir
        self.api_port = free_port()
        self.processes = {}
        self.config_path = os.path.join(self.workdir, 'nova_moves.conf')
        self.vhost_created = False
        # What the stack's own admin client sends: the noauth admin, or
        # (auth_strategy = keystone) a callable returning a Keystone token.
        self.admin_token = admin_token or 'admin:admin'

    # -- configuration ---------------------------------------------------
    @property
    def transport_url(self):
        return self._in_vhost(self.broker_url)

    def _in_vhost(self, broker_url):
        return broker_url.rstrip('/') + '/' + self.vhost

    def _service_default(self, kind, host):
        """[DEFAULT] of one service's own config file."""
        default = {'host': host}
        if kind in self.service_broker_urls:
            default['transport_url'] = self._in_vhost(
                self.service_broker_urls[kind])
        return default

    def transport_url_via(self, port):
        """The stack's transport_url with the broker reached at
        127.0.0.1:``port`` (a proxy that can cut the path)."""
        scheme, rest = self.broker_url.split('://', 1)
        auth = rest.split('@', 1)[0] + '@' if '@' in rest else ''
        return '%s://%s127.0.0.1:%d/%s' % (scheme, auth, port, self.vhost)

    @property
    def endpoint(self):
        return 'http://127.0.0.1:%d/v2.1' % self.api_port

    def client(self, token=None, version='2.1'):
        return api_client.Client(self.endpoint, token or self.admin_token,
                                 version)

    def _write_config(self):
        parser = configparser.ConfigParser(interpolation=None)
        state = os.path.join(self.workdir, 'state')
        os.makedirs(state, mode=0o750, exist_ok=True)
        os.makedirs(os.path.join(self.workdir, 'logs'), mode=0o750,
                    exist_ok=True)
        parser['DEFAULT'] = {
            'transport_url': self.transport_url,
            'state_path': state,
            'report_interval': str(self.report_interval),
            'service_down_time': str(self.service_down_time),
            'graceful_shutdown_timeout': '10',
            'rpc_response_timeout': '30',
            'debug': 'true',
        }
        parser['database'] = {'connection': self.database_url or
                              'sqlite:///%s/nova_moves.sqlite' % state}
        # One API worker keeps a test's start cheap on 2 cores;
        # extra_conf {'api': {'workers': N}} for more.
        # noauth explicitly: the product's default is keystone (a test
        # that wants Keystone sets it in extra_conf).
        parser['api'] = {'listen': '127.0.0.1', 'port': str(self.api_port),
                         'auth_strategy': 'noauth',
                         'enable_test_hooks': 'true', 'workers': '1',
                         'threads': '16', 'graceful_shutdown_timeout': '10'}
        parser['coordination'] = {'backend_url': self.coordination_url or
                                  'file://%s/coordination' % state}
        parser['oslo_messaging_rabbit'] = {'heartbeat_timeout_threshold': '0'}
        for section, values in self.extra_conf.items():
            if section != 'DEFAULT' and not parser.has_section(section):
                parser.add_section(section)
            for key, value in values.items():
                parser[section][key] = str(value)
        # Holds the database and broker credentials: 0640, as the product's
        # own files.
        with open(os.open(self.config_path,
                          os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o640),
                  'w') as f:
            parser.write(f)

    def _overlay(self, name, sections):
        path = os.path.join(self.workdir, '%s.conf' % name)
        parser = configparser.ConfigParser(interpolation=None)
        for section, values in sections.items():
            if section != 'DEFAULT':
                parser.add_section(section)
            for key, value in values.items():
                if isinstance(value, (list, tuple)):
                    value = ','.join(value)
                elif isinstance(value, dict):
                    value = ','.join('%s:%s' % kv for kv in value.items())
                parser[section][key] = str(value)
        with open(path, 'w') as f:
            parser.write(f)
        return path

    # -- processes ---------------------------------------------------
    def _argv(self, binary, overlay=None):
        argv = [_script(binary), '--config-file', self.config_path]
        if overlay:
            argv += ['--config-file', overlay]
        return argv

    def add_process(self, name, binary, overlay=None):
        proc = Process(name, self._argv(binary, overlay),
                       os.path.join(self.workdir, 'logs', name + '.log'))
        self.processes[name] = proc
        proc.start()
        return proc

    def _compute_overlay(self, spec):
        hosts = spec.get('hosts') or [spec['name']]
        compute = dict(spec.get('compute') or {})
        if len(hosts) > 1:
            compute['fake_hosts'] = hosts
        default = self._service_default('compute', hosts[0])
        if spec.get('broker_port'):
            default['transport_url'] = self.transport_url_via(
                spec['broker_port'])
        sections = {'DEFAULT': default, 'compute': compute}
        # More sections of this compute's own (e.g. [qemu] for real guests).
        for section, values in (spec.get('conf') or {}).items():
            sections.setdefault(section, {}).update(values)
        return self._overlay(spec['name'], sections)

    def compute_hosts(self):
        return [h for spec in self.compute_specs
                for h in (spec.get('hosts') or [spec['name']])]

    def start(self, timeout=60):
        os.makedirs(self.workdir, exist_ok=True)
        self.broker_ctl('add_vhost', self.vhost)
        self.vhost_created = True
        for user, permissions in self._broker_grants():
            self.broker_ctl('set_permissions', '-p', self.vhost, user,
                            *permissions)
        self._write_config()
        self._db_sync()
        for i in range(self.conductors):
            name = 'conductor%d' % (i + 1)
            self.add_process(name, 'nova-moves-conductor', self._overlay(
                name, {'DEFAULT': self._service_default('conductor', name)}))
        for i in range(self.schedulers):
            name = 'scheduler%d' % (i + 1)
            self.add_process(name, 'nova-moves-scheduler', self._overlay(
                name, {'DEFAULT': self._service_default('scheduler', name)}))
        self.add_process('api', 'nova-moves-api', self._overlay(
            'api', {'DEFAULT': self._service_default('api', 'api')}))
        # A compute's first call to the conductor is lost if it is sent
        # before any conductor has bound its queue (and then waits for
        # rpc_response_timeout): start computes once conductors report.
        self.wait_until_ready(timeout, hosts=set())
        for spec in self.compute_specs:
            self.add_process(spec['name'], 'nova-moves-compute',
                             self._compute_overlay(spec))
        self.wait_until_ready(timeout)
        return self

    def _db_sync(self):
        """``nova-moves-manage db sync``; on the default SQLite file, once
        per schema: its result is kept and copied for the next stack
        (the sync is a third of a stack's start on 2 cores)."""
        path = os.path.join(self.workdir, 'state', 'nova_moves.sqlite')
        template = None
        if self.database_url is None and \
                'connection' not in self.extra_conf.get('database', {}):
            template = _sqlite_template()
        if template and os.path.exists(template):
            shutil.copyfile(template, path)
            # As the product's umask would have made it (no world bits).
            os.chmod(path, 0o640)
            return
        subprocess.run(self._argv('nova-moves-manage') + ['db', 'sync'],
                       check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
        # Only a whole file (no write-ahead log left) makes a template.
        if template and not os.path.exists(path + '-wal'):
            os.makedirs(os.path.dirname(template), exist_ok=True)
            partial = '%s.%s' % (template, uuid.uuid4().hex)
            shutil.copyfile(path, partial)
            os.replace(partial, template)

    @staticmethod
    def _url_user(url):
        rest = url.split('://', 1)[1]
        return rest.split('@', 1)[0].split(':', 1)[0] if '@' in rest \
            else 'guest'

    def _broker_user(self):
        return self._url_user(self.broker_url)

    def _broker_grants(self):
        """(user, (configure, write, read)) of every broker user a
        service logs in as."""
        everything = ('.*', '.*', '.*')
        grants = {self._url_user(url): self.service_broker_permissions.get(
            kind, everything) for kind, url in
            self.service_broker_urls.items()}
        if set(self.service_broker_urls) < {'api', 'conductor',
                                            'scheduler', 'compute'}:
            # The shared config's user.
            grants[self._url_user(self.broker_url)] = everything
        return sorted(grants.items())

    def wait_until_ready(self, timeout=60, hosts=None):
        admin = self.client()
        hosts = set(self.compute_hosts()) if hosts is None else hosts
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._check_alive()
            try:
                services = admin.services()
                up = {s['host'] for s in services if s['state'] == 'up'
                      and s['binary'] == 'nova-compute'}
                binaries = {s['binary'] for s in services
                            if s['state'] == 'up'}
                # os-services shows Nova's binary names.
                if hosts <= up and {'nova-conductor',
                                    'nova-scheduler'} <= binaries:
                    return
            except Exception:
                pass
            time.sleep(0.2)
        raise TimeoutError('stack not ready after %ss; logs in %s'
                           % (timeout, self.workdir))

    def _check_alive(self):
        for proc in self.processes.values():
            if proc.popen is not None and proc.popen.poll() is not None \
                    and not getattr(proc, 'stopped_on_purpose', False):
                raise RuntimeError('%s exited with %s; see %s' % (
                    proc.name, proc.popen.returncode, proc.log_path))

    def kill(self, name, signum=signal.SIGKILL, wait=10):
        proc = self.processes[name]
        proc.stopped_on_purpose = True
        proc.signal(signum)
        return proc.wait(wait)

    def restart(self, name):
        proc = self.processes[name]
        if proc.alive():
            self.kill(name, signal.SIGTERM)
        proc.stopped_on_purpose = False
        proc.start()
        return proc

    def stop(self):
        # A private broker's nodes (harness/backends.py) go last, with
        # their cluster: the services stop while the broker still serves.
        services = [p for p in self.processes.values()
                    if not getattr(p, 'backend', False)]
        for proc in services:
            proc.stopped_on_purpose = True
            proc.signal(signal.SIGTERM)
        for proc in services:
            if proc.popen is not None and proc.wait(15) is None:
                proc.signal(signal.SIGKILL)
                proc.wait(5)
        if self.vhost_created:
            try:
                self.broker_ctl('delete_vhost', self.vhost)
            except (subprocess.CalledProcessError,
                    subprocess.TimeoutExpired):
                pass
            self.vhost_created = False
        if not self.keep_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def log(self, name):
        with open(self.processes[name].log_path, errors='replace') as f:
            return f.read()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
