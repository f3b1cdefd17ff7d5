"""Scenario files: load a YAML file (or a bundled scenario by name),
check it against a schema and a few cross-references, and fill in the
defaults. Every error names the scenario and the place in it."""
import os

import jsonschema
import yaml

from nova_moves.harness import real_guests

SCENARIO_DIR = os.path.join(os.path.dirname(__file__), 'scenarios')

OPERATIONS = ('resize', 'confirm', 'revert', 'migrate', 'live-migrate',
              'evacuate', 'abort', 'delete', 'wait', 'drain')
FAULT_ACTIONS = ('kill', 'terminate', 'restart', 'force-down', 'force-up',
                 'set-faults', 'cut', 'heal', 'memory-alarm')
def _d(schema, text, default=None):
    """A schema with the description (and default) doc/harness.md shows."""
    schema = dict(schema, description=text)
    if default is not None:
        schema['default'] = default
    return schema


MICROVERSION = {'type': 'string', 'pattern': r'^2\.[0-9]+$'}
POSITIVE = {'type': 'number', 'exclusiveMinimum': 0}
NAME = {'type': 'string', 'pattern': r'^[A-Za-z0-9][A-Za-z0-9_.-]*$'}
INT1 = {'type': 'integer', 'minimum': 1}

_COMPUTE_OPTS = _d({
    'type': 'object', 'additionalProperties': False,
    'properties': {
        'vcpus': _d(INT1, 'VCPUs of each fake host'),
        'memory_mb': _d(INT1, 'memory of each fake host'),
        'disk_gb': _d(INT1, 'disk of each fake host'),
        'cpu_allocation_ratio': POSITIVE,
        'ram_allocation_ratio': POSITIVE,
        'disk_allocation_ratio': POSITIVE,
        'cpu_model': {'type': 'string'},
        'hypervisor_type': {'type': 'string'},
        'disk_provider': {'type': 'string'},
        'availability_zone': {'type': 'string'},
        'default_operation_seconds': _d(
            {'type': 'number', 'minimum': 0},
            'simulated seconds of every fake hypervisor operation'),
        'operation_seconds': _d({'type': 'object', 'additionalProperties': {
            'type': 'number', 'minimum': 0}},
            'simulated seconds per operation, e.g. {spawn: 0.1, '
            'migrate_disk: 0.3}'),
        'fail_operations': _d({'type': 'array', 'items': {'type': 'string'}},
                              'fake hypervisor operations that fail'),
        'live_migration_memory_mb': {'type': 'integer', 'minimum': 0},
    }}, 'options of the [compute] section of the fake compute agents')

_SELECTION = _d({
    'oneOf': [
        {'type': 'string', 'enum': ['all']},
        {'type': 'object', 'additionalProperties': False, 'minProperties': 1,
         'properties': {'first': {'type': 'integer', 'minimum': 1},
                        'name': {'type': 'string'},
                        'host': {'type': 'string'},
                        'status': {'type': 'string'}}}]},
    '`all`, or a mapping of conditions that must all hold: `first: N` '
    '(the first N that match), `name: PREFIX`, `host: HOST`, '
    '`status: STATUS` (as polled just before the phase)', 'all')

SCHEMA = {
    'type': 'object', 'additionalProperties': False,
    'required': ['name', 'phases'],
    'properties': {
        'name': _d(NAME, 'the scenario\'s name (letters, digits, `_.-`); '
                   'names the output directory and the servers'),
        'description': _d({'type': 'string'}, 'one line shown by `list`'),
        'topology': _d({
            'type': 'object', 'additionalProperties': False,
            'properties': {
                'conductors': _d(INT1, 'conductor processes: conductor1..N',
                                 1),
                'schedulers': _d(INT1, 'scheduler processes: scheduler1..N',
                                 1),
                'compute': _COMPUTE_OPTS,
                'computes': _d({'oneOf': [
                    {'type': 'integer', 'minimum': 1},
                    {'type': 'array', 'minItems': 1, 'items': {
                        'type': 'object', 'additionalProperties': False,
                        'required': ['name'],
                        'properties': {
                            'name': NAME,
                            'hosts': {'oneOf': [
                                {'type': 'integer', 'minimum': 1},
                                {'type': 'array', 'minItems': 1,
                                 'items': NAME}]},
                            'compute': _COMPUTE_OPTS}}}]},
                    'compute processes: an integer N (compute1..N, one host '
                    'each) or a list of {name, hosts, compute}, where hosts '
                    'is a count (NAME-h1..) or a list of host names', 2),
                'conf': _d({'type': 'object', 'additionalProperties': {
                    'type': 'object'}},
                    'any other option, {SECTION: {option: value}}'),
                'service_down_time': _d(INT1, 'seconds without a heartbeat '
                                        'before a service is down', 5),
                'broker': _d({'enum': ['local', 'private', 'cluster-3']},
                             '`local`: a vhost on the machine\'s RabbitMQ; '
                             '`private`: one private node (rabbit1) with '
                             'the product\'s defaults; '
                             '`cluster-3`: a private 3-node cluster with '
                             'quorum queues, nodes rabbit1..3 (faults can '
                             'kill and restart them, or raise a memory '
                             'alarm on them)', 'local'),
                'database': _d({'enum': ['sqlite', 'postgresql']},
                               '`postgresql`: a private PostgreSQL cluster '
                               '(initdb in the run\'s directory)', 'sqlite'),
                'guests': real_guests.GUESTS_SCHEMA,
                'coordination': _d({'enum': ['file', 'redis']},
                                   'tooz backend: `file` in the state dir, '
                                   'or the machine\'s redis (own namespace)',
                                   'file'),
            }}, 'the processes to start (ignored with --endpoint except for '
            'host names)'),
        'flavors': _d({'type': 'array', 'items': {
            'type': 'object', 'additionalProperties': False,
            'required': ['name', 'vcpus', 'ram'],
            'properties': {'name': NAME,
                           'vcpus': {'type': 'integer', 'minimum': 1},
                           'ram': {'type': 'integer', 'minimum': 1},
                           'disk': {'type': 'integer', 'minimum': 0}}}},
            'flavors to create: {name, vcpus, ram (MB), disk (GB, default '
            '1)}; an existing flavor of that name and size is reused'),
        'servers': _d({'type': 'array', 'items': {
            'type': 'object', 'additionalProperties': False,
            'required': ['count', 'flavor'],
            'properties': {'count': {'type': 'integer', 'minimum': 1},
                           'flavor': {'type': 'string'},
                           'name': NAME,
                           'host': {'type': 'string'},
                           'group': {'type': 'string'},
                           'image': real_guests.SERVER_IMAGE}}},
            'servers booted before the phases: {count, flavor, name (a '
            'prefix), host (optional: boot there), group (optional: a '
            'server group of server_groups to join), image (real guests: '
            'one of images)}'),
        'images': real_guests.IMAGES_SCHEMA,
        'server_groups': _d({'type': 'array', 'items': {
            'type': 'object', 'additionalProperties': False,
            'required': ['name', 'policy'],
            'properties': {'name': NAME,
                           'policy': {'enum': [
                               'affinity', 'anti-affinity', 'soft-affinity',
                               'soft-anti-affinity']},
                           'rules': {'type': 'object'}}}},
            'server groups to create before the boot: {name, policy, rules '
            '(optional, 2.64)}'),
        'boot_concurrency': _d(INT1, 'boots in flight at once', 10),
        'poll_interval': _d(POSITIVE, 'seconds between two status polls '
                            '(GET /servers/detail)', 0.1),
        'settle_timeout': _d(POSITIVE, 'seconds to wait at the end for '
                             'every server to settle', 120),
        'phases': _d({'type': 'array', 'minItems': 1, 'items': {
            'type': 'object', 'additionalProperties': False,
            'required': ['operation'],
            'properties': {
                'name': _d(NAME, 'the phase\'s name (faults refer to it)',
                           'OPERATION-N'),
                'operation': _d({'type': 'string',
                                 'enum': list(OPERATIONS)},
                                'what to do to each selected server: %s'
                                % ', '.join(OPERATIONS)),
                'servers': _SELECTION,
                'concurrency': _d(INT1, 'requests in flight at once', 10),
                'microversion': _d(MICROVERSION, 'compute API microversion '
                                   'of the requests', '2.1'),
                'params': _d({'type': 'object'}, 'operation parameters '
                             '(see below)'),
                'timeout': _d(POSITIVE, 'seconds per server to reach a '
                              'settled state', 120),
                'seconds': _d({'type': 'number', 'minimum': 0},
                              '`wait` only: how long', 1),
            }}}, 'run one after the other'),
        'faults': _d({'type': 'array', 'items': {
            'type': 'object', 'additionalProperties': False,
            'required': ['action'],
            'properties': {
                'action': _d({'type': 'string', 'enum': list(FAULT_ACTIONS)},
                             'kill (SIGKILL), terminate (SIGTERM), restart a '
                             'process; force-down / force-up a compute '
                             'service; set-faults on a fake hypervisor; '
                             'cut / heal the network path between a '
                             'compute process and the broker (a TCP proxy '
                             'resets its connections and refuses new ones; '
                             'the process runs on); memory-alarm: a private '
                             'broker node blocks every publisher as if out '
                             'of memory'),
                'at': _d({'type': 'number', 'minimum': 0},
                         'seconds after the start of `phase` (0: before '
                         'its first request)', 0),
                'phase': _d(NAME, 'the phase the fault belongs to',
                            '(the boot)'),
                'process': _d({'type': 'string'}, 'kill / terminate / '
                              'restart: api, conductorN, schedulerN or a '
                              'compute process name, or rabbitN of a private '
                              'broker; cut / heal: a compute process name; '
                              'memory-alarm: rabbitN'),
                'host': _d({'type': 'string'}, 'force-down / force-up / '
                           'set-faults: a compute host'),
                'restart_after': _d({'type': 'number', 'minimum': 0},
                                    'kill / terminate: restart the process '
                                    'this many seconds later'),
                'heal_after': _d({'type': 'number', 'minimum': 0},
                                 'cut: heal the path this many seconds '
                                 'later'),
                'lift_after': _d({'type': 'number', 'minimum': 0},
                                 'memory-alarm: lift the alarm this many '
                                 'seconds later'),
                'fail_operations': _d({'type': 'array',
                                       'items': {'type': 'string'}},
                                      'set-faults: operations to fail'),
                'operation_seconds': _d({'type': 'object'}, 'set-faults: '
                                        'simulated seconds per operation'),
            }}}, 'things to break, each at a moment of a phase'),
    }}

_PARAMS = {
    'resize': {'flavor'},
    'confirm': set(), 'revert': set(), 'delete': set(), 'abort': set(),
    'migrate': {'host', 'force', 'check'},
    'live-migrate': {'host', 'force', 'block_migration', 'abort_after',
                     'check'},
    'evacuate': {'host', 'force', 'check'},
    'wait': set(),
    # POST /os-host-drains: `servers` is ignored, the host's servers move.
    'drain': {'host', 'mode', 'target_hosts', 'force_down_if_dead', 'wait'},
}


class ScenarioError(ValueError):
    pass


def _where(path):
    out = ''
    for part in path:
        out += '[%d]' % part if isinstance(part, int) else (
            '.%s' % part if out else part)
    return out or '(top level)'


def _line_map(node, path=(), out=None):
    """{path tuple: line number} of every mapping key and sequence item
    of a composed YAML document, so that errors can name their line."""
    out = {} if out is None else out
    out.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            out[path + (key.value,)] = key.start_mark.line + 1
            _line_map(value, path + (key.value,), out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _line_map(item, path + (i,), out)
    return out


def _line_of(lines, path):
    """The line of ``path`` or of its nearest parent in the file."""
    path = tuple(path)
    while path not in lines and path:
        path = path[:-1]
    return lines.get(path)


def _format(source, problems, lines):
    """'FILE:LINE: where: message' per problem, in file order."""
    out = []
    for path, message in problems:
        line = _line_of(lines or {}, path)
        out.append((line or 0, '%s:%s %s: %s' % (
            source, '%d:' % line if line else '', _where(path), message)))
    return 'invalid scenario:\n' + '\n'.join(
        '  ' + text for _, text in sorted(out, key=lambda p: p[0]))


BUNDLED_GROUPS = ('', 'examples')


def bundled():
    """{name: path} of the scenarios shipped with the harness; the
    examples of each fault kind are named examples/NAME."""
    out = {}
    for group in BUNDLED_GROUPS:
        directory = os.path.join(SCENARIO_DIR, group)
        for f in sorted(os.listdir(directory)):
            if f.endswith(('.yaml', '.yml')):
                name = os.path.splitext(f)[0]
                out[group + '/' + name if group else name] = os.path.join(
                    directory, f)
    return out


def resolve(name_or_path):
    if os.path.exists(name_or_path):
        return name_or_path
    known = bundled()
    if name_or_path in known:
        return known[name_or_path]
    raise ScenarioError('no scenario file %r and no bundled scenario of that '
                        'name (bundled: %s)' % (name_or_path,
                                                ', '.join(known)))


def load(name_or_path):
    path = resolve(name_or_path)
    try:
        with open(path) as f:
            text = f.read()
        data = yaml.safe_load(text)
        lines = _line_map(yaml.compose(text)) if data is not None else {}
    except OSError as exc:
        raise ScenarioError('%s: not readable: %s' % (path, exc))
    except yaml.YAMLError as exc:
        raise ScenarioError('%s: not valid YAML: %s' % (path, exc))
    return validate(data, source=path, lines=lines)


def _hosts_of(spec):
    hosts = spec.get('hosts')
    if hosts is None:
        return [spec['name']]
    if isinstance(hosts, int):
        if hosts == 1:
            return [spec['name']]
        return ['%s-h%d' % (spec['name'], i + 1) for i in range(hosts)]
    return list(hosts)


def compute_processes(topology):
    """Stack compute specs: [{'name', 'hosts', 'compute'}] with the
    topology-wide compute options under each process's own."""
    computes = topology.get('computes', 2)
    if isinstance(computes, int):
        computes = [{'name': 'compute%d' % (i + 1)} for i in range(computes)]
    common = topology.get('compute', {})
    out = []
    for spec in computes:
        opts = dict(common)
        opts.update(spec.get('compute') or {})
        out.append({'name': spec['name'], 'hosts': _hosts_of(spec),
                    'compute': opts})
    return out


def validate(data, source='<scenario>', lines=None):
    """The scenario with defaults filled in, or ScenarioError naming every
    problem with its place (and its line, given the ``lines`` of
    _line_map)."""
    if not isinstance(data, dict):
        raise ScenarioError('%s: a scenario is a mapping, got %s'
                            % (source, type(data).__name__))
    validator = jsonschema.Draft7Validator(SCHEMA)
    errors = sorted(validator.iter_errors(data),
                    key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        problems = []
        for err in errors:
            message = err.message
            if err.validator == 'oneOf':
                message = '%r is not a valid value here' % (err.instance,)
            problems.append((tuple(err.absolute_path), message))
        raise ScenarioError(_format(source, problems, lines))
    data = dict(data)
    topology = dict(data.get('topology') or {})
    if topology.get('guests'):
        topology['guests'] = dict(topology['guests'])
    topology.setdefault('conductors', 1)
    topology.setdefault('schedulers', 1)
    topology.setdefault('broker', 'local')
    topology.setdefault('database', 'sqlite')
    topology.setdefault('coordination', 'file')
    topology['compute_processes'] = compute_processes(topology)
    data['topology'] = topology
    data.setdefault('flavors', [])
    data.setdefault('servers', [])
    data.setdefault('server_groups', [])
    data.setdefault('faults', [])
    data.setdefault('boot_concurrency', 10)
    data.setdefault('poll_interval', 0.1)
    data.setdefault('settle_timeout', 120)
    problems = []
    flavors = {f['name'] for f in data['flavors']}
    hosts = [h for p in topology['compute_processes'] for h in p['hosts']]
    if len(set(hosts)) != len(hosts):
        problems.append((('topology', 'computes'),
                         'host names repeat: %s' % hosts))
    data['servers'] = [dict(s) for s in data['servers']]
    real_guests.validate(data, topology, problems)
    groups = {g['name'] for g in data['server_groups']}
    for i, server in enumerate(data['servers']):
        if server.get('group') and server['group'] not in groups:
            problems.append((('servers', i, 'group'),
                             'unknown server group %r (server_groups: %s)'
                             % (server['group'], sorted(groups))))
        if server['flavor'] not in flavors:
            problems.append((('servers', i, 'flavor'),
                             'unknown flavor %r (flavors: %s)' % (
                                 server['flavor'], sorted(flavors))))
    phases = []
    for i, phase in enumerate(data['phases']):
        phase = dict(phase)
        phase.setdefault('name', '%s-%d' % (phase['operation'], i + 1))
        phase.setdefault('servers', 'all')
        phase.setdefault('concurrency', 10)
        phase.setdefault('microversion', '2.1')
        phase.setdefault('params', {})
        phase.setdefault('timeout', 120)
        unknown = set(phase['params']) - _PARAMS[phase['operation']]
        if unknown:
            problems.append((('phases', i, 'params'),
                             '%s not understood by %s (allowed: %s)' % (
                                ', '.join(sorted(unknown)),
                                phase['operation'],
                                ', '.join(sorted(_PARAMS[phase['operation']]))
                                or 'none')))
        if phase['operation'] == 'drain' and not phase['params'].get('host'):
            problems.append((('phases', i, 'params'),
                             'drain needs params.host (the host to empty)'))
        if phase['operation'] == 'resize':
            wanted = phase['params'].get('flavor')
            names = wanted if isinstance(wanted, list) else [wanted]
            for name in names:
                if name not in flavors:
                    problems.append((('phases', i, 'params', 'flavor'),
                                     'unknown flavor %r' % (name,)))
        phases.append(phase)
    names = [p['name'] for p in phases]
    if len(set(names)) != len(names):
        problems.append((('phases',), 'phase names repeat: %s' % names))
    data['phases'] = phases
    processes = {'api'} | {'conductor%d' % (i + 1) for i in range(
        topology['conductors'])} | {'scheduler%d' % (i + 1) for i in range(
            topology['schedulers'])} | {p['name'] for p in
                                        topology['compute_processes']}
    brokers = {'cluster-3': {'rabbit1', 'rabbit2', 'rabbit3'},
               'private': {'rabbit1'}}.get(topology['broker'], set())
    processes |= brokers
    for i, fault in enumerate(data['faults']):
        fault.setdefault('at', 0)
        if 'phase' in fault and fault['phase'] not in names:
            problems.append((('faults', i, 'phase'),
                             'no phase named %r (phases: %s)' % (
                                 fault['phase'], ', '.join(names))))
        if fault['action'] in ('cut', 'heal'):
            computes = {p['name'] for p in topology['compute_processes']}
            if fault.get('process') not in computes:
                problems.append((('faults', i, 'process'),
                                 '%r is not a compute process of the '
                                 'topology (%s)' % (fault.get('process'),
                                                    ', '.join(sorted(
                                                        computes)))))
        elif fault['action'] == 'memory-alarm':
            if fault.get('process') not in brokers:
                problems.append((('faults', i, 'process'),
                                 '%r is not a private broker node of the '
                                 'topology (%s)' % (fault.get('process'), (
                                     ', '.join(sorted(brokers)) or
                                     'none: broker is %s' %
                                     topology['broker']))))
        elif fault['action'] in ('kill', 'terminate', 'restart'):
            if fault.get('process') not in processes:
                problems.append((('faults', i, 'process'),
                                 '%r is not a process of the topology (%s)'
                                 % (fault.get('process'),
                                    ', '.join(sorted(processes)))))
        elif fault.get('host') not in hosts:
            problems.append((('faults', i, 'host'),
                             '%r is not a compute host of the topology (%s)'
                             % (fault.get('host'), ', '.join(hosts))))
    if problems:
        raise ScenarioError(_format(source, problems, lines))
    return data
