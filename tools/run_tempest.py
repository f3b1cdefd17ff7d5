#!/usr/bin/env python3
"""Run tempest's compute API tests against a nova_moves stack.

Starts a real Keystone (tests/functional/keystone_fixture.py), a stack
with ``auth_strategy = keystone`` (3 fake computes, so live migration
has somewhere to go), writes a tempest.conf for a cloud that has no
Glance, Neutron, Cinder or Swift, runs the selected tempest modules and
prints pass/fail/skip per module. Exits 1 when any test failed.

    tools/run-tempest.sh                 # the move modules
    tools/run-tempest.sh --set lifecycle # the moves and the modules near
    tools/run-tempest.sh --set eleven    # exactly issue 26's eleven modules
    tools/run-tempest.sh --set compute   # the tree minus OUTSIDE (CI)
    tools/run-tempest.sh --set all       # the whole tempest.api.compute tree
    tools/run-tempest.sh --regex 'admin\\.test_migrations'

See doc/tempest.md for the settings and why each one is what it is.
"""
import argparse
import collections
import io
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from nova_moves.harness import stack as nm_stack  # noqa: E402
from tests.functional import keystone_fixture  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, 'tools'))
import tempest_stubs  # noqa: E402

P = 'tempest.api.compute.'
# The move modules: every test here exercises a move or what a move
# needs to be observed.
MOVES = [P + m for m in (
    'admin.test_migrations', 'admin.test_live_migration',
    'admin.test_live_migration_negative', 'servers.test_instance_actions')]
# What CI runs (tests/functional/test_tempest.py): the moves and the
# modules around them, a superset of ELEVEN.
LIFECYCLE = MOVES + [P + m for m in (
    'servers.test_server_actions', 'admin.test_servers',
    'admin.test_services', 'admin.test_hypervisor',
    'admin.test_availability_zone', 'admin.test_quotas', 'limits',
    'test_versions')]
# Exactly the eleven modules of issue 26 (its target: no failure).
ELEVEN = [P + m for m in (
    'admin.test_migrations', 'admin.test_live_migration',
    'servers.test_server_actions', 'servers.test_instance_actions',
    'admin.test_servers', 'admin.test_services', 'admin.test_hypervisor',
    'admin.test_availability_zone', 'admin.test_quotas', 'limits',
    'test_versions')]
# Outside the project (issue 40): the proxies to Neutron and Glance Nova
# deprecated in 2.36, and the tests that need a real Neutron (ports,
# addresses, NICs) or a Glance that takes uploads. What is left of the
# tree is the 'compute' set CI runs (tests/functional/test_tempest.py).
OUTSIDE = {
    'deprecated 2.36 proxies': [P + m for m in (
        'admin.test_networks', 'admin.test_security_groups', 'floating_ips',
        'images', 'security_groups', 'test_tenant_networks',
        'servers.test_server_rescue.ServerRescueTestJSONUnderV235.'
        'test_rescued_vm_add_remove_security_group')],
    'needs Neutron': [P + m for m in (
        'servers.test_create_server_multi_nic',
        'servers.test_server_addresses.ServerAddressesTestJSON.'
        'test_list_server_addresses',
        'servers.test_servers_negative.ServersNegativeTestJSON.'
        'test_create_with_invalid_network_uuid')],
    'needs Glance uploads': [
        P + 'flavors.test_flavors_negative.FlavorsV2NegativeTest.'
        'test_boot_with_low_ram'],
}
SETS = {'moves': MOVES, 'lifecycle': LIFECYCLE, 'eleven': ELEVEN,
        'all': ['tempest.api.compute'], 'compute': ['tempest.api.compute']}
EXCLUDED = {'compute': [t for tests in OUTSIDE.values() for t in tests]}

SERVICE_PASSWORD = 'nova-moves-service-secret'
IMAGE = 'cirros'
IMAGE_ALT = 'cirros-alt'
FILTERS = ('ComputeFilter', 'AvailabilityZoneFilter', 'RequestedHostFilter',
           'IgnoreHostsFilter', 'ServerGroupAntiAffinityFilter',
           'ServerGroupAffinityFilter', 'SameHostFilter',
           'DifferentHostFilter')


def _tempest_conf(keystone, flavors, image_id, image_alt_id, hosts,
                  max_microversion):
    """What tempest needs to know of this cloud (doc/tempest.md)."""
    ks = keystone_fixture
    return {
        'DEFAULT': {'log_dir': '', 'log_file': 'tempest.log',
                    'use_stderr': 'false'},
        'auth': {'use_dynamic_credentials': 'true',
                 'admin_username': 'admin',
                 'admin_password': ks.ADMIN_PASSWORD,
                 'admin_project_name': 'admin',
                 'admin_domain_name': 'Default',
                 'tempest_roles': 'member',
                 # No Neutron to make networks in; 'neutron = true' below
                 # only keeps tempest from skipping every class that
                 # would like a default network (servers need none here).
                 'create_isolated_networks': 'false'},
        'identity': {'uri_v3': keystone.auth_url, 'auth_version': 'v3',
                     'region': ks.REGION, 'disable_ssl_certificate_validation':
                     'true'},
        'identity-feature-enabled': {'api_v2': 'false'},
        'compute': {'region': ks.REGION, 'image_ref': image_id,
                    'image_ref_alt': image_alt_id,
                    'flavor_ref': flavors[0], 'flavor_ref_alt': flavors[1],
                    'min_compute_nodes': str(len(hosts)),
                    'min_microversion': '2.1',
                    'max_microversion': max_microversion,
                    'build_timeout': '120', 'build_interval': '1',
                    'ready_wait': '0'},
        'compute-feature-enabled': {
            'live_migration': 'true',
            'block_migration_for_live_migration': 'true',
            'live_migrate_back_and_forth': 'true',
            'can_migrate_between_any_hosts': 'true',
            'resize': 'true', 'cold_migration': 'true',
            'pause': 'true', 'suspend': 'true', 'shelve': 'true',
            'shelve_migrate': 'true', 'lock': 'true',
            'console_output': 'true', 'vnc_console': 'false',
            'spice_console': 'false', 'serial_console': 'false',
            'rescue': 'true', 'change_password': 'true',
            'snapshot': 'false', 'personality': 'false',
            'config_drive': 'false', 'interface_attach': 'false',
            'metadata_service': 'false', 'attach_encrypted_volume': 'false',
            'volume_backed_live_migration': 'false',
            'volume_multiattach': 'false', 'nova_cert': 'false',
            'disk_config': 'true', 'swap_volume': 'false',
            'hostname_fqdn_sanitization': 'false',
            'cold_migration_across_cells': 'false',
            # Nova's current defaults (doc/api-ref/policies.md): the
            # project manager live-migrates without naming a host.
            'nova_policy_roles': 'admin,manager,member,reader',
            'scheduler_enabled_filters': ','.join(FILTERS)},
        'enforce_scope': {'nova': 'true'},
        # Neutron and Glance: tools/tempest_stubs.py answers the few list
        # requests tempest makes of them (doc/tempest.md).
        'service_available': {'nova': 'true', 'glance': 'true',
                              'neutron': 'true', 'cinder': 'false',
                              'swift': 'false', 'placement': 'false'},
        'validation': {'run_validation': 'false'},
        'network-feature-enabled': {'api_extensions': ''},
        'image-feature-enabled': {'api_v1': 'false', 'api_v2': 'true'},
    }


def _write_ini(path, sections):
    with open(path, 'w') as f:
        for section, values in sections.items():
            f.write('[%s]\n' % section)
            f.writelines('%s = %s\n' % kv for kv in values.items())
            f.write('\n')


def _stack(keystone, workdir, computes):
    ks = keystone
    service = ks.create_project('service')
    ks.create_user('nova-moves', SERVICE_PASSWORD, service, role='service')
    extra = ks.stack_conf(SERVICE_PASSWORD)
    # A second image: tempest's image filters need two distinct ones.
    extra['api']['image_names'] = '%s,%s' % (IMAGE, IMAGE_ALT)
    # Nova's optional hint filters, so tempest's multinode hint tests run.
    extra.setdefault('scheduler', {})['enabled_filters'] = ','.join(
        FILTERS)
    token = ks.token_provider('admin', keystone_fixture.ADMIN_PASSWORD,
                              'admin')
    stack = nm_stack.Stack(computes=computes, workdir=workdir,
                           extra_conf=extra, admin_token=token,
                           keep_workdir=True)
    return stack


def _summary(workspace):
    """Per module: passed, failed, skipped (from stestr's last run)."""
    import subunit
    import testtools
    last = subprocess.run([sys.prefix + '/bin/stestr', 'last', '--subunit'],
                          cwd=workspace, capture_output=True)
    if last.returncode:
        return {}, []
    out = last.stdout
    stream = subunit.ByteStreamToStreamResult(io.BytesIO(out))
    result = testtools.StreamToDict(_Collector.add)
    _Collector.rows = collections.defaultdict(collections.Counter)
    _Collector.failed = []
    result.startTestRun()
    stream.run(result)
    result.stopTestRun()
    return _Collector.rows, _Collector.failed


class _Collector:
    rows = None
    failed = None

    @classmethod
    def add(cls, test):
        test_id = test['id'].split('[')[0]
        if test_id.startswith('setUpClass') or test_id.startswith(
                'tearDownClass'):
            module = test_id.split('(')[-1].rstrip(')').rsplit('.', 1)[0]
        else:
            module = test_id.rsplit('.', 2)[0]
        status = {'success': 'passed', 'skip': 'skipped'}.get(
            test['status'], 'failed' if test['status'] in (
                'fail', 'uxsuccess') else None)
        if status is None:
            return
        cls.rows[module][status] += 1
        if status == 'failed':
            detail = test['details'].get('traceback')
            text = detail.as_text() if detail is not None else ''
            cls.failed.append((test['id'], text))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--set', choices=sorted(SETS), default='moves')
    parser.add_argument('--regex', help='tempest test regex (replaces --set)')
    parser.add_argument('--concurrency', type=int, default=2)
    parser.add_argument('--computes', type=int, default=3)
    parser.add_argument('--max-microversion', default='2.104')
    parser.add_argument('--workdir', help='keep everything here')
    parser.add_argument('--json', help='write the per-module table here')
    args = parser.parse_args(argv)
    workdir = args.workdir or tempfile.mkdtemp(prefix='nm-tempest-')
    os.makedirs(workdir, exist_ok=True)
    regex = args.regex or '^(%s)\\b' % '|'.join(
        m.replace('.', '\\.') for m in SETS[args.set])
    exclude = [] if args.regex or args.set not in EXCLUDED else [
        '--exclude-regex', '^(%s)\\b' % '|'.join(
            m.replace('.', '\\.') for m in EXCLUDED[args.set])]

    started = time.monotonic()
    keystone = keystone_fixture.Keystone(workdir=os.path.join(
        workdir, 'keystone'), threads=1)
    os.makedirs(keystone.workdir, exist_ok=True)
    stack = None
    try:
        keystone.start()
        stack = _stack(keystone, os.path.join(workdir, 'stack'),
                       args.computes)
        stack.start(timeout=120)
        keystone.register_service('compute', 'nova', stack.endpoint)
        from nova_moves.api import images
        stubs, stub_url = tempest_stubs.start(stack.endpoint)
        keystone.register_service('network', 'neutron', stub_url)
        keystone.register_service('image', 'glance', stub_url)
        admin = stack.client()
        flavors = [admin.create_flavor('m1.tempest%d' % i, vcpus=1,
                                       ram=256 * (i + 1), disk=1)['id']
                   for i in range(2)]
        conf = _tempest_conf(keystone, flavors, images.image_id(IMAGE),
                             images.image_id(IMAGE_ALT),
                             stack.compute_hosts(), args.max_microversion)
        workspace = os.path.join(workdir, 'tempest')
        if not os.path.isdir(workspace):
            # A workspace registry of our own: tempest's default one in
            # ~/.tempest refuses a second workspace of the same name.
            subprocess.run([sys.prefix + '/bin/tempest', 'init',
                            '--workspace-path', os.path.join(
                                workdir, 'workspace.yaml'),
                            '--name', os.path.basename(workdir), workspace],
                           check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        conf_path = os.path.join(workspace, 'etc', 'tempest.conf')
        conf['DEFAULT']['log_dir'] = os.path.join(workspace, 'logs')
        _write_ini(conf_path, conf)
        print('tempest: stack %s, keystone %s, config %s' % (
            stack.endpoint, keystone.auth_url, conf_path), flush=True)
        run = subprocess.run(
            [sys.prefix + '/bin/tempest', 'run', '--regex', regex] +
            exclude + ['--concurrency', str(args.concurrency), '--config-file',
             conf_path], cwd=workspace, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True)
        rows, failed = _summary(workspace)
    finally:
        if stack is not None:
            stack.stop()
        keystone.stop(keep_workdir=True)
    total = collections.Counter()
    print('%-58s %6s %6s %6s' % ('module', 'pass', 'fail', 'skip'))
    for module in sorted(rows):
        c = rows[module]
        total.update(c)
        print('%-58s %6d %6d %6d' % (module, c['passed'], c['failed'],
                                     c['skipped']))
    print('%-58s %6d %6d %6d' % ('total', total['passed'], total['failed'],
                                 total['skipped']))
    for test_id, text in failed:
        print('FAILED: %s' % test_id)
        print('\n'.join('    ' + line for line in text.splitlines()[-15:]))
    if not rows:
        print(run.stderr[-3000:])
    print('tempest: %.0f s; logs and config in %s' % (
        time.monotonic() - started, workdir))
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({m: dict(c) for m, c in rows.items()}, f, indent=1)
    return 1 if total['failed'] or not rows else 0


if __name__ == '__main__':
    sys.exit(main())
