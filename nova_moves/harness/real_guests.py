"""Scenarios with real guests: ``topology.guests: {driver: qemu}`` makes
every compute process of the stack the harness starts run ``[compute]
driver = qemu`` (one host each, instances under a short /tmp directory:
the QMP socket's path must fit a unix socket's 108 bytes), the bundled
test guest (tools/build-test-guest.sh, doc/test-guest.md) is built when
missing and imported once per ``images[]`` entry with its kernel command
line (``dirty=MB`` dirties that much memory per second), and servers
boot with ``image: NAME``. Every QEMU process goes, and its directory,
when the run ends. The report adds, per image, the live migrations'
outcomes and QEMU's own figures, parsed from the source computes' logs
(virt/qemu/migration.py logs one line per completed migration).

Only the schema pieces are imported by scenario.py: what runs QEMU is
imported when a run needs it."""
import re

from nova_moves.harness import stats as nm_stats

ACCELS = ('tcg', 'kvm', 'auto')

GUESTS_SCHEMA = {
    'type': 'object', 'additionalProperties': False,
    'required': ['driver'],
    'properties': {
        'driver': {'enum': ['qemu']},
        'accel': {'enum': list(ACCELS)},
        'shutdown_timeout': {'type': 'integer', 'minimum': 0},
        'qemu': {'type': 'object'},
    },
    'description': 'real guests: {driver: qemu, accel (tcg, the default; '
    'kvm; auto), shutdown_timeout (s, default 10), qemu (more [qemu] '
    'options)}; every compute process runs the QEMU driver, one host each, '
    'the bundled test guest imported per `images`'}

IMAGES_SCHEMA = {
    'type': 'array', 'minItems': 1, 'items': {
        'type': 'object', 'additionalProperties': False,
        'required': ['name'],
        'properties': {
            'name': {'type': 'string',
                     'pattern': r'^[A-Za-z0-9][A-Za-z0-9_.-]*$'},
            'cmdline': {'type': 'string'}}},
    'description': 'with topology.guests: the test guest imported once per '
    'entry, {name, cmdline (kernel command line added, e.g. `dirty=10`: '
    'MB of memory dirtied per second)}; default one image `test-guest`'}

SERVER_IMAGE = {'type': 'string'}

DEFAULT_IMAGE = 'test-guest'

# virt/qemu/migration.py, on the source compute, once QEMU completed.
QEMU_DONE = re.compile(r'Live migration (\S+) of (\S+): ([\d.]+)s, '
                       r'downtime (\S+) ms, (\d+) MiB transferred')


def enabled(scenario):
    return bool((scenario.get('topology') or {}).get('guests'))


def validate(data, topology, problems):
    """Cross-checks of the real-guest keys (the schema checked their
    shapes); fills in images and each server group's image. Appends
    (path, message) to ``problems``."""
    guests = topology.get('guests')
    images = data.get('images')
    if not guests:
        if images is not None:
            problems.append((('images',), 'images need real guests '
                             '(topology.guests: {driver: qemu})'))
        for i, server in enumerate(data.get('servers') or []):
            if 'image' in server:
                problems.append((('servers', i, 'image'),
                                 'image needs real guests (topology.guests:'
                                 ' {driver: qemu})'))
        return
    guests.setdefault('accel', 'tcg')
    guests.setdefault('shutdown_timeout', 10)
    guests.setdefault('qemu', {})
    images = data.setdefault('images', [{'name': DEFAULT_IMAGE}])
    names = [image['name'] for image in images]
    if len(set(names)) != len(names):
        problems.append((('images',), 'image names repeat: %s' % names))
    for i, spec in enumerate(topology['compute_processes']):
        if len(spec['hosts']) != 1:
            problems.append((('topology', 'computes'),
                             'real guests need one host per compute process'
                             ' (%s has %d)' % (spec['name'],
                                               len(spec['hosts']))))
    for i, server in enumerate(data.get('servers') or []):
        server.setdefault('image', names[0])
        if server['image'] not in names:
            problems.append((('servers', i, 'image'),
                             'unknown image %r (images: %s)' % (
                                 server['image'], ', '.join(names))))


def parse_log(text):
    """{migration uuid: {server, total_s, downtime_ms, mib}} of the
    completed live migrations a compute log tells of."""
    out = {}
    for m in QEMU_DONE.finditer(text or ''):
        try:
            downtime = float(m.group(4))
        except ValueError:  # 'None': QEMU gave none
            downtime = None
        out[m.group(1)] = {'server': m.group(2),
                           'total_s': float(m.group(3)),
                           'downtime_ms': downtime, 'mib': int(m.group(5))}
    return out


def _p(values, pct, digits):
    value = nm_stats.percentile([v for v in values if v is not None], pct)
    return None if value is None else round(value, digits)


def summarize(images, servers, migrations, done, records):
    """Per image: the live migrations of its servers (``migrations`` as
    GET /os-migrations gives them) by status, QEMU's figures of those
    that completed (``done`` from parse_log) and the harness's time from
    the request to the server settled, p50 and p99."""
    image_of = {s['id']: s.get('image') for s in servers}
    out = []
    for image in images:
        ids = {sid for sid, name in image_of.items()
               if name == image['name']}
        live = [m for m in migrations if m.get('instance_uuid') in ids and
                m.get('migration_type') == 'live-migration']
        statuses = {}
        for m in live:
            statuses[m['status']] = statuses.get(m['status'], 0) + 1
        qemu = [done[m['uuid']] for m in live if m.get('uuid') in done]
        e2e = [r['e2e_s'] for r in records
               if r['operation'] == 'live-migrate' and
               r.get('server') in ids and r.get('e2e_s') is not None]
        out.append({
            'image': image['name'], 'cmdline': image.get('cmdline', ''),
            'servers': len(ids), 'migrations': len(live),
            'statuses': statuses,
            'qemu_completed': len(qemu),
            'total_p50_s': _p([q['total_s'] for q in qemu], 50, 2),
            'total_p99_s': _p([q['total_s'] for q in qemu], 99, 2),
            'downtime_p50_ms': _p([q['downtime_ms'] for q in qemu], 50, 0),
            'downtime_p99_ms': _p([q['downtime_ms'] for q in qemu], 99, 0),
            'mib_p50': _p([q['mib'] for q in qemu], 50, 0),
            'e2e_p50_s': _p(e2e, 50, 2), 'e2e_p99_s': _p(e2e, 99, 2)})
    return out


def render(rows):
    """Report lines: one per image."""
    if not rows:
        return []
    table = []
    for r in rows:
        table.append([
            r['image'], r['cmdline'] or '-', r['migrations'],
            ' '.join('%s:%d' % kv for kv in sorted(r['statuses'].items()))
            or '-',
            _fmt(r['total_p50_s']), _fmt(r['total_p99_s']),
            _fmt(r['downtime_p50_ms']), _fmt(r['downtime_p99_ms']),
            _fmt(r['mib_p50']), _fmt(r['e2e_p50_s']), _fmt(r['e2e_p99_s'])])
    return ['Live migrations of the real guests, per image (QEMU\'s figures '
            'from the source computes\' logs; e2e: request to settled):',
            nm_stats.table(['image', 'cmdline', 'n', 'outcomes',
                            'total p50 s', 'p99', 'downtime p50 ms', 'p99',
                            'MiB p50', 'e2e p50 s', 'p99'], table)]


def _fmt(value):
    return '-' if value is None else str(value)


def prepare():
    """The test guest's (kernel, initrd), built when missing."""
    from nova_moves.harness import quickstart_guest
    files, why = quickstart_guest.prepare()
    if files is None:
        raise RuntimeError('real guests cannot run here: %s' % why)
    return files


class RealGuests:
    """The QEMU side of a run's stack: computes' config, the images,
    the guests' state for the invariants, and the cleanup."""

    def __init__(self, scenario, log=None):
        import os
        import tempfile
        self.scenario = scenario
        self.conf = scenario['topology']['guests']
        self.hosts = [p['hosts'][0]
                      for p in scenario['topology']['compute_processes']]
        # Short: the QMP socket's path must fit a unix socket's 108 bytes.
        self.root = tempfile.mkdtemp(prefix='nmh-', dir='/tmp')
        self.instances_path = os.path.join(self.root, '{host}')
        self.image_ids = {}
        self.log = log or (lambda msg: None)

    def compute_specs(self, specs):
        """The stack's compute specs with [compute] driver = qemu and a
        [qemu] section of their own."""
        qemu = {'instances_path': self.instances_path,
                'accel': self.conf['accel'],
                'shutdown_timeout': str(self.conf['shutdown_timeout'])}
        qemu.update({k: str(v) for k, v in self.conf['qemu'].items()})
        out = []
        for spec in specs:
            compute = dict(spec['compute'], driver='qemu')
            out.append(dict(spec, compute=compute, conf={'qemu': qemu}))
        return out

    def import_images(self, stack, files):
        import subprocess
        from nova_moves.harness import stack as nm_stack
        for image in self.scenario['images']:
            argv = [nm_stack._script('nova-moves-manage'), '--config-file',
                    stack.config_path, 'image', 'import', image['name'],
                    '--kernel', files[0], '--initrd', files[1]]
            if image.get('cmdline'):
                argv += ['--cmdline', image['cmdline']]
            out = subprocess.run(argv, check=True, capture_output=True,
                                 text=True, timeout=120).stdout
            self.image_ids[image['name']] = out.strip().split()[-1]
        self.log('imported images %s' % ', '.join(
            '%s (%s)' % (i['name'], i.get('cmdline') or 'no cmdline')
            for i in self.scenario['images']))

    def read_guests(self):
        from nova_moves.harness import guests as qemu_guests
        return qemu_guests.read_guests(self.instances_path, self.hosts)

    def summary(self, runner):
        done = {}
        for spec in self.scenario['topology']['compute_processes']:
            done.update(parse_log(runner.stack.log(spec['name'])))
        try:
            migrations = runner.client().migrations()
        except Exception:  # the report must not fail for it
            migrations = []
        return summarize(self.scenario['images'], runner.servers,
                         migrations, done, runner.records)

    def stop(self):
        """Every QEMU and qemu-nbd process of the run, and its directory;
        the pids that would not die."""
        from nova_moves.harness import quickstart_guest
        return quickstart_guest.stop_kept({
            'instances_path': self.instances_path, 'root': self.root,
            'hosts': self.hosts})
