"""Schemathesis against a real stack (not a test): no 5xx, and responses
as the OpenAPI document declares, on SQLite, PostgreSQL and MariaDB.

    PYTHONPATH=. .venv/bin/python tools/schema_check.py \
        [--database sqlite,postgresql,mysql] [--max-examples 20] \
        [--st /path/to/venv/bin/st] [--probes-only] [--keep]

Per database: a stack on the fake driver in a vhost of its own (and, for
the server databases, a fresh database of the openstack_citest user), a
flavor, two servers, a keypair, an aggregate, a server group and a
confirmed migration, so paths meet real ids about half of the time
(schemathesis dictionaries); then ``st run`` with one worker, and one
line per database: operations tested, examples, 5xx, other failures;
then PROBES (inputs schemathesis rarely generates) and the database
refusals the API logged.
Schemathesis is not a product requirement: install it in a venv of its
own (``python3 -m venv st-venv && st-venv/bin/pip install schemathesis``).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
import uuid

import sqlalchemy as sa

from nova_moves.harness import stack as nm_stack

CITEST = 'openstack_citest'
SERVER_DATABASES = {
    'postgresql': ('postgresql+psycopg2://{0}:{0}@127.0.0.1/{1}', ''),
    'mysql': ('mysql+pymysql://{0}:{0}@127.0.0.1/{1}', '?charset=utf8mb4'),
}
# Contract checks: a 5xx, and a status, content type, header or body the
# document does not declare. The data-acceptance checks are left out:
# Nova's validation is stricter than a JSON schema can say (a flavor's
# name unique, a server's state) so they report Nova's own 4xx.
CHECKS = ('not_a_server_error,status_code_conformance,'
          'content_type_conformance,response_headers_conformance,'
          'response_schema_conformance')


def create_database(kind):
    url, suffix = SERVER_DATABASES[kind]
    name = 'nm_schema_%s' % uuid.uuid4().hex[:10]
    engine = sa.create_engine(url.format(CITEST, CITEST),
                              isolation_level='AUTOCOMMIT')
    try:
        with engine.connect() as connection:
            connection.execute(sa.text('CREATE DATABASE %s' % name))
    finally:
        engine.dispose()
    return name, url.format(CITEST, name) + suffix


def drop_database(kind, name):
    url = SERVER_DATABASES[kind][0].format(CITEST, CITEST)
    engine = sa.create_engine(url, isolation_level='AUTOCOMMIT')
    try:
        with engine.connect() as connection:
            connection.execute(sa.text('DROP DATABASE IF EXISTS %s' % name))
    finally:
        engine.dispose()


def populate(stack):
    """Real resources: {path parameter: [values]} for the dictionaries."""
    admin = stack.client()
    flavor = admin.create_flavor('schema-small', 1, 512, 1)
    admin.post('/flavors/%s/os-extra_specs' % flavor['id'],
               {'extra_specs': {'hw:cpu_policy': 'shared'}}, expect=200)
    image = admin.get('/images', expect=200).json()['images'][0]['id']
    servers = [admin.boot('schema-%d' % i, flavor['id'])['id']
               for i in (1, 2)]
    admin.put('/servers/%s/metadata' % servers[0],
              {'metadata': {'meta1': 'v1'}}, expect=200)
    admin.put('/servers/%s/tags/tag1' % servers[0], version='2.26')
    # A confirmed cold migration: a migration id, and actions.
    admin.action(servers[1], {'migrate': None}, expect=202)
    admin.wait_for_status(servers[1], 'VERIFY_RESIZE', timeout=60)
    admin.action(servers[1], {'confirmResize': None}, expect=204)
    admin.wait_for_status(servers[1], 'ACTIVE', timeout=60)
    migrations = [m['id'] for m in admin.migrations()]
    requests = [a['request_id'] for a in admin.actions(servers[1])]
    keypair = admin.post('/os-keypairs', {'keypair': {
        'name': 'schema-key'}}, expect=200).json()['keypair']['name']
    aggregate = admin.post('/os-aggregates', {'aggregate': {
        'name': 'schema-agg'}}, expect=200).json()['aggregate']['id']
    group = admin.post('/os-server-groups', {'server_group': {
        'name': 'schema-group', 'policies': ['anti-affinity']}},
        expect=200).json()['server_group']['id']
    services = admin.services()
    hypervisors = [h['id'] for h in admin.get(
        '/os-hypervisors', version='2.53',
        expect=200).json()['hypervisors']]
    hosts = stack.compute_hosts()
    return {
        'server_id': servers, 'flavor_id': [flavor['id']],
        'image_ref': [image], 'key': ['meta1', 'hw:cpu_policy'],
        'tag': ['tag1'], 'migration_id': migrations,
        'request_id': requests, 'keypair_name': [keypair],
        'aggregate_id': [aggregate], 'group_id': [group],
        'service_id': [s['id'] for s in services],
        'hypervisor_id': hypervisors, 'host_name': hosts,
        'pattern': hosts, 'project_id': ['admin'], 'tenant_id': ['admin'],
        'class_name': ['default'], 'network_label': ['private'],
    }


# Inputs schemathesis rarely generates that once gave a 5xx (or a 400
# on one database only): a description of 4-byte characters past 65535
# bytes, a server of a flavor with a long description, hints past 64 KiB,
# an audit log before year 1's first period. (method, path, body,
# microversion); run after schemathesis, each answer must be < 500.
PROBES = (
    ('POST', '/flavors', {'flavor': {
        'name': 'probe-emoji', 'vcpus': 1, 'ram': 64, 'disk': 1,
        'description': '\U0001F600' * 16384}}, '2.55'),
    ('POST', '/flavors', {'flavor': {
        'name': 'probe-long', 'id': 'probe-long', 'vcpus': 1, 'ram': 64,
        'disk': 1, 'description': 'x' * 65535}}, '2.55'),
    ('POST', '/servers', {'server': {
        'name': 'probe', 'flavorRef': 'probe-long', 'imageRef': 'fake',
        'networks': 'none'}}, '2.55'),
    ('POST', '/servers', {'server': {
        'name': 'probe', 'flavorRef': 'probe-long', 'imageRef': 'fake',
        'networks': 'none'}, 'os:scheduler_hints': {'x': 'a' * 70000}},
     '2.55'),
    ('GET', '/os-instance_usage_audit_log/0001-01-31%2000:00:00', None,
     '2.1'),
    # A valid key with a 64 KiB comment (the key is filled in below).
    ('POST', '/os-keypairs', {'keypair': {
        'name': 'probe-key', 'public_key': ' ' + 'c' * 65535}}, '2.2'),
)


def _ssh_key():
    from cryptography.hazmat.primitives.asymmetric import ed25519
    from cryptography.hazmat.primitives import serialization
    return ed25519.Ed25519PrivateKey.generate().public_key().public_bytes(
        serialization.Encoding.OpenSSH,
        serialization.PublicFormat.OpenSSH).decode('ascii')


def run_probes(stack):
    """[(probe, status)] of PROBES, raw UTF-8 bodies (under the body
    limit, where \\u escapes would not be)."""
    # Schemathesis may have set the project's quota to anything.
    stack.client().put('/os-quota-sets/admin', {'quota_set': {
        'instances': -1, 'cores': -1, 'ram': -1}}, expect=200)
    results = []
    for method, path, body, version in PROBES:
        if path == '/os-keypairs':
            body = {'keypair': dict(body['keypair'], public_key=_ssh_key() +
                                    body['keypair']['public_key'])}
        data = None if body is None else json.dumps(
            body, ensure_ascii=False).encode('utf-8')
        request = urllib.request.Request(
            stack.endpoint + path, data=data, method=method, headers={
                'X-Auth-Token': stack.admin_token,
                'Content-Type': 'application/json',
                'OpenStack-API-Version': 'compute %s' % version})
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                status = answer.status
        except urllib.error.HTTPError as error:
            status = error.code
        results.append(('%s %s' % (method, path[:50]), status))
    return results


def write_config(path, values, token):
    """schemathesis.toml: the auth header, and each path parameter drawn
    from the real values with probability 0.5 (else generated)."""
    lines = ['[headers]', 'X-Auth-Token = %s' % json.dumps(token), '']
    for name, items in sorted(values.items()):
        lines += ['[dictionaries.%s]' % name,
                  'values = %s' % json.dumps([str(v) for v in items]), '']
    lines.append('[parameters]')
    for name in sorted(values):
        lines.append('"path.%s" = { dictionary = "%s", probability = 0.5 }'
                     % (name, name))
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n')


def summarize(ndjson_path):
    """(operations, examples, 5xx, other failures) from schemathesis'
    ndjson event stream; a failure is (check, operation, status, the
    first line of its message), each once."""
    operations, examples, server_errors, other = set(), 0, [], []
    seen = set()
    with open(ndjson_path) as f:
        for line in f:
            body = json.loads(line).get('ScenarioFinished')
            if body is None:
                continue
            recorder = body.get('recorder') or {}
            label = recorder.get('label') or ''
            cases = recorder.get('cases') or {}
            if cases:
                operations.add(label)
            examples += len(cases)
            interactions = recorder.get('interactions') or {}
            for case_id, checks in (recorder.get('checks') or {}).items():
                for check in checks:
                    if check.get('status') != 'failure':
                        continue
                    failure = (check.get('failure_info') or {}).get(
                        'failure') or {}
                    response = (interactions.get(case_id) or {}).get(
                        'response') or {}
                    message = (failure.get('message') or failure.get(
                        'title') or '').strip().split('\n')[0][:160]
                    key = (check['name'], label, response.get('status_code'),
                           message)
                    if key in seen:
                        continue
                    seen.add(key)
                    (server_errors if check['name'] == 'not_a_server_error'
                     else other).append(key)
    return operations, examples, server_errors, other


def _declared(document, failure):
    """Whether the failure's 5xx is a status its operation declares."""
    _check, label, code, _title = failure
    method, _, path = label.partition(' ')
    operation = document['paths'].get(path, {}).get(method.lower(), {})
    return str(code) in operation.get('responses', {})


_PROBLEMS = ('Input the database refused', 'Unexpected error',
             'Traceback')


def _log_problems(text, limit=40):
    """The distinct log lines (their message, 200 characters) of the
    API's refused database input and unexpected errors."""
    found = []
    for line in text.splitlines():
        for marker in _PROBLEMS:
            if marker in line:
                message = line[line.index(marker):][:200]
                if message not in found:
                    found.append(message)
    return found[:limit]


def run_schemathesis(stack, kind, args):
    """st run against ``stack``; prints its summary; the 5xx count."""
    values = populate(stack)
    with urllib.request.urlopen('http://127.0.0.1:%d/openapi.json'
                                % stack.api_port) as answer:
        document = json.load(answer)
    out = tempfile.mkdtemp(prefix='schema-check-%s-' % kind)
    config = os.path.join(out, 'schemathesis.toml')
    write_config(config, values, stack.admin_token)
    ndjson = os.path.join(out, 'events.ndjson')
    argv = [args.st, '--config-file', config, 'run',
            'http://127.0.0.1:%d/openapi.json' % stack.api_port,
            '--workers', '1', '--checks', CHECKS,
            '--max-examples', str(args.max_examples),
            '--seed', str(args.seed), '--no-color',
            '--request-timeout', '30', '--suppress-health-check', 'all',
            '--generation-database', 'none',
            '--report', 'ndjson', '--report-ndjson-path', ndjson]
    if args.phases:
        argv += ['--phases', args.phases]
    for path in args.exclude_path_regex or ():
        argv += ['--exclude-path-regex', path]
    with open(os.path.join(out, 'st.log'), 'w') as log:
        # In ``out``: st keeps a cache directory where it runs.
        subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, cwd=out)
    operations, examples, server_errors, other = summarize(ndjson)
    declared = [e for e in server_errors if _declared(document, e)]
    server_errors = [e for e in server_errors if e not in declared]
    print('%s: %d operations, %d examples, %d 5xx (+%d declared by the '
          'document: Nova\'s 501s), %d other failures (schemathesis '
          'output in %s)' % (
              kind, len(operations), examples, len(server_errors),
              len(declared), len(other), out), flush=True)
    for check, label, code, title in server_errors + declared + other:
        print('    %s %s -> %s: %s' % (check, label, code, title))
    return len(server_errors)


def run_one(kind, args):
    database, url = None, None
    if kind != 'sqlite':
        database, url = create_database(kind)
    stack = nm_stack.Stack(
        computes=2, database_url=url, keep_workdir=args.keep,
        extra_conf={'quota': {'instances': -1, 'cores': -1, 'ram': -1}})
    try:
        stack.start()
        print('%s: API %s (logs %s)' % (kind, stack.endpoint,
                                        stack.workdir), flush=True)
        errors = 0 if args.probes_only else run_schemathesis(
            stack, kind, args)
        probes = run_probes(stack)
        failed = sum(1 for _, status in probes if status >= 500)
        print('%s: %d probes, %d 5xx: %s' % (
            kind, len(probes), failed,
            ', '.join('%s -> %d' % p for p in probes)), flush=True)
        # A value the database refused is a 400 from app.py's last line
        # of defence: no 5xx, but a view that did not bound its input.
        refused = _log_problems(stack.log('api'))
        print('%s: %d distinct database refusals / unexpected errors in '
              'the API log' % (kind, len(refused)), flush=True)
        for line in refused:
            print('    ' + line)
        return not (errors or failed)
    finally:
        stack.stop()
        if database:
            drop_database(kind, database)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--database', default='sqlite,postgresql,mysql')
    parser.add_argument('--max-examples', type=int, default=20)
    parser.add_argument('--seed', type=int, default=37)
    parser.add_argument('--phases', help='schemathesis phases, e.g. '
                        'examples,coverage,fuzzing (default: all)')
    parser.add_argument('--exclude-path-regex', action='append')
    parser.add_argument('--st', default=shutil.which('st') or os.path.join(
        os.path.dirname(sys.executable), 'st'))
    parser.add_argument('--probes-only', action='store_true',
                        help='only the PROBES, no schemathesis')
    parser.add_argument('--keep', action='store_true',
                        help='keep the stack\'s logs')
    args = parser.parse_args()
    ok = True
    for kind in args.database.split(','):
        ok = run_one(kind, args) and ok
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
